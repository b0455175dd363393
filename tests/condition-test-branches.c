/* SPDX-License-Identifier: Apache-2.0 */
/* condition-test-branches.c: IF/ELSE and SWITCH, in a stage and as stages,
 * nested with a bounded loop: each step's device state is compared byte for
 * byte with one host model under EAGER, REPLAY and RECORD, with the flags
 * and indices changed on the device between replays.  Bodies a capture
 * refuses leave the caller's capture as it was. */
#include "config.h"
#include "condition-test.h"

#define N 256 /* elements of the buffer the bodies mix */
#define MAX_ITERS 5
#define THEN_K 3u
#define ELSE_K 5u
#define LOOP_K 11u
static const guint32 case_k[] = { 7u, 9u, 13u };
#define N_CASES G_N_ELEMENTS (case_k)

/* Every device value a test producer touches, in one allocation. */
typedef struct
{
  gint32 ctl;       /* the IF/ELSE flag or the SWITCH index */
  gint32 inner;     /* the flag of the IF/ELSE nested in a case */
  gint32 left;      /* iterations the nested loop still wants */
  gint32 loop_flag; /* the nested loop's flag */
  TgLoopStatus status;
  guint32 count; /* kernels of the caller's capture */
  guint32 buf[N];
} Dev;

TG_TEST_DEFINE_GPU_FIXTURE (Dev, dev, 1)

static const TgPolicy policies[]
    = { TG_POLICY_EAGER, TG_POLICY_REPLAY, TG_POLICY_RECORD };

/* ------------------------------------------------------------------------ */
/* Bodies                                                                    */

static gboolean
mix (const TgLaunch *launch, guint32 k, GError **error)
{
  return tg_test_launched (tgt_launch_mix (tg_launch_get_stream (launch),
                                           tg_launch_get_binding (launch, "buf"), N, k),
                           error);
}

static gboolean
mix_then (const TgLaunch *launch, gpointer data, GError **error)
{
  return mix (launch, THEN_K, error);
}

static gboolean
mix_else (const TgLaunch *launch, gpointer data, GError **error)
{
  return mix (launch, ELSE_K, error);
}

static gboolean
mix_case0 (const TgLaunch *launch, gpointer data, GError **error)
{
  return mix (launch, case_k[0], error);
}

static gboolean
mix_case1 (const TgLaunch *launch, gpointer data, GError **error)
{
  return mix (launch, case_k[1], error);
}

static gboolean
mix_case2 (const TgLaunch *launch, gpointer data, GError **error)
{
  return mix (launch, case_k[2], error);
}

static gboolean
loop_body (const TgLaunch *launch, gpointer data, GError **error)
{
  return mix (launch, LOOP_K, error)
         && tg_test_launched (
             tgc_launch_countdown (tg_launch_get_stream (launch),
                                   tg_launch_get_binding (launch, "left"),
                                   tg_launch_get_binding (launch, "loop_flag")),
             error);
}

static gboolean
loop_branch (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_launch_while (launch, tg_launch_get_binding (launch, "loop_flag"),
                          MAX_ITERS, tg_launch_get_binding (launch, "status"),
                          loop_body, data, error);
}

/* SWITCH > IF/ELSE > WHILE: case 1 of the nesting tests. */
static gboolean
nested_case (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_launch_if_else (launch,
                            tg_conditional (tg_launch_get_binding (launch, "inner")),
                            loop_branch, mix_else, data, error);
}

static void
host_noop (gpointer data)
{
}

static gboolean
host_function_case (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (
      cudaLaunchHostFunc (tg_launch_get_stream (launch), host_noop, NULL), error);
}

static const TgDeviceFunc plain_cases[N_CASES] = { mix_case0, mix_case1, mix_case2 };
static const TgDeviceFunc nested_cases[N_CASES] = { mix_case0, nested_case, mix_case2 };
static const TgDeviceFunc host_cases[N_CASES]
    = { mix_case0, host_function_case, mix_case2 };

static gboolean
if_else_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_launch_if_else (launch,
                            tg_conditional (tg_launch_get_binding (launch, "ctl")),
                            mix_then, mix_else, data, error);
}

static gboolean
switch_stage (const TgLaunch *launch, gpointer cases, GError **error)
{
  return tg_launch_switch (launch, tg_launch_get_binding (launch, "ctl"), N_CASES,
                           cases, NULL, error);
}

/* Declares for @stage every field of Dev the bodies use, and binds it. */
static void
declare_and_bind (Fixture *f, TgProducer *p, guint stage)
{
  const struct
  {
    const char *name;
    gsize offset, size;
  } uses[] = {
    { "ctl", G_STRUCT_OFFSET (Dev, ctl), sizeof (gint32) },
    { "inner", G_STRUCT_OFFSET (Dev, inner), sizeof (gint32) },
    { "left", G_STRUCT_OFFSET (Dev, left), sizeof (gint32) },
    { "loop_flag", G_STRUCT_OFFSET (Dev, loop_flag), sizeof (gint32) },
    { "status", G_STRUCT_OFFSET (Dev, status), sizeof (TgLoopStatus) },
    { "buf", G_STRUCT_OFFSET (Dev, buf), N * sizeof (guint32) },
  };
  g_autoptr (GError) error = NULL;

  for (guint u = 0; u < G_N_ELEMENTS (uses); u++)
    {
      tg_producer_declare_binding (p, stage, uses[u].name, uses[u].size, NULL);
      g_assert_true (tg_producer_bind (
          p, uses[u].name, (guint8 *)f->dev + uses[u].offset, uses[u].size, &error));
      g_assert_no_error (error);
    }
}

/* ------------------------------------------------------------------------ */
/* IF/ELSE, SWITCH and nesting under the three policies                      */

typedef enum
{
  KIND_IF_ELSE,
  KIND_SWITCH,
  KIND_NESTED, /* SWITCH whose case 1 is IF/ELSE, whose then-branch loops */
} Kind;

typedef struct
{
  const char *path;
  Kind kind;
  gboolean stage_level; /* a stage condition + else, or a switch stage */
} Shape;

static const Shape shapes[] = {
  { "/condition/if-else/in-stage/policies-agree", KIND_IF_ELSE, FALSE },
  { "/condition/if-else/stage-else/policies-agree", KIND_IF_ELSE, TRUE },
  { "/condition/switch/in-stage/policies-agree", KIND_SWITCH, FALSE },
  { "/condition/switch/stage/policies-agree", KIND_SWITCH, TRUE },
  { "/condition/nesting/switch-if-else-while/in-stage", KIND_NESTED, FALSE },
  { "/condition/nesting/switch-if-else-while/stage", KIND_NESTED, TRUE },
};

/* What the test writes on the device before a call or replay. */
typedef struct
{
  gint32 ctl, inner, left;
} Step;

static const Step if_steps[] = {
  { .ctl = 1 }, { .ctl = 0 }, { .ctl = 0 }, { .ctl = 1 }, { .ctl = 1 }, { .ctl = 0 },
};
/* -1 and N_CASES select no case: nothing runs. */
static const Step switch_steps[] = {
  { .ctl = 0 }, { .ctl = 1 }, { .ctl = 2 }, { .ctl = -1 },
  { .ctl = 3 }, { .ctl = 2 }, { .ctl = 0 }, { .ctl = 1 },
};
/* The loop converges, is capped (7 > MAX_ITERS), skipped (0 left); the IF's
 * else branch runs; other cases, and none. */
static const Step nested_steps[] = {
  { 1, 1, 3 }, { 1, 0, 2 },  { 1, 1, 7 }, { 0, 1, 2 }, { 1, 1, 0 },
  { 2, 0, 0 }, { -1, 1, 3 }, { 1, 1, 5 }, { 3, 1, 1 },
};

static TgProducer *
shape_producer (Fixture *f, const Shape *shape)
{
  TgProducer *p = tg_producer_new (shape->path, 0);
  gpointer cases = (gpointer)(shape->kind == KIND_NESTED ? nested_cases : plain_cases);
  guint stage;

  if (shape->kind == KIND_IF_ELSE && !shape->stage_level)
    stage = tg_producer_add_device_stage (p, "if-else", TG_STAGE_CAPTURE_SAFE,
                                          if_else_stage, NULL, NULL, NULL);
  else if (shape->kind == KIND_IF_ELSE)
    {
      stage = tg_producer_add_device_stage (p, "then", TG_STAGE_CAPTURE_SAFE, mix_then,
                                            NULL, NULL, NULL);
      tg_producer_set_stage_condition (p, stage, "ctl", NULL);
      tg_producer_set_stage_else (p, stage, mix_else, NULL);
    }
  else if (!shape->stage_level)
    stage = tg_producer_add_device_stage (p, "switch", TG_STAGE_CAPTURE_SAFE,
                                          switch_stage, cases, NULL, NULL);
  else
    {
      TgSwitchSpec sw = { .index_binding = "ctl", .n_cases = N_CASES, .cases = cases };
      stage = tg_producer_add_switch_stage (p, "switch", TG_STAGE_CAPTURE_SAFE, &sw,
                                            NULL, NULL, NULL);
    }
  declare_and_bind (f, p, stage);
  return p;
}

/* The host model of the kernels. */
static void
host_mix (guint32 *buf, guint32 k)
{
  for (guint32 i = 0; i < N; i++)
    buf[i] = buf[i] * k + ((buf[i] >> 7) ^ i);
}

static void
expect_loop (Dev *e)
{
  e->status.iterations = 0;
  e->status.end = e->loop_flag != 0 ? TG_LOOP_END_NONE : TG_LOOP_END_SKIPPED;
  while (e->status.end == TG_LOOP_END_NONE)
    {
      host_mix (e->buf, LOOP_K);
      e->left -= 1;
      e->loop_flag = e->left > 0;
      e->status.iterations++;
      e->status.end = e->loop_flag == 0                   ? TG_LOOP_END_CONVERGED
                      : e->status.iterations >= MAX_ITERS ? TG_LOOP_END_CAPPED
                                                          : TG_LOOP_END_NONE;
    }
}

static void
expect_step (Kind kind, Dev *e)
{
  if (kind == KIND_IF_ELSE)
    host_mix (e->buf, e->ctl != 0 ? THEN_K : ELSE_K);
  else if (e->ctl < 0 || e->ctl >= (gint32)N_CASES)
    return;
  else if (kind == KIND_SWITCH || e->ctl != 1)
    host_mix (e->buf, case_k[e->ctl]);
  else if (e->inner == 0)
    host_mix (e->buf, ELSE_K);
  else
    expect_loop (e);
}

/* Writes @step into the model and, enqueued on @s, into the device. */
static void
write_step (cudaStream_t s, Dev *dev, Dev *e, const Step *step)
{
  e->ctl = step->ctl;
  e->inner = step->inner;
  e->left = step->left;
  e->loop_flag = step->left > 0;
  TG_TEST_CUDA (tgt_launch_set (s, &dev->ctl, e->ctl));
  TG_TEST_CUDA (tgt_launch_set (s, &dev->inner, e->inner));
  TG_TEST_CUDA (tgt_launch_set (s, &dev->left, e->left));
  TG_TEST_CUDA (tgt_launch_set (s, &dev->loop_flag, e->loop_flag));
}

/* RECORD: records @p once into a capture begun on @s. */
static cudaGraphExec_t
record_once (TgProducer *p, cudaStream_t s)
{
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;

  TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeGlobal));
  g_assert_true (tg_producer_run (p, s, TG_POLICY_RECORD, tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  return exec;
}

/* Runs @steps under @policy (RECORD: replays of the caller's graph), checks
 * the whole device state against the model after each, and leaves the last
 * state in @last. */
static void
run_steps (Fixture *f, const Shape *shape, TgPolicy policy, const Step *steps,
           guint n_steps, Dev *last)
{
  g_autoptr (TgProducer) p = shape_producer (f, shape);
  g_autoptr (GError) error = NULL;
  cudaStream_t s = f->gpu.stream;
  cudaGraphExec_t exec = NULL;
  Dev e = { 0 };

  for (guint32 i = 0; i < N; i++)
    e.buf[i] = tgt_hash (i, 0x5EED);
  tg_test_upload (f->dev, &e, sizeof e);
  if (policy == TG_POLICY_RECORD)
    exec = record_once (p, s);
  for (guint i = 0; i < n_steps; i++)
    {
      write_step (s, f->dev, &e, &steps[i]);
      if (exec != NULL)
        TG_TEST_CUDA (cudaGraphLaunch (exec, s));
      else
        g_assert_true (tg_producer_run (p, s, policy, tg_unconditional (), &error));
      g_assert_no_error (error);
      TG_TEST_CUDA (cudaStreamSynchronize (s));
      tg_test_download (last, f->dev, sizeof *last);
      expect_step (shape->kind, &e);
      g_assert_cmpmem (last, sizeof *last, &e, sizeof e);
    }
  if (policy == TG_POLICY_REPLAY)
    {
      TgRunnerStats stats;

      /* One graph, steered on the device: never captured again. */
      tg_producer_get_runner_stats (p, &stats);
      g_assert_cmpuint (stats.n_captures, ==, 1);
      g_assert_cmpuint (stats.n_replays, ==, n_steps);
    }
  if (exec != NULL)
    TG_TEST_CUDA (cudaGraphExecDestroy (exec));
}

static void
test_shape (Fixture *f, gconstpointer data)
{
  const Shape *shape = data;
  const Step *steps[] = { if_steps, switch_steps, nested_steps };
  const guint n_steps[] = { G_N_ELEMENTS (if_steps), G_N_ELEMENTS (switch_steps),
                            G_N_ELEMENTS (nested_steps) };
  Dev last[G_N_ELEMENTS (policies)];

  TG_TEST_REQUIRE_GPU ();
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    run_steps (f, shape, policies[i], steps[shape->kind], n_steps[shape->kind],
               &last[i]);
  for (guint i = 1; i < G_N_ELEMENTS (policies); i++)
    g_assert_cmpmem (&last[i], sizeof (Dev), &last[0], sizeof (Dev));
}

/* ------------------------------------------------------------------------ */
/* Bodies a capture refuses                                                  */

/* Records @p into a capture begun on the fixture's stream that holds one
 * kernel: refused NOT_CAPTURABLE, the capture still active with exactly its
 * nodes, and still able to run. */
static void
expect_not_capturable (Fixture *f, TgProducer *p)
{
  cudaStream_t s = f->gpu.stream;
  enum cudaStreamCaptureStatus status;
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  gsize before;
  Dev d;

  tg_test_device_clear (f->dev, sizeof (Dev));
  TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeGlobal));
  TG_TEST_CUDA (tgt_launch_count (s, &f->dev->count));
  TG_TEST_CUDA (cudaStreamGetCaptureInfo (s, &status, NULL, &graph, NULL, NULL, NULL));
  g_assert_cmpint (status, ==, cudaStreamCaptureStatusActive);
  before = tg_test_graph_n_nodes (graph);
  g_assert_false (
      tg_producer_run (p, s, TG_POLICY_RECORD, tg_unconditional (), &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  g_test_message ("refused as expected: %s", error->message);
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, before);
  g_assert_true (tg_stream_is_capturing (s));
  TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  TG_TEST_CUDA (cudaGraphLaunch (exec, s));
  TG_TEST_CUDA (cudaStreamSynchronize (s));
  tg_test_download (&d, f->dev, sizeof d);
  g_assert_cmpuint (d.count, ==, 1);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
}

static gboolean
host_stage (TgHostOps *ops, gpointer data, GError **error)
{
  return tg_host_ops_enqueue (ops, host_noop, NULL, error);
}

static void
test_refuse_guarded_host_stage (Fixture *f, gconstpointer data)
{
  g_autoptr (TgProducer) p = NULL;
  guint stage;

  TG_TEST_REQUIRE_GPU ();
  /* An IF/ELSE stage, then a HOST stage under the same flag, whose body
   * would be a host node inside an IF node. */
  p = tg_producer_new ("guarded-host", 0);
  stage = tg_producer_add_device_stage (p, "then", TG_STAGE_CAPTURE_SAFE, mix_then,
                                        NULL, NULL, NULL);
  tg_producer_set_stage_condition (p, stage, "ctl", NULL);
  tg_producer_set_stage_else (p, stage, mix_else, NULL);
  declare_and_bind (f, p, stage);
  stage = tg_producer_add_host_stage (p, "host", TG_STAGE_CAPTURE_SAFE, host_stage,
                                      NULL, NULL, NULL);
  tg_producer_set_stage_condition (p, stage, "ctl", NULL);
  expect_not_capturable (f, p);
}

static void
test_refuse_host_function_in_case (Fixture *f, gconstpointer data)
{
  g_autoptr (TgProducer) p = NULL;
  guint stage;

  TG_TEST_REQUIRE_GPU ();
  p = tg_producer_new ("host-in-case", 0);
  TgSwitchSpec sw = { .index_binding = "ctl", .n_cases = N_CASES, .cases = host_cases };
  stage = tg_producer_add_switch_stage (p, "switch", TG_STAGE_CAPTURE_SAFE, &sw, NULL,
                                        NULL, NULL);
  declare_and_bind (f, p, stage);
  expect_not_capturable (f, p);
}

void
tgc_add_branch_tests (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (shapes); i++)
    TG_TEST_ADD_FIXTURE (shapes[i].path, &shapes[i], test_shape);
  TG_TEST_ADD_FIXTURE ("/condition/refusals/guarded-host-stage-under-record", NULL,
                       test_refuse_guarded_host_stage);
  TG_TEST_ADD_FIXTURE ("/condition/refusals/host-function-in-switch-case", NULL,
                       test_refuse_host_function_in_case);
}
