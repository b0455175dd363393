/* SPDX-License-Identifier: Apache-2.0 */
/* condition-test.c: device-side conditions and bounded loops: the same
 * outputs and iteration counts under EAGER, REPLAY and RECORD, with flags
 * changed by device kernels between replays; nesting; refused bodies.
 * IF/ELSE and SWITCH are in condition-test-branches.c, what bodies may be
 * in condition-test-bodies.c, conditions and loops the user's kernels decide
 * in condition-test-user.c, eager decisions in condition-test-eager.c. */
#include "config.h"
#include "condition-test.h"

#define REPLAYS 100
#define MAX_ITERS 6

/* Every device value a test producer touches, in one allocation. */
typedef struct
{
  gint32 flag;        /* the call's condition */
  guint32 pattern_at; /* position in the flag pattern */
  guint32 work;       /* guarded work done */
  gint32 value, loop_flag, target;
  guint32 setup_at; /* position in the loop targets */
  gint32 inner_flag;
  guint32 inner_work;
  guint32 sum;
  TgLoopStatus status;
} Dev;

TG_TEST_DEFINE_GPU_FIXTURE (Dev, dev, 1)

#define BIND(p, f, field)                                                              \
  g_assert_true (                                                                      \
      tg_producer_bind (p, #field, &(f)->dev->field, sizeof ((f)->dev->field), NULL))

/* Declares that @stage reads the field bound by BIND. */
#define DECLARE(p, stage, field)                                                       \
  tg_producer_declare_binding (p, stage, #field, sizeof (((Dev *)NULL)->field), NULL)

static gboolean
work_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (tgt_launch_count (tg_launch_get_stream (launch),
                                             tg_launch_get_binding (launch, "work")),
                           error);
}

static gboolean
inner_work (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (
      tgt_launch_count (tg_launch_get_stream (launch),
                        tg_launch_get_binding (launch, "inner_work")),
      error);
}

/* Loop body of the nesting test: relax, then an IF on the value's parity. */
static gboolean
nested_body (const TgLaunch *launch, gpointer data, GError **error)
{
  gint32 *inner_flag = tg_launch_get_binding (launch, "inner_flag");

  return tg_test_relax_stage (launch, data, error)
         && tg_test_launched (
             tgt_launch_parity (tg_launch_get_stream (launch),
                                tg_launch_get_binding (launch, "value"), inner_flag),
             error)
         && tg_launch_if (launch, tg_conditional (inner_flag), inner_work, NULL, error);
}

/* Loop body with a block-wide kernel: barriers inside a WHILE body. */
static gboolean
summing_body (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_relax_stage (launch, data, error)
         && tg_test_launched (
             tgt_launch_block_sum (tg_launch_get_stream (launch),
                                   tg_launch_get_binding (launch, "value"),
                                   tg_launch_get_binding (launch, "sum")),
             error);
}

static gboolean
pattern_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (
      tgt_launch_flag_pattern (
          tg_launch_get_stream (launch), tg_launch_get_binding (launch, "flag"),
          tg_launch_get_binding (launch, "pattern_at"), GPOINTER_TO_UINT (data)),
      error);
}

/* A producer whose only stage sets the call's flag from a device counter:
 * between replays the flag changes on the device, never from the host. */
static TgProducer *
pattern_producer (Fixture *f, guint32 pattern)
{
  TgProducer *p = tg_producer_new ("pattern", 0);
  guint stage = tg_producer_add_device_stage (p, "pattern", TG_STAGE_CAPTURE_SAFE,
                                              pattern_stage, GUINT_TO_POINTER (pattern),
                                              NULL, NULL);

  DECLARE (p, stage, flag);
  DECLARE (p, stage, pattern_at);
  BIND (p, f, flag);
  BIND (p, f, pattern_at);
  return p;
}

/* Runs [pattern?, producer under @condition] REPLAYS times under @policy
 * (RECORD: recorded once into a capture begun here, replayed REPLAYS times),
 * reading the device state back after each. */
static void
run_replays (Fixture *f, TgProducer *pattern, TgProducer *p, TgCondition condition,
             TgPolicy policy, Dev *out)
{
  g_autoptr (GError) error = NULL;
  cudaGraphExec_t exec = NULL;
  cudaStream_t s = f->gpu.stream;

  tg_test_device_clear (f->dev, sizeof (Dev));
  if (policy == TG_POLICY_RECORD)
    {
      cudaGraph_t graph = NULL;
      TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeThreadLocal));
      if (pattern != NULL)
        g_assert_true (
            tg_producer_run (pattern, s, policy, tg_unconditional (), &error));
      g_assert_true (tg_producer_run (p, s, policy, condition, &error));
      g_assert_no_error (error);
      TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
      TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
      TG_TEST_CUDA (cudaGraphDestroy (graph));
    }
  for (guint i = 0; i < REPLAYS; i++)
    {
      if (exec != NULL)
        TG_TEST_CUDA (cudaGraphLaunch (exec, s));
      else
        {
          if (pattern != NULL)
            g_assert_true (
                tg_producer_run (pattern, s, policy, tg_unconditional (), &error));
          g_assert_true (tg_producer_run (p, s, policy, condition, &error));
          g_assert_no_error (error);
        }
      TG_TEST_CUDA (cudaStreamSynchronize (s));
      tg_test_download (&out[i], f->dev, sizeof (Dev));
    }
  if (exec != NULL)
    TG_TEST_CUDA (cudaGraphExecDestroy (exec));
}

static const TgPolicy policies[]
    = { TG_POLICY_EAGER, TG_POLICY_REPLAY, TG_POLICY_RECORD };

static void
test_if_flag_patterns (Fixture *f, gconstpointer data)
{
  const guint32 patterns[] = { 0x00000000u, 0xFFFFFFFFu, 0xAAAAAAAAu, 0x0F0F3C5Au };
  Dev runs[G_N_ELEMENTS (policies)][REPLAYS];

  TG_TEST_REQUIRE_GPU ();
  for (guint k = 0; k < G_N_ELEMENTS (patterns); k++)
    {
      for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
        {
          g_autoptr (TgProducer) pattern = pattern_producer (f, patterns[k]);
          g_autoptr (TgProducer) p = tg_producer_new ("guarded", 0);

          guint stage = tg_producer_add_device_stage (p, "work", TG_STAGE_CAPTURE_SAFE,
                                                      work_stage, NULL, NULL, NULL);

          DECLARE (p, stage, work);
          BIND (p, f, work);
          run_replays (f, pattern, p, tg_conditional (&f->dev->flag), policies[i],
                       runs[i]);
        }
      for (guint r = 0; r < REPLAYS; r++)
        {
          guint32 expected = 0;
          for (guint j = 0; j <= r; j++)
            expected += (patterns[k] >> (j % 32)) & 1;
          for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
            g_assert_cmpuint (runs[i][r].work, ==, expected);
        }
      g_test_message ("pattern 0x%08x: %u of %d replays ran the guarded work",
                      patterns[k], runs[0][REPLAYS - 1].work, REPLAYS);
    }
}

/* Stage LOOP_STAGE of loop_producer() runs @body.  It declares what
 * tg_test_relax_stage reads; callers declare what their bodies read on top. */
#define LOOP_STAGE 1

static TgProducer *
loop_producer (Fixture *f, TgDeviceFunc body)
{
  const TgLoopSpec loop = { .flag_binding = "loop_flag",
                            .status_binding = "status",
                            .max_iters = MAX_ITERS };
  TgProducer *p = tg_producer_new ("loop", 0);
  guint setup, relax;

  setup = tg_producer_add_device_stage (p, "setup", TG_STAGE_CAPTURE_SAFE,
                                        tg_test_loop_setup_stage,
                                        GINT_TO_POINTER (MAX_ITERS), NULL, NULL);
  DECLARE (p, setup, value);
  DECLARE (p, setup, loop_flag);
  DECLARE (p, setup, target);
  DECLARE (p, setup, setup_at);
  relax = tg_producer_add_loop_stage (p, "relax", TG_STAGE_CAPTURE_SAFE, &loop, body,
                                      NULL, NULL, NULL);
  g_assert_cmpuint (relax, ==, LOOP_STAGE);
  DECLARE (p, relax, value);
  DECLARE (p, relax, target);
  BIND (p, f, value);
  BIND (p, f, loop_flag);
  BIND (p, f, target);
  BIND (p, f, setup_at);
  BIND (p, f, status);
  BIND (p, f, inner_flag);
  BIND (p, f, inner_work);
  BIND (p, f, sum);
  return p;
}

static void
test_loop_converges_before_at_after (Fixture *f, gconstpointer data)
{
  Dev runs[G_N_ELEMENTS (policies)][REPLAYS];

  TG_TEST_REQUIRE_GPU ();
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      g_autoptr (TgProducer) p = loop_producer (f, tg_test_relax_stage);
      run_replays (f, NULL, p, tg_unconditional (), policies[i], runs[i]);
    }
  for (guint r = 0; r < REPLAYS; r++)
    {
      /* Targets cycle through: before the cap, at it, past it, skipped. */
      const gint32 its[4] = { MAX_ITERS - 2, MAX_ITERS, MAX_ITERS, 0 };
      const gint32 ends[4] = { TG_LOOP_END_CONVERGED, TG_LOOP_END_CONVERGED,
                               TG_LOOP_END_CAPPED, TG_LOOP_END_SKIPPED };
      for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
        {
          g_assert_cmpint (runs[i][r].status.iterations, ==, its[r % 4]);
          g_assert_cmpint (runs[i][r].status.end, ==, ends[r % 4]);
          g_assert_cmpint (runs[i][r].value, ==, its[r % 4]);
        }
    }
}

static void
test_nesting_three_levels (Fixture *f, gconstpointer data)
{
  Dev runs[G_N_ELEMENTS (policies)][REPLAYS];

  TG_TEST_REQUIRE_GPU ();
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      g_autoptr (TgProducer) pattern = pattern_producer (f, 0xAAAAAAAAu);
      g_autoptr (TgProducer) p = loop_producer (f, nested_body);

      DECLARE (p, LOOP_STAGE, inner_flag);
      DECLARE (p, LOOP_STAGE, inner_work);
      /* IF (the call) > WHILE (the loop stage) > IF (inside its body). */
      run_replays (f, pattern, p, tg_conditional (&f->dev->flag), policies[i], runs[i]);
    }
  for (guint r = 0; r < REPLAYS; r++)
    {
      guint32 inner = 0;
      for (guint j = 0; j <= r; j++)
        if ((0xAAAAAAAAu >> (j % 32)) & 1)
          {
            /* This call's setup is the (number of calls run so far)-th. */
            guint at = 0;
            for (guint m = 0; m < j; m++)
              at += (0xAAAAAAAAu >> (m % 32)) & 1;
            gint32 t = (gint32[]){ MAX_ITERS - 2, MAX_ITERS, MAX_ITERS + 3, 0 }[at % 4];
            gint32 n = MIN (t, MAX_ITERS);
            inner += (n + 1) / 2; /* odd values among 1..n */
          }
      for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
        {
          g_assert_cmpuint (runs[i][r].inner_work, ==, inner);
          g_assert_cmpmem (&runs[i][r], sizeof (Dev), &runs[0][r], sizeof (Dev));
        }
    }
  g_test_message ("inner work after %d replays: %u", REPLAYS,
                  runs[0][REPLAYS - 1].inner_work);
}

static void
host_callback (gpointer data)
{
}

static void
test_loop_block_kernel (Fixture *f, gconstpointer data)
{
  Dev runs[G_N_ELEMENTS (policies)][REPLAYS];

  TG_TEST_REQUIRE_GPU ();
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      g_autoptr (TgProducer) p = loop_producer (f, summing_body);

      DECLARE (p, LOOP_STAGE, sum);
      run_replays (f, NULL, p, tg_unconditional (), policies[i], runs[i]);
    }
  for (guint r = 0, sum = 0; r < REPLAYS; r++)
    {
      const gint32 its[4] = { MAX_ITERS - 2, MAX_ITERS, MAX_ITERS, 0 };
      for (gint32 v = 1; v <= its[r % 4]; v++)
        sum += 128 * v + 127 * 128 / 2;
      for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
        g_assert_cmpuint (runs[i][r].sum, ==, sum);
    }
}

static gboolean
host_stage (TgHostOps *ops, gpointer data, GError **error)
{
  return tg_host_ops_enqueue (ops, host_callback, NULL, error);
}

static gboolean
host_function_body (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (
      cudaLaunchHostFunc (tg_launch_get_stream (launch), host_callback, NULL), error);
}

static gboolean
allocating_body (const TgLaunch *launch, gpointer data, GError **error)
{
  void *scratch = NULL;
  cudaStream_t s = tg_launch_get_stream (launch);

  return tg_test_launched (cudaMallocAsync (&scratch, 256, s), error)
         && tg_test_launched (cudaFreeAsync (scratch, s), error);
}

static gboolean
guarded_body_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_launch_if (launch, tg_conditional (tg_launch_get_binding (launch, "flag")),
                       data, NULL, error);
}

static void
test_refused_bodies (Fixture *f, gconstpointer data)
{
  TgDeviceFunc bodies[] = { host_function_body, allocating_body };

  TG_TEST_REQUIRE_GPU ();
  {
    /* A HOST stage inside a conditional call. */
    g_autoptr (TgProducer) p = tg_producer_new ("host-in-call", 0);
    tg_producer_add_host_stage (p, "host", TG_STAGE_CAPTURE_SAFE, host_stage, NULL,
                                NULL, NULL);
    tg_test_expect_refusal (p, f->gpu.stream, TG_POLICY_AUTO,
                            tg_conditional (&f->dev->flag), TG_CAPTURE_ERROR,
                            TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  }
  {
    /* A HOST stage guarded by a stage condition. */
    g_autoptr (TgProducer) p = tg_producer_new ("guarded-host", 0);
    tg_producer_add_host_stage (p, "host", TG_STAGE_CAPTURE_SAFE, host_stage, NULL,
                                NULL, NULL);
    tg_producer_set_stage_condition (p, 0, "flag", NULL);
    BIND (p, f, flag);
    tg_test_expect_refusal (p, f->gpu.stream, TG_POLICY_AUTO, tg_unconditional (),
                            TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  }
  for (guint i = 0; i < G_N_ELEMENTS (bodies); i++)
    {
      /* A host function or an allocation inside a condition, then a loop. */
      g_autoptr (TgProducer) in_if = tg_producer_new ("in-if", 0);
      g_autoptr (TgProducer) in_loop = loop_producer (f, bodies[i]);
      g_autoptr (GError) error = NULL;

      guint stage
          = tg_producer_add_device_stage (in_if, "guarded", TG_STAGE_CAPTURE_SAFE,
                                          guarded_body_stage, bodies[i], NULL, NULL);

      DECLARE (in_if, stage, flag);
      BIND (in_if, f, flag);
      tg_test_expect_refusal (in_if, f->gpu.stream, TG_POLICY_AUTO, tg_unconditional (),
                              TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
      tg_test_expect_refusal (in_loop, f->gpu.stream, TG_POLICY_AUTO,
                              tg_unconditional (), TG_CAPTURE_ERROR,
                              TG_CAPTURE_ERROR_NOT_CAPTURABLE);
      /* Eagerly the same producers run. */
      tg_test_device_clear (f->dev, sizeof (Dev));
      g_assert_true (tg_producer_run (in_loop, f->gpu.stream, TG_POLICY_EAGER,
                                      tg_unconditional (), &error));
      g_assert_no_error (error);
      TG_TEST_CUDA (cudaStreamSynchronize (f->gpu.stream));
    }
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  TG_TEST_ADD_FIXTURE ("/condition/if/flag-patterns-same-under-every-policy", NULL,
                       test_if_flag_patterns);
  TG_TEST_ADD_FIXTURE ("/condition/loop/converges-before-at-and-after-cap", NULL,
                       test_loop_converges_before_at_after);
  TG_TEST_ADD_FIXTURE ("/condition/loop/block-wide-kernel-in-body", NULL,
                       test_loop_block_kernel);
  TG_TEST_ADD_FIXTURE ("/condition/nesting/three-levels", NULL,
                       test_nesting_three_levels);
  TG_TEST_ADD_FIXTURE ("/condition/refusals/forbidden-bodies", NULL,
                       test_refused_bodies);
  tgc_add_branch_tests ();
  tgc_add_body_tests ();
  tgc_add_user_tests ();
  tgc_add_eager_tests ();
  tgc_add_broken_tests ();
  return g_test_run ();
}
