/* SPDX-License-Identifier: Apache-2.0 */
/* interop-test.c: registered foreign captures, producers retained by the
 * graphs that recorded them, and waiting for their releases (what a graph
 * holds, and who holds it: interop-test-retention.c). */
#include "config.h"
#include "interop-test.h"

#include <string.h>
#include <sys/prctl.h>

#define N 2048
#define REPLAYS 100

/* Watches a producer's end: its stage data is freed when it is finalized. */
typedef struct
{
  guint32 *out; /* device */
  gint finalized;
  char thread[17];
} Watch;

static void
watch_finalized (gpointer data)
{
  Watch *w = data;

  prctl (PR_GET_NAME, w->thread, 0, 0, 0);
  g_atomic_int_set (&w->finalized, 1);
}

static gboolean
watched_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  Watch *w = data;

  return tgt_launch_mix (tg_launch_get_stream (launch), w->out, N, 3) == cudaSuccess;
}

static TgProducer *
watched_producer (Watch *w)
{
  TgProducer *p = tg_producer_new ("watched", 0);

  tg_producer_add_device_stage (p, "mix", TG_STAGE_CAPTURE_SAFE, watched_stage, w,
                                watch_finalized, NULL);
  return p;
}

static guint32
mix3 (guint32 x, guint32 i)
{
  return x * 3 + ((x >> 7) ^ i);
}

/* Replays @graph REPLAYS times and checks the producer's work each time. */
static void
replay_and_check (cudaGraph_t graph, cudaStream_t stream, Watch *w)
{
  g_autofree guint32 *expected = g_new0 (guint32, N), *host = g_new (guint32, N);
  cudaGraphExec_t exec = NULL;

  tg_test_device_clear (w->out, N * sizeof (guint32));
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  for (guint r = 0; r < REPLAYS; r++)
    {
      TG_TEST_CUDA (cudaGraphLaunch (exec, stream));
      for (guint i = 0; i < N; i++)
        expected[i] = mix3 (expected[i], i);
    }
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
  tg_test_download (host, w->out, N * sizeof (guint32));
  g_assert_cmpmem (host, N * sizeof (guint32), expected, N * sizeof (guint32));
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
}

static void
wait_finalized (Watch *w)
{
  gint64 start = g_get_monotonic_time ();

  g_assert_true (tg_release_wait (10 * G_USEC_PER_SEC));
  g_assert_cmpint (g_atomic_int_get (&w->finalized), ==, 1);
  /* Finalized on TrackGen's reaper thread, never the driver's. */
  g_assert_cmpstr (w->thread, ==, "trackgen-reaper");
  g_test_message ("producer finalized %.1f ms after the graph was destroyed",
                  (g_get_monotonic_time () - start) / 1000.0);
}

/* RECORD embeds the producer's work as one child graph node: here, the
 * watched producer's single kernel. */
static void
assert_one_child_graph (cudaGraph_t graph)
{
  cudaGraphNode_t node = NULL, inner = NULL;
  enum cudaGraphNodeType type;
  cudaGraph_t child = NULL;
  size_t n = 1;

  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, 1);
  TG_TEST_CUDA (cudaGraphGetNodes (graph, &node, &n));
  TG_TEST_CUDA (cudaGraphNodeGetType (node, &type));
  g_assert_cmpint (type, ==, cudaGraphNodeTypeGraph);
  TG_TEST_CUDA (cudaGraphChildGraphNodeGetGraph (node, &child));
  g_assert_cmpuint (tg_test_graph_n_nodes (child), ==, 1);
  TG_TEST_CUDA (cudaGraphGetNodes (child, &inner, &n));
  TG_TEST_CUDA (cudaGraphNodeGetType (inner, &type));
  g_assert_cmpint (type, ==, cudaGraphNodeTypeKernel);
}

typedef TgTestGpu Fixture;

static void
test_scope_records_and_retains (Fixture *f, gconstpointer data)
{
  Watch w = { 0 };
  cudaStream_t stream = f->stream;
  cudaGraph_t graph = NULL;
  g_autoptr (GError) error = NULL;
  TgCaptureScope *scope;
  TgProducer *p;

  TG_TEST_REQUIRE_GPU ();
  w.out = tg_test_device_alloc (N * sizeof (guint32));
  p = watched_producer (&w);

  TG_TEST_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeGlobal));
  scope = tg_capture_scope_begin (stream, cudaStreamCaptureModeGlobal, &error);
  g_assert_no_error (error);
  g_assert_true (tg_capture_is_registered (stream));
  /* TG_STREAM_AUTO: the call records into the registered capture. */
  g_assert_true (
      tg_producer_run (p, TG_STREAM_AUTO, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_no_error (error);
  g_assert_true (tg_capture_scope_end (scope, &error));
  g_assert_false (tg_capture_is_registered (stream));
  tg_capture_scope_free (scope);
  TG_TEST_CUDA (cudaStreamEndCapture (stream, &graph));
  assert_one_child_graph (graph);

  /* The caller drops its reference: the graph keeps the producer. */
  tg_producer_unref (p);
  g_assert_cmpint (g_atomic_int_get (&w.finalized), ==, 0);
  replay_and_check (graph, stream, &w);
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  wait_finalized (&w);
  tg_test_device_free (w.out);
}

static void
test_retain_explicit (Fixture *f, gconstpointer data)
{
  Watch w = { 0 };
  cudaStream_t stream = f->stream;
  cudaGraph_t graph = NULL;
  g_autoptr (GError) error = NULL;
  TgProducer *p;

  TG_TEST_REQUIRE_GPU ();
  w.out = tg_test_device_alloc (N * sizeof (guint32));
  p = watched_producer (&w);

  TG_TEST_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal));
  g_assert_true (
      tg_producer_run (p, stream, TG_POLICY_RECORD, tg_unconditional (), &error));
  g_assert_true (tg_retain_capture (stream, p, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (stream, &graph));
  assert_one_child_graph (graph);
  g_assert_true (tg_retain (graph, p, &error));
  g_assert_no_error (error);
  tg_producer_unref (p);
  replay_and_check (graph, stream, &w);
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  wait_finalized (&w);

  {
    Watch idle = { 0 };
    g_autoptr (TgProducer) q = watched_producer (&idle);
    g_assert_false (tg_retain_capture (stream, q, &error));
    g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_NOT_CAPTURING);
  }
  tg_test_device_free (w.out);
}

static gpointer
end_elsewhere (gpointer scope)
{
  GError *error = NULL;

  g_assert_false (tg_capture_scope_end (scope, &error));
  return error;
}

static void
test_scope_misuse (Fixture *f, gconstpointer data)
{
  cudaStream_t stream = f->stream;
  cudaGraph_t graph = NULL;
  g_autoptr (GError) error = NULL;
  TgCaptureScope *scope;

  TG_TEST_REQUIRE_GPU ();
  /* A stream that is not capturing: its state refuses, not its value. */
  g_assert_null (tg_capture_scope_begin (stream, cudaStreamCaptureModeGlobal, &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_NOT_CAPTURING);
  g_clear_error (&error);

  TG_TEST_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal));
  scope = tg_capture_scope_begin (stream, cudaStreamCaptureModeThreadLocal, &error);
  g_assert_no_error (error);
  error = g_thread_join (g_thread_new ("other", end_elsewhere, scope));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_THREAD);
  g_clear_error (&error);
  g_assert_true (tg_capture_is_registered (stream));
  /* Ending after the foreign capture ended is fine. */
  TG_TEST_CUDA (cudaStreamEndCapture (stream, &graph));
  g_assert_true (tg_capture_scope_end (scope, &error));
  g_assert_true (tg_capture_scope_end (scope, &error));
  g_assert_no_error (error);
  tg_capture_scope_free (scope);
  TG_TEST_CUDA (cudaGraphDestroy (graph));
}

/* Nested scopes: two captures of this thread, on two streams, each
 * registered, the second inside the first. */
typedef struct
{
  cudaStream_t streams[2]; /* outer (the fixture's), inner */
  TgCaptureScope *scopes[2];
} Nested;

static void
nested_begin (Nested *n, cudaStream_t outer)
{
  g_autoptr (GError) error = NULL;

  n->streams[0] = outer;
  n->streams[1] = tg_test_stream_new ();
  for (guint i = 0; i < 2; i++)
    {
      TG_TEST_CUDA (
          cudaStreamBeginCapture (n->streams[i], cudaStreamCaptureModeThreadLocal));
      n->scopes[i] = tg_capture_scope_begin (n->streams[i],
                                             cudaStreamCaptureModeThreadLocal, &error);
      g_assert_no_error (error);
      g_assert_nonnull (n->scopes[i]);
    }
}

/* Both still registered, the inner one innermost: a call naming no stream
 * goes to it. */
static void
nested_assert_registered (Nested *n)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (tg_capture_is_registered (n->streams[0]));
  g_assert_true (tg_capture_is_registered (n->streams[1]));
  g_assert_true (tg_stream_resolve (TG_STREAM_AUTO, 0, &error) == n->streams[1]);
  g_assert_no_error (error);
}

/* Ends the inner scope, then the outer one, each cleanly; frees both, ends
 * both captures; destroys their graphs once neither capture is open (a
 * destroy is not among the calls a capture in progress allows). */
static void
nested_end (Nested *n)
{
  g_autoptr (GError) error = NULL;
  cudaGraph_t graphs[2] = { NULL, NULL };

  for (guint i = 2; i-- > 0;)
    {
      g_assert_true (tg_capture_scope_end (n->scopes[i], &error));
      g_assert_no_error (error);
      g_assert_false (tg_capture_is_registered (n->streams[i]));
      tg_capture_scope_free (n->scopes[i]);
      TG_TEST_CUDA (cudaStreamEndCapture (n->streams[i], &graphs[i]));
      tg_test_assert_not_capturing (n->streams[i]);
    }
  for (guint i = 0; i < 2; i++)
    TG_TEST_CUDA (cudaGraphDestroy (graphs[i]));
  g_assert_false (tg_capture_is_registered (TG_STREAM_AUTO));
  TG_TEST_CUDA (cudaStreamDestroy (n->streams[1]));
}

/* Ending the outer scope first: NESTING, and it stays registered. */
static void
test_scope_nesting (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  Nested n;

  TG_TEST_REQUIRE_GPU ();
  nested_begin (&n, f->stream);
  g_assert_false (tg_capture_scope_end (n.scopes[0], &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_NESTING);
  g_test_message ("refused as expected: %s", error->message);
  nested_assert_registered (&n);
  nested_end (&n);
}

/* Freeing the outer scope first: a critical, and the scope is leaked, still
 * registered (so it can still be ended, and freed, after the inner one). */
static void
test_scope_free_not_innermost (Fixture *f, gconstpointer data)
{
  Nested n;

  TG_TEST_REQUIRE_GPU ();
  nested_begin (&n, f->stream);
  g_test_expect_message (
      "TrackGen", G_LOG_LEVEL_CRITICAL,
      "tg_capture_scope_free: *not the innermost*the scope is leaked");
  tg_capture_scope_free (n.scopes[0]);
  g_test_assert_expected_messages ();
  nested_assert_registered (&n);
  nested_end (&n);
}

/* A capture the caller's own call invalidated: every call that needs a
 * capture in progress says it is invalidated (tg_retained_new() said "no
 * capture in progress" until 0.5), and takes nothing. */
static void
test_invalidated_capture (Fixture *f, gconstpointer data)
{
  cudaStream_t stream = f->stream;
  g_autoptr (TgProducer) p = tg_producer_new ("invalidated", 0);
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;

  TG_TEST_REQUIRE_GPU ();
  TG_TEST_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal));
  g_assert_cmpint (cudaStreamSynchronize (stream), !=, cudaSuccess);
  (void)cudaGetLastError ();
  g_assert_null (tg_retained_new (stream, &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "is invalidated"));
  g_clear_error (&error);
  g_assert_false (tg_retain_capture (stream, p, &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED);
  g_clear_error (&error);
  g_assert_null (
      tg_capture_scope_begin (stream, cudaStreamCaptureModeThreadLocal, &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED);
  g_clear_error (&error);
  g_assert_cmpint (cudaStreamEndCapture (stream, &graph), ==,
                   cudaErrorStreamCaptureInvalidated);
  (void)cudaGetLastError ();
  g_assert_null (graph);
  tg_test_assert_not_capturing (stream);
}

/* TG_STREAM_AUTO names no stream: a scope refuses it, before any CUDA call;
 * a retention and the registration query resolve it to the innermost
 * registered capture, and refuse it when there is none. */
static void
test_auto_stream_without_scope (void)
{
  g_autoptr (TgProducer) p = tg_producer_new ("auto", 0);
  g_autoptr (GError) error = NULL;

  g_assert_null (
      tg_capture_scope_begin (TG_STREAM_AUTO, cudaStreamCaptureModeGlobal, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "TG_STREAM_AUTO"));
  g_clear_error (&error);
  g_assert_false (tg_retain_capture (TG_STREAM_AUTO, p, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_false (tg_capture_is_registered (TG_STREAM_AUTO));
}

static void
test_auto_stream_in_scope (Fixture *f, gconstpointer data)
{
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  TgCaptureScope *scope;
  TgLiveObjects before;

  TG_TEST_REQUIRE_GPU ();
  tg_test_live_snapshot (&before);
  p = tg_producer_new ("auto", 0);
  TG_TEST_CUDA (cudaStreamBeginCapture (f->stream, cudaStreamCaptureModeGlobal));
  scope = tg_capture_scope_begin (f->stream, cudaStreamCaptureModeGlobal, &error);
  g_assert_no_error (error);
  g_assert_true (tg_capture_is_registered (TG_STREAM_AUTO));
  g_assert_true (tg_retain_capture (TG_STREAM_AUTO, p, &error));
  g_assert_no_error (error);
  g_assert_true (tg_capture_scope_end (scope, &error));
  tg_capture_scope_free (scope);
  g_assert_false (tg_capture_is_registered (TG_STREAM_AUTO));
  TG_TEST_CUDA (cudaStreamEndCapture (f->stream, &graph));
  /* The graph holds the producer: one reference more than ours. */
  g_clear_pointer (&p, tg_producer_unref);
  {
    TgLiveObjects now;
    tg_get_live_objects (&now);
    g_assert_cmpint (now.producers, ==, before.producers + 1);
  }
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  g_assert_true (tg_release_wait (10 * G_USEC_PER_SEC));
  tg_test_assert_no_leaks (&before);
}

/* ------------------------------------------------------------------------ */
/* tg_release_wait (G_MAXINT64) returns at once when none is pending (that it
 * waits for one: interop-test-retention.c).                                */

static void
test_release_wait_forever_none_pending (void)
{
  gint64 start = g_get_monotonic_time ();

  /* "Forever" and the timeouts whose deadline overflows return at once when
   * nothing is pending (UBSan checks the deadline arithmetic). */
  g_assert_true (tg_release_wait (G_MAXINT64));
  g_assert_true (tg_release_wait (G_MAXINT64 - 1));
  g_assert_true (tg_release_wait (G_MAXINT64 - start));
  g_assert_true (tg_release_wait (0));
  g_assert_cmpint (g_get_monotonic_time () - start, <, 10 * G_USEC_PER_SEC);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  TG_TEST_ADD_GPU ("/interop/scope/records-and-retains",
                   test_scope_records_and_retains);
  TG_TEST_ADD_GPU ("/interop/retain/explicit", test_retain_explicit);
  TG_TEST_ADD_GPU ("/interop/scope/misuse", test_scope_misuse);
  TG_TEST_ADD_GPU ("/interop/scope/nesting-outer-ended-first", test_scope_nesting);
  TG_TEST_ADD_GPU ("/interop/scope/free-not-innermost-leaks",
                   test_scope_free_not_innermost);
  TG_TEST_ADD_GPU ("/interop/capture/invalidated", test_invalidated_capture);
  g_test_add_func ("/interop/auto-stream/without-scope",
                   test_auto_stream_without_scope);
  TG_TEST_ADD_GPU ("/interop/auto-stream/in-scope", test_auto_stream_in_scope);
  g_test_add_func ("/interop/release-wait/forever-none-pending",
                   test_release_wait_forever_none_pending);
  interop_test_add_retention ();
  return g_test_run ();
}
