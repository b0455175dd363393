/* SPDX-License-Identifier: Apache-2.0 */
/* record-test.c: RECORD, a producer's work recorded into a caller's
 * capture.  Refusals come before the first node, so the caller's capture
 * keeps exactly its nodes, whether the stage is declared unsafe or only
 * behaves so; HOST stages become host nodes that run once per replay; each
 * stage runs once per call (twice, documented, around the trial capture of
 * conditional work); a stage that breaks the caller's capture on its own is
 * reported, named; what the caller's graph can still do with what was
 * recorded, and why conditional work cannot be undone; the rebind warning
 * that tells the caller to re-capture.  Recording inside a caller's own
 * conditional node is in record-test-bodies.c. */
#include "config.h"
#include "record-test.h"

#include <string.h>

#define CHAIN_N 4096 /* elements of the chain producers */
#define N 1024       /* elements of the other buffers */

typedef TgTestGpu Fixture;

/* ------------------------------------------------------------------------ */
/* Refused before anything is recorded                                       */

static void
test_record_refuses_host_stage (Fixture *f, gconstpointer data)
{
  TgTestChain *c;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  c = tg_test_chain_new ("unsafe-host", CHAIN_N, TRUE, TG_STAGE_NONE);
  tg_test_expect_refusal (c->producer, f->stream, TG_POLICY_AUTO, tg_unconditional (),
                          TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  tg_test_expect_refusal (c->producer, f->stream, TG_POLICY_RECORD, tg_unconditional (),
                          TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  tg_test_expect_refusal (c->producer, f->stream, TG_POLICY_EAGER, tg_unconditional (),
                          TG_STATE_ERROR, TG_STATE_ERROR_POLICY);
  g_assert_true (tg_producer_run (c->producer, f->stream, TG_POLICY_AUTO,
                                  tg_unconditional (), &error));
  g_assert_no_error (error);
  tg_test_chain_free (c);
}

static gboolean
lying_host_stage (TgHostOps *ops, gpointer data, GError **error)
{
  guint32 value;

  /* Declared capture-safe, yet it needs a synchronization. */
  return tg_host_ops_copy_to_host (ops, &value, data, sizeof value, error);
}

static gboolean
syncing_device_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  cudaError_t status = cudaStreamSynchronize (tg_launch_get_stream (launch));

  if (status != cudaSuccess)
    g_set_error (error, TG_CUDA_ERROR, status, "sync: %s", cudaGetErrorName (status));
  return status == cudaSuccess;
}

static void
test_record_refuses_what_stages_hide (Fixture *f, gconstpointer data)
{
  guint32 *counter;
  TgProducer *lying, *syncing;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (sizeof (guint32));
  lying = tg_producer_new ("lying", 0);
  tg_producer_add_device_stage (lying, "count", TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_stage, counter, NULL, NULL);
  tg_producer_add_host_stage (lying, "peek", TG_STAGE_CAPTURE_SAFE, lying_host_stage,
                              counter, NULL, NULL);
  syncing = tg_producer_new ("syncing", 0);
  tg_producer_add_device_stage (syncing, "count", TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_stage, counter, NULL, NULL);
  tg_producer_add_device_stage (syncing, "sync", TG_STAGE_CAPTURE_SAFE,
                                syncing_device_stage, NULL, NULL, NULL);
  /* The dry run catches both before the caller's capture is touched. */
  tg_test_expect_refusal (lying, f->stream, TG_POLICY_AUTO, tg_unconditional (),
                          TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  tg_test_expect_refusal (syncing, f->stream, TG_POLICY_AUTO, tg_unconditional (),
                          TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  tg_producer_unref (lying);
  tg_producer_unref (syncing);
  tg_test_device_free (counter);
}

/* A HOST stage declared capture-safe whose copy to the device reads
 * pageable memory: refused under RECORD (every replay would read the source
 * again), naming the stage and the operation, with nothing recorded; outside
 * a capture the same copy runs. */
typedef struct
{
  guint32 *dst; /* device */
  guint32 *src; /* pageable host memory */
} PageableCopy;

static gboolean
pageable_copy_stage (TgHostOps *ops, gpointer data, GError **error)
{
  PageableCopy *c = data;

  return tg_host_ops_copy_to_device (ops, c->dst, c->src, sizeof (guint32), error);
}

static void
test_record_refuses_pageable_copy (Fixture *f, gconstpointer data)
{
  PageableCopy c;
  TgProducer *p;
  cudaGraph_t graph = NULL;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  c.dst = tg_test_device_alloc (sizeof (guint32));
  c.src = g_new (guint32, 1);
  *c.src = 0x5EED;
  p = tg_producer_new ("pageable", 0);
  tg_producer_add_host_stage (p, "upload", TG_STAGE_CAPTURE_SAFE, pageable_copy_stage,
                              &c, NULL, NULL);
  tg_test_expect_refusal (p, f->stream, TG_POLICY_AUTO, tg_unconditional (),
                          TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  tg_test_expect_refusal (p, f->stream, TG_POLICY_RECORD, tg_unconditional (),
                          TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);

  /* What the refusal says, and that the capture holds nothing of it. */
  TG_TEST_CUDA (cudaStreamBeginCapture (f->stream, cudaStreamCaptureModeThreadLocal));
  g_assert_false (
      tg_producer_run (p, f->stream, TG_POLICY_RECORD, tg_unconditional (), &error));
  g_assert_true (tg_stream_is_capturing (f->stream));
  TG_TEST_CUDA (cudaStreamEndCapture (f->stream, &graph));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  g_assert_cmpstr (tg_error_get_producer (error), ==, "pageable");
  g_assert_cmpstr (tg_error_get_stage (error), ==, "upload");
  g_assert_nonnull (strstr (error->message, "copy_to_device from pageable memory"));
  g_clear_error (&error);
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, 0);
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  g_assert_cmpuint (tg_test_read_u32 (c.dst), ==, 0);

  /* Outside a capture the HOST stage runs on the host: the copy is made. */
  g_assert_true (
      tg_producer_run (p, f->stream, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  g_assert_cmpuint (tg_test_read_u32 (c.dst), ==, 0x5EED);
  tg_producer_unref (p);
  g_free (c.src);
  tg_test_device_free (c.dst);
}

/* ------------------------------------------------------------------------ */
/* HOST stages as host nodes                                                 */

static void
test_record_host_function_once_per_replay (Fixture *f, gconstpointer data)
{
  TgTestChain *c;
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;

  TG_TEST_REQUIRE_GPU ();
  c = tg_test_chain_new ("host-fn", CHAIN_N, TRUE, TG_STAGE_CAPTURE_SAFE);
  TG_TEST_CUDA (cudaStreamBeginCapture (f->stream, cudaStreamCaptureModeThreadLocal));
  g_assert_true (tg_producer_run (c->producer, f->stream, TG_POLICY_AUTO,
                                  tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (f->stream, &graph));
  g_assert_cmpint (c->host_runs, ==, 0);
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  for (guint i = 1; i <= 10; i++)
    {
      TG_TEST_CUDA (cudaGraphLaunch (exec, f->stream));
      TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
      g_assert_cmpint (c->host_runs, ==, i);
    }
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_test_chain_free (c);
}

/* ------------------------------------------------------------------------ */
/* Stage calls per call, and stages that break the caller's capture         */

static void
test_stage_calls (Fixture *fx, gconstpointer data)
{
  TgTestCounted c;
  TgRunnerStats stats;
  TgProducer *p;
  gint32 *flag;
  cudaGraph_t graph = NULL;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  tg_test_counted_init (&c, 7);
  flag = tg_test_device_alloc (sizeof (gint32));
  p = tg_test_counted_new (&c, TG_STAGE_CAPTURE_SAFE);

  g_assert_true (
      tg_producer_run (p, fx->stream, TG_POLICY_EAGER, tg_unconditional (), &error));
  g_assert_cmpint (g_atomic_int_get (&c.calls), ==, 1);
  g_assert_true (
      tg_producer_run (p, fx->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  g_assert_true (
      tg_producer_run (p, fx->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  g_assert_cmpint (g_atomic_int_get (&c.calls), ==, 2); /* captured once */
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_captures, ==, 1);

  /* Unconditional RECORD: once, as one child-graph node. */
  TG_TEST_CUDA (cudaStreamBeginCapture (fx->stream, cudaStreamCaptureModeGlobal));
  g_assert_true (
      tg_producer_run (p, fx->stream, TG_POLICY_RECORD, tg_unconditional (), &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_atomic_int_get (&c.calls), ==, 3);
  TG_TEST_CUDA (cudaStreamEndCapture (fx->stream, &graph));
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, 1);
  TG_TEST_CUDA (cudaGraphDestroy (graph));

  /* Conditional RECORD: once too; the second pass places the stage's work
   * from the trial. */
  TG_TEST_CUDA (cudaStreamBeginCapture (fx->stream, cudaStreamCaptureModeGlobal));
  g_assert_true (
      tg_producer_run (p, fx->stream, TG_POLICY_RECORD, tg_conditional (flag), &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_atomic_int_get (&c.calls), ==, 4);
  TG_TEST_CUDA (cudaStreamEndCapture (fx->stream, &graph));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  /* RECORD's trial captures make no graph of the producer's: not counted. */
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_captures, ==, 1);

  tg_producer_unref (p);
  tg_test_counted_clear (&c);
  tg_test_device_free (flag);
}

typedef enum
{
  BREAK_MALLOC,    /* cudaMalloc (unsafe during a capture) */
  BREAK_SYNC_COPY, /* a synchronous cudaMemcpy from pageable memory */
  BREAK_LEGACY,    /* a kernel on the legacy stream */
} Breaker;

static const char *const breaker_names[] = { "malloc", "sync-copy", "legacy-launch" };

typedef struct
{
  Breaker how;
  guint32 *buf; /* device, N */
} Careless;

/* A stage that declares itself capture-safe and is not; it ignores the
 * errors its calls return, as careless code does. */
static gboolean
careless_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  Careless *c = data;
  guint32 host[4] = { 0 };
  void *ptr = NULL;

  switch (c->how)
    {
    case BREAK_MALLOC:
      if (cudaMalloc (&ptr, 256) == cudaSuccess)
        (void)cudaFree (ptr);
      break;
    case BREAK_SYNC_COPY:
      (void)cudaMemcpy (host, c->buf, sizeof host, cudaMemcpyDeviceToHost);
      break;
    case BREAK_LEGACY:
      (void)tgt_launch_mix_legacy (c->buf, N, 3);
      break;
    }
  (void)cudaGetLastError ();
  return tg_test_launched (tgt_launch_mix (tg_launch_get_stream (launch), c->buf, N, 5),
                           error);
}

static void
test_stage_breaks_caller (Fixture *fx, gconstpointer data)
{
  Careless c = { GPOINTER_TO_UINT (data), NULL };
  TgProducer *p;
  cudaStream_t blocking;
  cudaGraph_t graph = NULL;
  gsize before;
  TgCaptureState state;
  enum cudaStreamCaptureStatus status;
  g_autoptr (GError) error = NULL;
  g_autofree char *stage = NULL;

  TG_TEST_REQUIRE_GPU ();
  c.buf = tg_test_device_alloc (N * sizeof (guint32));
  /* A blocking stream: what the legacy stream and synchronous copies join. */
  TG_TEST_CUDA (cudaStreamCreate (&blocking));
  p = tg_producer_new ("careless", 0);
  tg_producer_add_device_stage (p, breaker_names[c.how], TG_STAGE_CAPTURE_SAFE,
                                careless_stage, &c, NULL, NULL);

  TG_TEST_CUDA (cudaStreamBeginCapture (blocking, cudaStreamCaptureModeGlobal));
  TG_TEST_CUDA (tgt_launch_count (blocking, c.buf));
  TG_TEST_CUDA (
      cudaStreamGetCaptureInfo (blocking, &status, NULL, &graph, NULL, NULL, NULL));
  before = tg_test_graph_n_nodes (graph);

  /* Never TRUE with a broken capture: FAILED naming the stage, or refused
   * with the caller's capture intact. */
  g_assert_false (
      tg_producer_run (p, blocking, TG_POLICY_RECORD, tg_unconditional (), &error));
  g_assert_nonnull (error);
  g_test_message ("%s: %s", breaker_names[c.how], error->message);
  g_test_message (
      "stage-breaks-caller/%s returned %s code %d (%s)", breaker_names[c.how],
      g_quark_to_string (error->domain), error->code,
      g_error_matches (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED) ? "FAILED"
      : g_error_matches (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE)
          ? "NOT_CAPTURABLE"
          : "another code");
  g_assert_true (tg_stream_get_capture_state (blocking, &state, NULL, NULL));
  stage = g_strdup_printf ("stage '%s'", breaker_names[c.how]);
  if (g_error_matches (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED))
    {
      g_assert_nonnull (strstr (error->message, stage));
      g_assert_cmpint (state, ==, TG_CAPTURE_INVALIDATED);
    }
  else
    {
      g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
      g_assert_cmpint (state, ==, TG_CAPTURE_ACTIVE);
      g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, before);
    }
  graph = NULL;
  (void)cudaStreamEndCapture (blocking, &graph);
  (void)cudaGetLastError ();
  if (graph != NULL)
    TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_test_assert_not_capturing (blocking);

  tg_producer_unref (p);
  TG_TEST_CUDA (cudaStreamSynchronize (blocking));
  TG_TEST_CUDA (cudaStreamDestroy (blocking));
  tg_test_device_free (c.buf);
}

/* ------------------------------------------------------------------------ */
/* What the caller's graph can still do after recording TrackGen's work.     */

static cudaGraph_t
recorded_graph (TgProducer *p, cudaStream_t stream, TgCondition condition)
{
  cudaGraph_t graph = NULL;
  g_autoptr (GError) error = NULL;

  TG_TEST_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeGlobal));
  g_assert_true (tg_producer_run (p, stream, TG_POLICY_RECORD, condition, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (stream, &graph));
  return graph;
}

static void
test_caller_graph_abilities (Fixture *fx, gconstpointer data)
{
  TgTestCounted c;
  TgProducer *p;
  gint32 *flag;
  cudaGraph_t plain, conditional, clone = NULL, parent, recaptured;
  cudaGraphNode_t node;
  cudaGraphExec_t exec = NULL, second = NULL;
  cudaGraphExecUpdateResultInfo info;
  cudaError_t status;

  TG_TEST_REQUIRE_GPU ();
  tg_test_counted_init (&c, 11);
  flag = tg_test_device_alloc (sizeof (gint32));
  TG_TEST_CUDA (tgt_launch_set (fx->stream, flag, 1));
  p = tg_test_counted_new (&c, TG_STAGE_CAPTURE_SAFE);
  TG_TEST_CUDA (cudaGraphCreate (&parent, 0));

  /* Unconditional work joins as a child graph: everything stays possible. */
  plain = recorded_graph (p, fx->stream, tg_unconditional ());
  TG_TEST_CUDA (cudaGraphClone (&clone, plain));
  TG_TEST_CUDA (cudaGraphAddChildGraphNode (&node, parent, NULL, 0, plain));
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, plain, 0));
  TG_TEST_CUDA (cudaGraphInstantiate (&second, plain, 0));
  TG_TEST_CUDA (cudaGraphExecDestroy (second));
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (clone));

  /* Conditional work holds conditional nodes: CUDA's limits, documented. */
  conditional = recorded_graph (p, fx->stream, tg_conditional (flag));
  status = cudaGraphClone (&clone, conditional);
  g_test_message ("cudaGraphClone: %s", cudaGetErrorName (status));
  g_assert_cmpint (status, !=, cudaSuccess);
  status = cudaGraphAddChildGraphNode (&node, parent, NULL, 0, conditional);
  g_test_message ("cudaGraphAddChildGraphNode: %s", cudaGetErrorName (status));
  g_assert_cmpint (status, !=, cudaSuccess);
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, conditional, 0));
  status = cudaGraphInstantiate (&second, conditional, 0);
  g_test_message ("second cudaGraphInstantiate: %s", cudaGetErrorName (status));
  g_assert_cmpint (status, !=, cudaSuccess);
  (void)cudaGetLastError ();
  /* A fresh re-capture updates the executable in place. */
  recaptured = recorded_graph (p, fx->stream, tg_conditional (flag));
  TG_TEST_CUDA (cudaGraphExecUpdate (exec, recaptured, &info));
  TG_TEST_CUDA (cudaGraphLaunch (exec, fx->stream));
  TG_TEST_CUDA (cudaStreamSynchronize (fx->stream));
  tg_test_counted_expect (&c, 11);

  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (recaptured));
  TG_TEST_CUDA (cudaGraphDestroy (conditional));
  TG_TEST_CUDA (cudaGraphDestroy (plain));
  TG_TEST_CUDA (cudaGraphDestroy (parent));
  tg_producer_unref (p);
  tg_test_counted_clear (&c);
  tg_test_device_free (flag);
}

/* Why RECORD of conditional work cannot be undone: CUDA forbids removing a
 * node from a graph under capture (cudaStreamGetCaptureInfo's contract).
 * Kept as a test so that a driver that allows it is noticed. */
static void
test_no_node_removal_under_capture (Fixture *fx, gconstpointer data)
{
  guint32 *counter;
  cudaGraph_t graph = NULL;
  cudaGraphNode_t node = NULL;
  enum cudaStreamCaptureStatus capture;
  cudaError_t status;
  size_t n = 1;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (sizeof (guint32));
  TG_TEST_CUDA (cudaStreamBeginCapture (fx->stream, cudaStreamCaptureModeGlobal));
  TG_TEST_CUDA (tgt_launch_count (fx->stream, counter));
  TG_TEST_CUDA (
      cudaStreamGetCaptureInfo (fx->stream, &capture, NULL, &graph, NULL, NULL, NULL));
  /* A node added beside the capture, not a dependency of the stream. */
  TG_TEST_CUDA (cudaGraphAddEmptyNode (&node, graph, NULL, 0));
  status = cudaGraphDestroyNode (node);
  g_test_message ("cudaGraphDestroyNode under capture: %s", cudaGetErrorName (status));
  (void)cudaGetLastError ();
  graph = NULL;
  TG_TEST_CUDA (cudaStreamEndCapture (fx->stream, &graph));
  TG_TEST_CUDA (cudaGraphGetNodes (graph, NULL, &n));
  g_test_message ("nodes after the capture: %zu", n);
  g_assert_cmpint (status, !=, cudaSuccess);
  /* The removal was refused, so the graph holds both nodes: the kernel the
   * capture recorded and the empty node added beside it.  A driver that
   * allows the removal (1 node left) fails on the assertion above first. */
  g_assert_cmpuint (n, ==, 2);
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_test_device_free (counter);
}

/* ------------------------------------------------------------------------ */
/* A rebind after RECORD                                                     */

static void
test_rebind_after_record (Fixture *f, gconstpointer data)
{
  guint32 *first, *second;
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;

  TG_TEST_REQUIRE_GPU ();
  first = tg_test_device_alloc (4);
  second = tg_test_device_alloc (4);
  p = tg_producer_new ("recorded", 0);
  tg_producer_add_device_stage (p, "count", TG_STAGE_CAPTURE_SAFE,
                                tg_test_optional_count_stage, NULL, NULL, NULL);
  tg_producer_declare_binding (p, 0, "counter", sizeof (guint32), NULL);
  g_assert_true (tg_producer_bind (p, "counter", first, 4, &error));
  TG_TEST_CUDA (cudaStreamBeginCapture (f->stream, cudaStreamCaptureModeThreadLocal));
  g_assert_true (
      tg_producer_run (p, f->stream, TG_POLICY_AUTO, tg_unconditional (), &error));
  TG_TEST_CUDA (cudaStreamEndCapture (f->stream, &graph));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_WARNING,
                         "RebindAfterCaptureWarning*must be re-captured*");
  g_assert_true (tg_producer_bind (p, "counter", second, 4, &error));
  g_test_assert_expected_messages ();
  g_clear_pointer (&p, tg_producer_unref);
  tg_test_device_free (first);
  tg_test_device_free (second);
}

/* What a recorded stage keeps (tg_launch_keep) lives as long as the
 * caller's graph, whether the call's work is one child graph or takes the
 * second pass (a condition); the stage is called, and keeps, once. */
static void
test_keep (Fixture *fx, gconstpointer data)
{
  guint32 *counter;
  gint32 *flag;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (sizeof (guint32));
  flag = tg_test_device_alloc (sizeof (gint32));
  for (guint conditional = 0; conditional <= 1; conditional++)
    {
      TgProducer *p = tg_test_counter_producer (counter, TG_STAGE_CAPTURE_SAFE,
                                                tg_test_keeping_stage);
      TgCondition cond = conditional ? tg_conditional (flag) : tg_unconditional ();
      cudaGraph_t graph = NULL;
      cudaGraphExec_t exec = NULL;

      tg_test_kept_reset ();
      TG_TEST_CUDA (cudaStreamBeginCapture (fx->stream, cudaStreamCaptureModeGlobal));
      g_assert_true (tg_producer_run (p, fx->stream, TG_POLICY_RECORD, cond, &error));
      g_assert_no_error (error);
      TG_TEST_CUDA (cudaStreamEndCapture (fx->stream, &graph));
      tg_producer_unref (p); /* the keep does not need the producer */
      g_assert_cmpint (tg_test_kept_alive (), ==, 1);
      TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
      TG_TEST_CUDA (cudaGraphDestroy (graph));
      TG_TEST_CUDA (cudaGraphLaunch (exec, fx->stream));
      TG_TEST_CUDA (cudaStreamSynchronize (fx->stream));
      /* The exec holds it: no release is queued (a wait would wait for this
       * very one), and a moment later none has run. */
      g_usleep (50 * 1000);
      g_assert_cmpint (tg_test_kept_alive (), ==, 1);
      TG_TEST_CUDA (cudaGraphExecDestroy (exec));
      g_assert_true (tg_release_wait (10 * G_USEC_PER_SEC));
      g_assert_cmpint (tg_test_kept_alive (), ==, 0);
    }
  tg_test_device_free (flag);
  tg_test_device_free (counter);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  TG_TEST_ADD_GPU ("/record/refuses/host-stage", test_record_refuses_host_stage);
  TG_TEST_ADD_GPU ("/record/refuses/what-stages-hide",
                   test_record_refuses_what_stages_hide);
  TG_TEST_ADD_GPU ("/record/refuses/pageable-copy-to-device",
                   test_record_refuses_pageable_copy);
  TG_TEST_ADD_GPU ("/record/host-stage/host-function-once-per-replay",
                   test_record_host_function_once_per_replay);
  TG_TEST_ADD_GPU ("/record/trial/stage-calls-per-call", test_stage_calls);
  TG_TEST_ADD_GPU ("/record/keep/lives-with-the-caller-graph", test_keep);
  for (guint b = 0; b < G_N_ELEMENTS (breaker_names); b++)
    {
      g_autofree char *path
          = g_strdup_printf ("/record/stage-breaks-caller/%s", breaker_names[b]);
      g_test_add (path, Fixture, GUINT_TO_POINTER (b), tg_test_gpu_set_up,
                  test_stage_breaks_caller, tg_test_gpu_tear_down);
    }
  TG_TEST_ADD_GPU ("/record/caller-graph/abilities", test_caller_graph_abilities);
  TG_TEST_ADD_GPU ("/record/facts/no-node-removal-under-capture",
                   test_no_node_removal_under_capture);
  TG_TEST_ADD_GPU ("/record/rebind/warns-caller-must-recapture",
                   test_rebind_after_record);
  tgr_add_body_tests ();
  tgr_add_pass_tests ();
  tgr_add_foreign_tests ();
  return g_test_run ();
}
