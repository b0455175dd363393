/* SPDX-License-Identifier: Apache-2.0 */
/* record-test-passes.c: how often RECORD calls each stage function, in
 * every shape of producer: once, but for a function whose own work holds a
 * condition and the body of a loop its body decides (doc/capture-rules.md,
 * "How often a stage function runs under RECORD"); and that the recorded
 * graph, launched, runs each function's work where the shape says. */
#include "record-test.h"

/* The stage functions; each counts its work's runs on the device. */
enum
{
  F_A,
  F_B,
  F_THEN,
  F_ELSE,
  F_CASE0, /* F_CASE0 + i: case i of the switch */
  F_CASE1,
  F_CASE2,
  F_BODY,    /* the body of a loop driven by its flag */
  F_DECIDED, /* the body of a loop its body decides */
  F_INNER,   /* a stage whose own work holds an IF (tg_launch_if()) */
  F_HOST,    /* a HOST stage */
  N_FUNCS,
  F_INNER_BODY = N_FUNCS, /* F_INNER's own IF body: not a stage function */
  N_COUNTS,
};

#define N_CASES 3
#define DECIDED_ITERS 3

typedef struct
{
  guint32 count[N_COUNTS];
  gint32 flag;  /* the call's condition, and F_INNER's own IF */
  gint32 cond;  /* the stage condition "cond" */
  gint32 index; /* the switch's index */
  gint32 go;    /* the flag-driven loop's flag */
  TgLoopStatus status;
} Dev;

TG_TEST_DEFINE_GPU_FIXTURE (Dev, dev, 1)

typedef enum
{
  SHAPE_PLAIN,
  SHAPE_CALL_CONDITION,
  SHAPE_ELSE,
  SHAPE_SWITCH,
  SHAPE_LOOP,
  SHAPE_DECIDED_LOOP,
  SHAPE_INNER,
  SHAPE_INNER_GUARDED,
  SHAPE_INNER_PLAIN,
  SHAPE_HOST,
} Shape;

static const char *const shape_names[]
    = { "plain", "call-condition", "else", "switch", "loop",
        "decided-loop", "inner-if", "inner-if-guarded", "inner-if-plain", "host" };

/* Host side: calls of each function, and the passes they ran in (bit p). */
static gint calls[N_FUNCS];
static guint passes[N_FUNCS];
static gint host_runs;

static Dev *
dev_of (const TgLaunch *launch)
{
  return tg_launch_get_binding (launch, "dev");
}

static void
called (const TgLaunch *launch, guint f)
{
  calls[f]++;
  passes[f] |= 1u << tg_launch_get_record_pass (launch);
}

static gboolean
count_work (const TgLaunch *launch, guint slot, GError **error)
{
  return tg_test_launched (
      tgt_launch_count (tg_launch_get_stream (launch), &dev_of (launch)->count[slot]),
      error);
}

/* A stage function @data (its F_ value; a switch's cases add the case). */
static gboolean
counting (const TgLaunch *launch, gpointer data, GError **error)
{
  guint f = GPOINTER_TO_UINT (data);

  if (f == F_CASE0)
    f += (guint)tg_launch_get_case (launch);
  called (launch, f);
  return count_work (launch, f, error);
}

/* F_ELSE: the else branch, given the stage's data. */
static gboolean
otherwise (const TgLaunch *launch, gpointer data, GError **error)
{
  called (launch, F_ELSE);
  return count_work (launch, F_ELSE, error);
}

/* F_A when it arms the flag-driven loop: go := 1. */
static gboolean
arming (const TgLaunch *launch, gpointer data, GError **error)
{
  return counting (launch, data, error)
         && tg_test_launched (
             tgt_launch_set (tg_launch_get_stream (launch), &dev_of (launch)->go, 1),
             error);
}

/* F_BODY: one iteration, then go := 0. */
static gboolean
flag_body (const TgLaunch *launch, gpointer data, GError **error)
{
  return counting (launch, data, error)
         && tg_test_launched (
             tgt_launch_set (tg_launch_get_stream (launch), &dev_of (launch)->go, 0),
             error);
}

/* F_DECIDED: counts, and goes on until the count is a multiple of
 * DECIDED_ITERS. */
static gboolean
decided_body (const TgLaunch *launch, gpointer data, GError **error)
{
  called (launch, F_DECIDED);
  return tg_test_launched (tgr_launch_count_next (tg_launch_get_stream (launch),
                                                  tg_launch_get_loop (launch),
                                                  &dev_of (launch)->count[F_DECIDED],
                                                  DECIDED_ITERS),
                           error);
}

static gboolean
inner_body (const TgLaunch *launch, gpointer data, GError **error)
{
  return count_work (launch, F_INNER_BODY, error);
}

/* F_INNER: counts, and makes an IF of its own on "flag". */
static gboolean
inner (const TgLaunch *launch, gpointer data, GError **error)
{
  return counting (launch, data, error)
         && tg_launch_if (launch, tg_conditional (&dev_of (launch)->flag), inner_body,
                          NULL, error);
}

static void
host_run (gpointer data)
{
  g_atomic_int_inc (&host_runs);
}

static gboolean
host_stage (TgHostOps *ops, gpointer data, GError **error)
{
  called (tg_host_ops_get_launch (ops), F_HOST);
  return tg_host_ops_enqueue (ops, host_run, NULL, error);
}

static guint
add (TgProducer *p, const char *name, TgDeviceFunc func, guint f)
{
  guint stage = tg_producer_add_device_stage (p, name, TG_STAGE_CAPTURE_SAFE, func,
                                              GUINT_TO_POINTER (f), NULL, NULL);

  tg_producer_declare_binding (p, stage, "dev", sizeof (Dev), NULL);
  return stage;
}

static void
add_guarded (TgProducer *p, const char *name, TgDeviceFunc func, guint f)
{
  tg_producer_set_stage_condition (p, add (p, name, func, f), "cond", NULL);
}

static TgProducer *
shape_producer (Fixture *fx, Shape shape)
{
  static const TgDeviceFunc cases[N_CASES] = { counting, counting, counting };
  const TgSwitchSpec sw = { .index_binding = "index", .n_cases = N_CASES,
                            .cases = cases };
  const TgLoopSpec flag_loop
      = { .flag_binding = "go", .status_binding = "status", .max_iters = 8 };
  const TgLoopSpec decided_loop
      = { .status_binding = "status", .max_iters = 8, .set_by_body = TRUE };
  TgProducer *p = tg_producer_new (shape_names[shape], 0);
  g_autoptr (GError) error = NULL;
  guint stage;

  switch (shape)
    {
    case SHAPE_PLAIN:
      add (p, "a", counting, F_A);
      break;
    case SHAPE_CALL_CONDITION:
      add (p, "a", counting, F_A);
      add (p, "b", counting, F_B);
      break;
    case SHAPE_ELSE:
      stage = add (p, "then", counting, F_THEN);
      tg_producer_set_stage_condition (p, stage, "cond", NULL);
      tg_producer_set_stage_else (p, stage, otherwise, NULL);
      break;
    case SHAPE_SWITCH:
      stage = tg_producer_add_switch_stage (p, "switch", TG_STAGE_CAPTURE_SAFE, &sw,
                                            GUINT_TO_POINTER (F_CASE0), NULL, NULL);
      tg_producer_declare_binding (p, stage, "dev", sizeof (Dev), NULL);
      break;
    case SHAPE_LOOP:
      add (p, "arm", arming, F_A);
      stage = tg_producer_add_loop_stage (p, "loop", TG_STAGE_CAPTURE_SAFE, &flag_loop,
                                          flag_body, GUINT_TO_POINTER (F_BODY), NULL,
                                          NULL);
      tg_producer_declare_binding (p, stage, "dev", sizeof (Dev), NULL);
      break;
    case SHAPE_DECIDED_LOOP:
      stage = tg_producer_add_loop_stage (p, "loop", TG_STAGE_CAPTURE_SAFE,
                                          &decided_loop, decided_body, NULL, NULL, NULL);
      tg_producer_declare_binding (p, stage, "dev", sizeof (Dev), NULL);
      break;
    case SHAPE_INNER:
      add (p, "inner", inner, F_INNER);
      add_guarded (p, "b", counting, F_B);
      break;
    case SHAPE_INNER_GUARDED:
      add_guarded (p, "inner", inner, F_INNER);
      add (p, "b", counting, F_B);
      break;
    case SHAPE_INNER_PLAIN:
      add (p, "a", counting, F_A);
      add (p, "inner", inner, F_INNER);
      break;
    case SHAPE_HOST:
      tg_producer_add_host_stage (p, "host", TG_STAGE_CAPTURE_SAFE, host_stage, NULL,
                                  NULL, NULL);
      add_guarded (p, "then", counting, F_THEN);
      break;
    }
  g_assert_true (tg_producer_bind (p, "dev", fx->dev, sizeof (Dev), &error));
  g_assert_true (tg_producer_bind (p, "cond", &fx->dev->cond, sizeof (gint32), &error));
  g_assert_true (
      tg_producer_bind (p, "index", &fx->dev->index, sizeof (gint32), &error));
  g_assert_true (tg_producer_bind (p, "go", &fx->dev->go, sizeof (gint32), &error));
  g_assert_true (
      tg_producer_bind (p, "status", &fx->dev->status, sizeof (TgLoopStatus), &error));
  g_assert_no_error (error);
  return p;
}

/* What one launch of the recorded graph adds to each count, for the inputs
 * @on (flag, cond = 1, index 1) or not (flag, cond = 0, index out of
 * range). */
static void
expect_launch (Shape shape, gboolean on, guint32 *count, gint *host)
{
  switch (shape)
    {
    case SHAPE_PLAIN:
      count[F_A]++;
      break;
    case SHAPE_CALL_CONDITION:
      count[F_A] += on;
      count[F_B] += on;
      break;
    case SHAPE_ELSE:
      count[on ? F_THEN : F_ELSE]++;
      break;
    case SHAPE_SWITCH:
      count[F_CASE1] += on;
      break;
    case SHAPE_LOOP:
      count[F_A]++;
      count[F_BODY]++;
      break;
    case SHAPE_DECIDED_LOOP:
      count[F_DECIDED] += DECIDED_ITERS;
      break;
    case SHAPE_INNER:
      count[F_INNER]++;
      count[F_INNER_BODY] += on;
      count[F_B] += on;
      break;
    case SHAPE_INNER_GUARDED:
      count[F_INNER] += on;
      count[F_INNER_BODY] += on;
      count[F_B]++;
      break;
    case SHAPE_INNER_PLAIN:
      count[F_A]++;
      count[F_INNER]++;
      count[F_INNER_BODY] += on;
      break;
    case SHAPE_HOST:
      (*host)++;
      count[F_THEN] += on;
      break;
    }
}

/* The functions called a second time, in RECORD's second pass: a stage
 * with its own IF, the body of a loop it decides, and, in a producer
 * without conditions of TrackGen's, every stage. */
static gboolean
called_again (Shape shape, guint f)
{
  return (shape == SHAPE_DECIDED_LOOP && f == F_DECIDED)
         || ((shape == SHAPE_INNER || shape == SHAPE_INNER_GUARDED) && f == F_INNER)
         || shape == SHAPE_INNER_PLAIN;
}

static void
set_inputs (Fixture *fx, gboolean on)
{
  const gint32 flag = on, index = on ? 1 : N_CASES;

  tg_test_upload (&fx->dev->flag, &flag, sizeof flag);
  tg_test_upload (&fx->dev->cond, &flag, sizeof flag);
  tg_test_upload (&fx->dev->index, &index, sizeof index);
}

static void
test_record_passes (Fixture *fx, gconstpointer data)
{
  Shape shape = GPOINTER_TO_UINT (data);
  TgCondition condition;
  guint32 expect[N_COUNTS] = { 0 }, got[N_COUNTS];
  gint expect_host = 0;
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  TgProducer *p;

  TG_TEST_REQUIRE_GPU ();
  condition = shape == SHAPE_CALL_CONDITION ? tg_conditional (&fx->dev->flag)
                                            : tg_unconditional ();
  memset (calls, 0, sizeof calls);
  memset (passes, 0, sizeof passes);
  g_atomic_int_set (&host_runs, 0);
  p = shape_producer (fx, shape);

  TG_TEST_CUDA (cudaStreamBeginCapture (fx->gpu.stream, cudaStreamCaptureModeGlobal));
  g_assert_true (
      tg_producer_run (p, fx->gpu.stream, TG_POLICY_RECORD, condition, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (fx->gpu.stream, &graph));

  for (guint f = 0; f < N_FUNCS; f++)
    {
      gboolean again = called_again (shape, f);

      /* Called functions only: each once, in the trial, but those the
       * second pass must call again. */
      if (calls[f] == 0)
        continue;
      g_test_message ("%s: function %u called %d times, passes 0x%x", shape_names[shape],
                      f, calls[f], passes[f]);
      g_assert_cmpint (calls[f], ==, again ? 2 : 1);
      g_assert_cmpuint (passes[f], ==, again ? 0x6 : 0x2);
    }

  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  for (guint round = 0; round < 4; round++)
    {
      gboolean on = round % 2 == 0;

      set_inputs (fx, on);
      TG_TEST_CUDA (cudaGraphLaunch (exec, fx->gpu.stream));
      TG_TEST_CUDA (cudaStreamSynchronize (fx->gpu.stream));
      expect_launch (shape, on, expect, &expect_host);
    }
  tg_test_download (got, fx->dev->count, sizeof got);
  for (guint i = 0; i < N_COUNTS; i++)
    g_assert_cmpuint (got[i], ==, expect[i]);
  g_assert_cmpint (g_atomic_int_get (&host_runs), ==, expect_host);

  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_producer_unref (p);
}

/* A stage with an IF of its own, so that RECORD calls it again in its
 * second pass, where it fails. */
static gboolean
fails_when_again (const TgLaunch *launch, gpointer data, GError **error)
{
  if (tg_launch_get_record_pass (launch) == 2)
    {
      g_set_error_literal (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                           "the second call fails");
      return FALSE;
    }
  return inner (launch, data, error);
}

/* A second pass that fails wraps its cause in a capture error whose fields,
 * not only its message, name the producer and the stage (the message alone
 * did until 0.5). */
static void
test_second_pass_failure_fields (Fixture *fx, gconstpointer data)
{
  g_autoptr (TgProducer) p = tg_producer_new ("again", 0);
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  guint stage;

  TG_TEST_REQUIRE_GPU ();
  stage = tg_producer_add_device_stage (p, "fails", TG_STAGE_CAPTURE_SAFE,
                                        fails_when_again, GUINT_TO_POINTER (F_INNER),
                                        NULL, NULL);
  tg_producer_declare_binding (p, stage, "dev", sizeof (Dev), NULL);
  g_assert_true (tg_producer_bind (p, "dev", fx->dev, sizeof (Dev), &error));
  TG_TEST_CUDA (cudaStreamBeginCapture (fx->gpu.stream, cudaStreamCaptureModeGlobal));
  g_assert_false (tg_producer_run (p, fx->gpu.stream, TG_POLICY_RECORD,
                                   tg_unconditional (), &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "the second call fails"));
  g_assert_cmpstr (tg_error_get_producer (error), ==, "again");
  g_assert_cmpstr (tg_error_get_stage (error), ==, "fails");
  TG_TEST_CUDA (cudaStreamEndCapture (fx->gpu.stream, &graph));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
}

void
tgr_add_pass_tests (void)
{
  for (guint s = 0; s < G_N_ELEMENTS (shape_names); s++)
    {
      g_autofree char *path
          = g_strdup_printf ("/record/passes/%s", shape_names[s]);

      TG_TEST_ADD_FIXTURE (path, GUINT_TO_POINTER (s), test_record_passes);
    }
  TG_TEST_ADD_FIXTURE ("/record/passes/second-pass-failure-has-fields", NULL,
                       test_second_pass_failure_fields);
}
