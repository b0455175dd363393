/* SPDX-License-Identifier: Apache-2.0 */
/* condition-test-eager.c: eager decisions.  Eagerly the kernel that decides
 * (TrackGen's or the user's) stores the value in mapped host memory and the
 * host waits for it (lib/exec/decision.c).  A decision waits for the work
 * enqueued before it, short (seen while spinning) or long (past the spin:
 * the wait blocks); one nobody set fails, naming what should have set it,
 * and the producer's next decisions work; decisions made on another thread
 * leave a global-mode capture of this one intact; and a condition or a loop
 * asked for where there is none drops what the kernel writes through it. */
#include "config.h"
#include "condition-test.h"

#include <string.h>

#define N 256
#define N_STEPS 8
#define MAX_ITERS 5
#define TARGET 3 /* iterations of the loop, below its cap */
#define THEN_K 3u
#define ELSE_K 5u
#define LOOP_K 11u

static const gint32 steps[N_STEPS] = { 1, 0, 1, 1, 0, 0, 1, 0 };

typedef struct
{
  gint32 steps[N_STEPS];
  guint32 at;  /* position in the steps */
  gint32 seen; /* the last decision made */
  gint32 value, target;
  TgLoopStatus status;
  guint32 buf[N];
} Dev;

TG_TEST_DEFINE_GPU_FIXTURE (Dev, dev, 1)

#define DEV(launch) ((Dev *)tg_launch_get_binding (launch, "dev"))

static gboolean
mix (const TgLaunch *launch, guint32 k, GError **error)
{
  return tg_test_launched (
      tgt_launch_mix (tg_launch_get_stream (launch), DEV (launch)->buf, N, k), error);
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
decide (const TgLaunch *launch, gpointer data, GError **error)
{
  Dev *d = DEV (launch);

  return tg_test_launched (tgc_launch_decide (tg_launch_get_stream (launch),
                                              tg_launch_get_condition (launch),
                                              d->steps, N_STEPS, &d->at, &d->seen),
                           error);
}

static gboolean
loop_body (const TgLaunch *launch, gpointer data, GError **error)
{
  Dev *d = DEV (launch);

  return mix (launch, LOOP_K, error)
         && tg_test_launched (tgc_launch_relax_next (tg_launch_get_stream (launch),
                                                     tg_launch_get_loop (launch),
                                                     &d->value, &d->target),
                              error);
}

static gboolean
loop (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_launch_while_by (launch, NULL, MAX_ITERS, &DEV (launch)->status, loop_body,
                             NULL, error);
}

/* What a stage does: decide an IF whose then-body loops (the good case), or
 * set nothing, in an IF's decide function or in a loop's body. */
typedef enum
{
  GOOD,
  SILENT_DECIDE,
  SILENT_BODY,
} Behaviour;

static gboolean
silent (const TgLaunch *launch, gpointer data, GError **error)
{
  return TRUE;
}

static gboolean
stage (const TgLaunch *launch, gpointer data, GError **error)
{
  Dev *d = DEV (launch);

  switch (*(const Behaviour *)data)
    {
    case SILENT_DECIDE:
      return tg_launch_if_by (launch, silent, mix_then, NULL, NULL, error);
    case SILENT_BODY:
      return tg_launch_while_by (launch, NULL, MAX_ITERS, &d->status, mix_then, NULL,
                                 error);
    case GOOD:
    default:
      return tg_test_launched (
                 tgt_launch_set (tg_launch_get_stream (launch), &d->value, 0), error)
             && tg_launch_if_by (launch, decide, loop, mix_else, NULL, error);
    }
}

static TgProducer *
producer_new (Fixture *f, const Behaviour *behaviour)
{
  TgProducer *p = tg_producer_new ("eager", 0);
  guint i = tg_producer_add_device_stage (p, "stage", TG_STAGE_CAPTURE_SAFE, stage,
                                          (gpointer)behaviour, NULL, NULL);

  tg_producer_declare_binding (p, i, "dev", sizeof (Dev), NULL);
  g_assert_true (tg_producer_bind (p, "dev", f->dev, sizeof (Dev), NULL));
  return p;
}

static void
run_eager (TgProducer *p, cudaStream_t s)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (tg_producer_run (p, s, TG_POLICY_EAGER, tg_unconditional (), &error));
  g_assert_no_error (error);
}

/* The model of a GOOD call. */
static void
host_mix (Dev *e, guint32 k)
{
  for (guint32 i = 0; i < N; i++)
    e->buf[i] = e->buf[i] * k + ((e->buf[i] >> 7) ^ i);
}

static void
host_call (Dev *e)
{
  e->value = 0;
  e->seen = e->steps[e->at++ % N_STEPS];
  if (e->seen == 0)
    {
      host_mix (e, ELSE_K);
      return;
    }
  e->status = (TgLoopStatus){ 0, TG_LOOP_END_NONE };
  while (e->status.end == TG_LOOP_END_NONE)
    {
      host_mix (e, LOOP_K);
      e->value += 1;
      e->status.iterations++;
      e->status.end = e->value >= e->target               ? TG_LOOP_END_CONVERGED
                      : e->status.iterations >= MAX_ITERS ? TG_LOOP_END_CAPPED
                                                          : TG_LOOP_END_NONE;
    }
}

static void
model_init (Fixture *f, Dev *e)
{
  *e = (Dev){ .target = TARGET };
  memcpy (e->steps, steps, sizeof steps);
  for (guint32 i = 0; i < N; i++)
    e->buf[i] = tgt_hash (i, 0xEA6E);
  tg_test_upload (f->dev, e, sizeof *e);
}

static void
expect_device (Fixture *f, const Dev *e)
{
  Dev got;

  TG_TEST_CUDA (cudaStreamSynchronize (f->gpu.stream));
  tg_test_download (&got, f->dev, sizeof got);
  g_assert_cmpmem (&got, sizeof got, e, sizeof *e);
}

/* Each decision is written late by a kernel enqueued before the call: after
 * a short wait the spin sees it, after a long one the wait blocks. */
static void
test_after_long_work (Fixture *f, gconstpointer data)
{
  const guint32 delays_us[] = { 20, 3000, 0, 3000, 20, 500 };
  const Behaviour good = GOOD;
  g_autoptr (TgProducer) p = NULL;
  Dev e;

  TG_TEST_REQUIRE_GPU ();
  p = producer_new (f, &good);
  model_init (f, &e);
  for (guint i = 0; i < G_N_ELEMENTS (delays_us); i++)
    {
      gint32 v = i % 2 == 0;

      TG_TEST_CUDA (tgc_launch_late_set (f->gpu.stream, &f->dev->steps[e.at % N_STEPS],
                                         v, delays_us[i]));
      e.steps[e.at % N_STEPS] = v;
      run_eager (p, f->gpu.stream);
      host_call (&e);
    }
  expect_device (f, &e);
}

static void
test_unset_fails (Fixture *f, gconstpointer data)
{
  TG_TEST_REQUIRE_GPU ();
  for (Behaviour b = SILENT_DECIDE; b <= SILENT_BODY; b++)
    {
      Behaviour now = b;
      g_autoptr (TgProducer) p = producer_new (f, &now);
      g_autoptr (GError) error = NULL;
      Dev e;

      model_init (f, &e);
      g_assert_false (tg_producer_run (p, f->gpu.stream, TG_POLICY_EAGER,
                                       tg_unconditional (), &error));
      g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED);
      g_assert_nonnull (strstr (error->message,
                                b == SILENT_BODY ? "loop's body" : "decide function"));
      g_test_message ("failed as expected: %s", error->message);
      /* The loop reset its status and ran its body once; the IF ran nothing. */
      if (b == SILENT_BODY)
        host_mix (&e, THEN_K);
      /* Then the same producer decides, nested, again. */
      now = GOOD;
      for (guint i = 0; i < 3; i++)
        {
          run_eager (p, f->gpu.stream);
          host_call (&e);
        }
      expect_device (f, &e);
    }
}

typedef struct
{
  Fixture *f;
  cudaStream_t stream;
} Job;

static gpointer
eager_thread (gpointer data)
{
  const Behaviour good = GOOD;
  Job *job = data;
  TgProducer *p = producer_new (job->f, &good);
  enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;

  /* The first decision allocates the producer's mapped memory. */
  for (guint i = 0; i < 4; i++)
    run_eager (p, job->stream);
  tg_producer_unref (p);
  /* The test's own synchronization must not break the capture either. */
  TG_TEST_CUDA (cudaThreadExchangeStreamCaptureMode (&mode));
  TG_TEST_CUDA (cudaStreamSynchronize (job->stream));
  TG_TEST_CUDA (cudaThreadExchangeStreamCaptureMode (&mode));
  return NULL;
}

static void
test_beside_foreign_capture (Fixture *f, gconstpointer data)
{
  guint32 *counter = NULL;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  Job job = { f, NULL };
  Dev e;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (sizeof (guint32));
  job.stream = tg_test_stream_new ();
  model_init (f, &e);
  TG_TEST_CUDA (cudaStreamBeginCapture (f->gpu.stream, cudaStreamCaptureModeGlobal));
  TG_TEST_CUDA (tgt_launch_count (f->gpu.stream, counter));
  g_thread_join (g_thread_new ("eager-decisions", eager_thread, &job));
  TG_TEST_CUDA (tgt_launch_count (f->gpu.stream, counter));
  TG_TEST_CUDA (cudaStreamEndCapture (f->gpu.stream, &graph));
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  TG_TEST_CUDA (cudaGraphLaunch (exec, f->gpu.stream));
  TG_TEST_CUDA (cudaStreamSynchronize (f->gpu.stream));
  g_assert_cmpuint (tg_test_read_u32 (counter), ==, 2);
  for (guint i = 0; i < 4; i++)
    host_call (&e);
  expect_device (f, &e);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  TG_TEST_CUDA (cudaStreamDestroy (job.stream));
  tg_test_device_free (counter);
}

static gboolean
misused_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  Dev *d = DEV (launch);
  cudaStream_t s = tg_launch_get_stream (launch);

  /* Neither a decide function nor a loop's body: both values drop what the
   * kernels write through them, after a critical. */
  return tg_test_launched (tgc_launch_decide (s, tg_launch_get_condition (launch),
                                              d->steps, N_STEPS, &d->at, &d->seen),
                           error)
         && tg_test_launched (tgc_launch_relax_next (s, tg_launch_get_loop (launch),
                                                     &d->value, &d->target),
                              error);
}

static void
test_misuse (Fixture *f, gconstpointer data)
{
  g_autoptr (TgProducer) p = NULL;
  guint i;
  Dev e;

  TG_TEST_REQUIRE_GPU ();
  p = tg_producer_new ("misused", 0);
  i = tg_producer_add_device_stage (p, "misused", TG_STAGE_CAPTURE_SAFE, misused_stage,
                                    NULL, NULL, NULL);
  tg_producer_declare_binding (p, i, "dev", sizeof (Dev), NULL);
  g_assert_true (tg_producer_bind (p, "dev", f->dev, sizeof (Dev), NULL));
  model_init (f, &e);
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "*asked for a condition outside the decide function*");
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "*asked for a loop outside the body*");
  run_eager (p, f->gpu.stream);
  g_test_assert_expected_messages ();
  e.seen = e.steps[e.at++ % N_STEPS];
  e.value += 1;
  expect_device (f, &e);
}

void
tgc_add_eager_tests (void)
{
  TG_TEST_ADD_FIXTURE ("/condition/eager/waits-for-long-work-ahead", NULL,
                       test_after_long_work);
  TG_TEST_ADD_FIXTURE ("/condition/eager/unset-decision-fails", NULL, test_unset_fails);
  TG_TEST_ADD_FIXTURE ("/condition/eager/beside-foreign-global-capture", NULL,
                       test_beside_foreign_capture);
  TG_TEST_ADD_FIXTURE ("/condition/eager/no-condition-or-loop-here", NULL, test_misuse);
}
