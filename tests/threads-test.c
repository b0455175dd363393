/* SPDX-License-Identifier: Apache-2.0 */
/* threads-test.c: calls from several threads.  8 threads x 1000 calls
 * (TG_THREADS_CALLS), each thread with its own producer and stream,
 * policies mixed, every output checked; threads calling one producer wait
 * for each other; a thread that exits inside a call releases the producer.
 * Misuse from several threads at once: threads-test-misuse.c.  The threads
 * race for real: .ci/run runs this program under ThreadSanitizer, and a few
 * times more. */
#include "config.h"
#include "threads-test.h"

#define N_THREADS 8
#define N_CALLS 1000
#define N 1024

typedef TgTestGpu Fixture;

typedef struct
{
  guint index;
  guint n_calls;
  guint n_checked;
  TgTestChain *chain;
  cudaStream_t stream;
  GError *error;
} Worker;

static gboolean
call (TgTestChain *c, cudaStream_t stream, guint i, GError **error)
{
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  gboolean ok;

  switch (i % 3)
    {
    case 0:
      return tg_producer_run (c->producer, stream, TG_POLICY_AUTO, tg_unconditional (),
                              error);
    case 1:
      return tg_producer_run (c->producer, stream, TG_POLICY_EAGER, tg_unconditional (),
                              error);
    default:
      /* RECORD into a capture of this thread's own, then launch it. */
      TG_TEST_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal));
      ok = tg_producer_run (c->producer, stream, TG_POLICY_RECORD, tg_unconditional (),
                            error);
      TG_TEST_CUDA (cudaStreamEndCapture (stream, &graph));
      if (ok)
        {
          TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
          TG_TEST_CUDA (cudaGraphLaunch (exec, stream));
          TG_TEST_CUDA (cudaGraphExecDestroy (exec));
        }
      TG_TEST_CUDA (cudaGraphDestroy (graph));
      return ok;
    }
}

/* make sanitize sets TG_THREADS_CALLS lower: under racecheck the 1000 calls
 * of make check did not finish in minutes. */
static guint
n_calls (void)
{
  g_autoptr (GError) error = NULL;
  const char *value = g_getenv ("TG_THREADS_CALLS");
  guint64 n = N_CALLS;

  /* The bound keeps the total of checked calls in a guint. */
  if (value != NULL)
    g_ascii_string_to_unsigned (value, 10, 1, G_MAXUINT / N_THREADS, &n, &error);
  g_assert_no_error (error);
  return n;
}

static gpointer
worker_main (gpointer data)
{
  Worker *w = data;
  TgTestChain *c = w->chain;
  cudaStream_t stream = w->stream;
  g_autofree guint32 *out = g_new (guint32, N), *expected = g_new (guint32, N);

  for (guint i = 0; i < w->n_calls && w->error == NULL; i++)
    {
      guint32 param = w->index * 100003u + i, k = i * 7u + w->index;

      /* Stream-ordered copies only: other threads are capturing, and a
       * device-wide synchronization would break their captures. */
      TG_TEST_CUDA (cudaMemcpyAsync (c->param, &param, sizeof param,
                                     cudaMemcpyHostToDevice, stream));
      TG_TEST_CUDA (
          cudaMemcpyAsync (c->k, &k, sizeof k, cudaMemcpyHostToDevice, stream));
      TG_TEST_CUDA (cudaStreamSynchronize (stream));
      if (!call (c, stream, i, &w->error))
        break;
      TG_TEST_CUDA (cudaMemcpyAsync (out, c->b, sizeof (guint32) * N,
                                     cudaMemcpyDeviceToHost, stream));
      TG_TEST_CUDA (cudaStreamSynchronize (stream));
      tg_test_chain_expect (N, param, k, expected);
      if (memcmp (out, expected, sizeof (guint32) * N) != 0)
        g_set_error (&w->error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                     "thread %u, call %u (%s): wrong output", w->index, i,
                     i % 3 == 0   ? "auto"
                     : i % 3 == 1 ? "eager"
                                  : "record");
      else
        w->n_checked++;
    }
  return NULL;
}

static void
test_threads (void)
{
  Worker workers[N_THREADS];
  GThread *threads[N_THREADS];
  TgLiveObjects live;
  guint total = 0, calls = n_calls ();

  TG_TEST_REQUIRE_GPU ();
  tg_test_live_snapshot (&live);
  /* Buffers are made and freed here, while no thread captures: allocation
   * and freeing synchronize the device, which a capture in progress refuses. */
  for (guint t = 0; t < N_THREADS; t++)
    {
      g_autofree char *name = g_strdup_printf ("thread-%u", t);
      workers[t] = (Worker){ t,
                             calls,
                             0,
                             tg_test_chain_new (name, N, FALSE, TG_STAGE_NONE),
                             tg_test_stream_new (),
                             NULL };
    }
  for (guint t = 0; t < N_THREADS; t++)
    threads[t] = g_thread_new ("worker", worker_main, &workers[t]);
  for (guint t = 0; t < N_THREADS; t++)
    {
      g_thread_join (threads[t]);
      g_assert_no_error (workers[t].error);
      g_assert_cmpuint (workers[t].n_checked, ==, workers[t].n_calls);
      total += workers[t].n_checked;
      TG_TEST_CUDA (cudaStreamDestroy (workers[t].stream));
      tg_test_chain_free (workers[t].chain);
    }
  g_test_message ("%u calls checked on %d threads", total, N_THREADS);
  tg_test_assert_no_leaks (&live);
}

/* ------------------------------------------------------------------------ */
/* Threads calling one producer                                              */

typedef struct
{
  TgProducer *producer;
  cudaStream_t stream;
  guint n_calls;
  gulong stage_us;
  gint in_stage;
  gint max_in_stage;
  guint n_runs; /* not atomic: the producer's exclusion protects it */
} Concurrent;

static gboolean
exclusive_host_stage (TgHostOps *ops, gpointer data, GError **error)
{
  Concurrent *c = data;
  gint now = g_atomic_int_add (&c->in_stage, 1) + 1;

  if (now > c->max_in_stage)
    c->max_in_stage = now;
  c->n_runs++;
  if (c->stage_us > 0)
    g_usleep (c->stage_us);
  g_atomic_int_add (&c->in_stage, -1);
  return TRUE;
}

static gpointer
concurrent_caller (gpointer data)
{
  Concurrent *c = data;
  GError *error = NULL;

  for (guint i = 0; i < c->n_calls; i++)
    if (!tg_producer_run (c->producer, c->stream, TG_POLICY_EAGER, tg_unconditional (),
                          &error))
      return error;
  return NULL;
}

/* Four threads call one producer: slow calls (each waits for the others) and
 * then many short ones (the uncontended path and the waiting one interleave). */
static void
test_concurrent_call_waits (Fixture *f, gconstpointer data)
{
  const struct
  {
    guint n_calls;
    gulong stage_us;
  } phases[] = { { 5, 20 * 1000 }, { 5000, 0 } };
  GThread *threads[4];

  TG_TEST_REQUIRE_GPU ();
  for (guint ph = 0; ph < G_N_ELEMENTS (phases); ph++)
    {
      Concurrent c = { 0 };

      c.producer = tg_producer_new ("shared", 0);
      c.stream = f->stream;
      c.n_calls = phases[ph].n_calls;
      c.stage_us = phases[ph].stage_us;
      tg_producer_add_host_stage (c.producer, "exclusive", TG_STAGE_NONE,
                                  exclusive_host_stage, &c, NULL, NULL);
      for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
        threads[i] = g_thread_new ("caller", concurrent_caller, &c);
      for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
        {
          GError *error = g_thread_join (threads[i]);
          g_assert_no_error (error);
        }
      /* Calls from several threads waited for each other. */
      g_assert_cmpint (c.max_in_stage, ==, 1);
      g_assert_cmpuint (c.n_runs, ==, G_N_ELEMENTS (threads) * c.n_calls);
      tg_producer_unref (c.producer);
    }
}

/* ------------------------------------------------------------------------ */
/* A thread that exits inside a call releases the producer.                 */

typedef struct
{
  TgProducer *producer;
  cudaStream_t stream;
  gint exits; /* how many calls still end their thread */
  gint runs;
} Exiting;

static gboolean
exiting_stage (TgHostOps *ops, gpointer data, GError **error)
{
  Exiting *e = data;

  g_atomic_int_inc (&e->runs);
  if (g_atomic_int_dec_and_test (&e->exits))
    g_thread_exit (NULL);
  return TRUE;
}

static gpointer
run_exiting (gpointer data)
{
  Exiting *e = data;

  (void)tg_producer_run (e->producer, e->stream, TG_POLICY_EAGER, tg_unconditional (),
                         NULL);
  return NULL;
}

static void
test_thread_exit_inside_call (Fixture *f, gconstpointer data)
{
  Exiting e = { NULL, NULL, 1, 0 };
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  e.producer = tg_producer_new ("exiting", 0);
  e.stream = f->stream;
  tg_producer_add_host_stage (e.producer, "exit", TG_STAGE_NONE, exiting_stage, &e,
                              NULL, NULL);
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "*thread exited inside a call of producer 'exiting'*");
  g_thread_join (g_thread_new ("trackgen-exits", run_exiting, &e));
  g_test_assert_expected_messages ();
  g_assert_cmpint (e.runs, ==, 1);

  /* Neither locked for good nor taken for busy by a later thread. */
  g_thread_join (g_thread_new ("trackgen-after", run_exiting, &e));
  g_assert_cmpint (e.runs, ==, 2);
  g_assert_true (tg_producer_run (e.producer, f->stream, TG_POLICY_EAGER,
                                  tg_unconditional (), &error));
  g_assert_no_error (error);
  g_assert_cmpint (e.runs, ==, 3);
  tg_producer_unref (e.producer);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  g_test_add_func ("/threads/calls/8-threads-mixed-policies", test_threads);
  TG_TEST_ADD_GPU ("/threads/calls/concurrent-calls-wait", test_concurrent_call_waits);
  TG_TEST_ADD_GPU ("/threads/calls/exit-inside-call", test_thread_exit_inside_call);
  threads_test_add_misuse ();
  threads_test_add_rebind ();
  return g_test_run ();
}
