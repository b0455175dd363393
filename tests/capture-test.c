/* SPDX-License-Identifier: Apache-2.0 */
/* capture-test.c: TrackGen never breaks a capture it does not own.  A
 * foreign capture (as torch.cuda.graph makes, in global mode by default) is
 * in progress on one thread while TrackGen releases, instantiates and reads
 * back on this thread or another; the capture must end valid and replay
 * right. */
#include "config.h"
#include "tg-test.h"

#define N TG_TEST_COUNTED_N
#define REAPER_ROUNDS 200

typedef TgTestGpu Fixture;

static const struct
{
  const char *name;
  enum cudaStreamCaptureMode mode;
} modes[] = {
  { "global", cudaStreamCaptureModeGlobal },
  { "thread-local", cudaStreamCaptureModeThreadLocal },
  { "relaxed", cudaStreamCaptureModeRelaxed },
};

/* A producer that owns everything a release frees: a pinned readback buffer
 * (an eager conditional ran), own executable graphs and their private and
 * side streams (REPLAY ran, with and without a condition). */
static TgProducer *
loaded_producer (TgTestCounted *c, cudaStream_t stream, const gint32 *flag)
{
  TgProducer *p = tg_test_counted_new (c, TG_STAGE_CAPTURE_SAFE);
  g_autoptr (GError) error = NULL;

  g_assert_true (
      tg_producer_run (p, stream, TG_POLICY_EAGER, tg_conditional (flag), &error));
  g_assert_true (
      tg_producer_run (p, stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  g_assert_true (
      tg_producer_run (p, stream, TG_POLICY_REPLAY, tg_conditional (flag), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
  return p;
}

/* ------------------------------------------------------------------------ */
/* The foreign capture: begun, one kernel node, ended, replayed, checked.   */

typedef struct
{
  cudaStream_t stream;
  guint32 *counter; /* device: counts the kernel node per replay */
} Foreign;

static void
foreign_begin (Foreign *f, cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
  f->stream = stream;
  TG_TEST_CUDA (cudaStreamBeginCapture (stream, mode));
  TG_TEST_CUDA (tgt_launch_count (stream, f->counter));
}

/* The capture must end with cudaSuccess, instantiate, and count once per
 * replay: 3 replays, one more kernel node recorded after TrackGen's work. */
static void
foreign_end (Foreign *f)
{
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  guint32 count = 0;

  TG_TEST_CUDA (tgt_launch_count (f->stream, f->counter));
  TG_TEST_CUDA (cudaStreamEndCapture (f->stream, &graph));
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  for (guint r = 0; r < 3; r++)
    TG_TEST_CUDA (cudaGraphLaunch (exec, f->stream));
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  tg_test_download (&count, f->counter, sizeof count);
  g_assert_cmpuint (count, ==, 6);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_test_device_clear (f->counter, sizeof (guint32));
}

/* ------------------------------------------------------------------------ */
/* TrackGen's work during the foreign capture, on another thread or this one */

typedef enum
{
  WORK_RELEASE,      /* drop the last reference of a loaded producer */
  WORK_FIRST_REPLAY, /* a producer's first REPLAY call: capture + instantiate */
  WORK_EAGER_IF,     /* an eager conditional: pinned readback + sync */
  WORK_REAPER,       /* destroy a graph that retained a producer: the reaper frees it */
  WORK_SEED_STATE,   /* a new seed state (allocates, uploads, waits), read, freed */
} Work;

typedef struct
{
  Work work;
  TgProducer *producer; /* transfer full for WORK_RELEASE */
  cudaStream_t stream;  /* an idle stream of TrackGen's calls */
  const gint32 *flag;
  cudaGraph_t retained_graph; /* WORK_REAPER */
  cudaGraphExec_t retained_exec;
} Job;

static gpointer
do_work (gpointer data)
{
  Job *job = data;
  g_autoptr (GError) error = NULL;

  switch (job->work)
    {
    case WORK_RELEASE:
      g_clear_pointer (&job->producer, tg_producer_unref);
      break;
    case WORK_FIRST_REPLAY:
      g_assert_true (tg_producer_run (job->producer, job->stream, TG_POLICY_REPLAY,
                                      tg_unconditional (), &error));
      break;
    case WORK_EAGER_IF:
      g_assert_true (tg_producer_run (job->producer, job->stream, TG_POLICY_EAGER,
                                      tg_conditional (job->flag), &error));
      break;
    case WORK_SEED_STATE:
      {
        TgSeedState *state = tg_seed_state_new (0, 64, 7, &error);
        guint64 seeds[64];

        g_assert_no_error (error);
        g_assert_true (tg_seed_state_read (state, TG_STREAM_AUTO, seeds, NULL, &error));
        g_assert_cmpuint (seeds[63], ==, tg_env_seed (7, 63));
        tg_seed_state_unref (state);
        break;
      }
    case WORK_REAPER:
      {
        /* The test's own destroys must not break the capture either. */
        enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
        TG_TEST_CUDA (cudaThreadExchangeStreamCaptureMode (&mode));
        TG_TEST_CUDA (cudaGraphExecDestroy (job->retained_exec));
        TG_TEST_CUDA (cudaGraphDestroy (job->retained_graph));
        TG_TEST_CUDA (cudaThreadExchangeStreamCaptureMode (&mode));
        g_assert_true (tg_release_wait (10 * G_USEC_PER_SEC));
        break;
      }
    }
  g_assert_no_error (error);
  return NULL;
}

/* A graph that recorded @p through a registered scope (so it retains it),
 * instantiated; the caller's reference is dropped. */
static void
retaining_graph (TgProducer *p, cudaStream_t stream, Job *job)
{
  g_autoptr (GError) error = NULL;
  TgCaptureScope *scope;

  TG_TEST_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeGlobal));
  scope = tg_capture_scope_begin (stream, cudaStreamCaptureModeGlobal, &error);
  g_assert_no_error (error);
  g_assert_true (
      tg_producer_run (p, TG_STREAM_AUTO, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_no_error (error);
  g_assert_true (tg_capture_scope_end (scope, &error));
  tg_capture_scope_free (scope);
  TG_TEST_CUDA (cudaStreamEndCapture (stream, &job->retained_graph));
  TG_TEST_CUDA (cudaGraphInstantiate (&job->retained_exec, job->retained_graph, 0));
  TG_TEST_CUDA (cudaGraphLaunch (job->retained_exec, stream));
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
  tg_producer_unref (p);
}

typedef struct
{
  Work work;
  gboolean same_thread;
  guint rounds;
} Case;

static void
test_foreign (Fixture *fx, gconstpointer data)
{
  const Case *k = data;
  cudaStream_t idle, other;
  gint32 *flag;
  Foreign f = { 0 };

  TG_TEST_REQUIRE_GPU ();
  idle = tg_test_stream_new ();
  other = tg_test_stream_new ();
  flag = tg_test_device_alloc (sizeof (gint32));
  f.counter = tg_test_device_alloc (sizeof (guint32));
  TG_TEST_CUDA (tgt_launch_set (idle, flag, 1));
  TG_TEST_CUDA (cudaStreamSynchronize (idle));

  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    for (guint round = 0; round < k->rounds; round++)
      {
        TgTestCounted c;
        Job job = { k->work, NULL, idle, flag, NULL, NULL };

        tg_test_counted_init (&c, 40 + round);
        switch (k->work)
          {
          case WORK_RELEASE:
            job.producer = loaded_producer (&c, idle, flag);
            break;
          case WORK_REAPER:
            retaining_graph (tg_test_counted_new (&c, TG_STAGE_CAPTURE_SAFE), other,
                             &job);
            break;
          default:
            job.producer = tg_test_counted_new (&c, TG_STAGE_CAPTURE_SAFE);
            break;
          }
        tg_test_device_clear (c.out, N * sizeof (guint32));

        foreign_begin (&f, fx->stream, modes[m].mode);
        if (k->same_thread)
          do_work (&job);
        else
          g_thread_join (g_thread_new ("trackgen-work", do_work, &job));
        foreign_end (&f);

        /* TrackGen's own work ran, and right. */
        TG_TEST_CUDA (cudaDeviceSynchronize ());
        if (k->work == WORK_FIRST_REPLAY || k->work == WORK_EAGER_IF)
          tg_test_counted_expect (&c, 40 + round);
        g_clear_pointer (&job.producer, tg_producer_unref);
        tg_test_counted_clear (&c);
      }
  g_test_message ("%s, %s: %u rounds in each of %u modes, every capture valid",
                  k->same_thread ? "same thread" : "other thread",
                  k->work == WORK_RELEASE        ? "release"
                  : k->work == WORK_FIRST_REPLAY ? "first replay"
                  : k->work == WORK_EAGER_IF     ? "eager conditional"
                  : k->work == WORK_SEED_STATE   ? "new seed state"
                                                 : "reaper",
                  k->rounds, (guint)G_N_ELEMENTS (modes));
  tg_test_device_free (flag);
  tg_test_device_free (f.counter);
  TG_TEST_CUDA (cudaStreamDestroy (idle));
  TG_TEST_CUDA (cudaStreamDestroy (other));
}

int
main (int argc, char **argv)
{
  static const Case release_other = { WORK_RELEASE, FALSE, 1 };
  static const Case replay_other = { WORK_FIRST_REPLAY, FALSE, 1 };
  static const Case eager_if_other = { WORK_EAGER_IF, FALSE, 1 };
  static const Case reaper_other = { WORK_REAPER, FALSE, REAPER_ROUNDS };
  static const Case release_same = { WORK_RELEASE, TRUE, 1 };
  static const Case replay_same = { WORK_FIRST_REPLAY, TRUE, 1 };
  static const Case eager_if_same = { WORK_EAGER_IF, TRUE, 1 };
  static const Case seeds_other = { WORK_SEED_STATE, FALSE, 1 };
  static const Case seeds_same = { WORK_SEED_STATE, TRUE, 1 };

  tg_test_init (&argc, &argv);
  g_test_add ("/capture/foreign/other-thread/release", Fixture, &release_other,
              tg_test_gpu_set_up, test_foreign, tg_test_gpu_tear_down);
  g_test_add ("/capture/foreign/other-thread/first-replay", Fixture, &replay_other,
              tg_test_gpu_set_up, test_foreign, tg_test_gpu_tear_down);
  g_test_add ("/capture/foreign/other-thread/eager-conditional", Fixture,
              &eager_if_other, tg_test_gpu_set_up, test_foreign, tg_test_gpu_tear_down);
  g_test_add ("/capture/foreign/other-thread/reaper", Fixture, &reaper_other,
              tg_test_gpu_set_up, test_foreign, tg_test_gpu_tear_down);
  g_test_add ("/capture/foreign/same-thread/release", Fixture, &release_same,
              tg_test_gpu_set_up, test_foreign, tg_test_gpu_tear_down);
  g_test_add ("/capture/foreign/same-thread/first-replay", Fixture, &replay_same,
              tg_test_gpu_set_up, test_foreign, tg_test_gpu_tear_down);
  g_test_add ("/capture/foreign/same-thread/eager-conditional", Fixture, &eager_if_same,
              tg_test_gpu_set_up, test_foreign, tg_test_gpu_tear_down);
  g_test_add ("/capture/foreign/other-thread/new-seed-state", Fixture, &seeds_other,
              tg_test_gpu_set_up, test_foreign, tg_test_gpu_tear_down);
  g_test_add ("/capture/foreign/same-thread/new-seed-state", Fixture, &seeds_same,
              tg_test_gpu_set_up, test_foreign, tg_test_gpu_tear_down);
  return g_test_run ();
}
