/* SPDX-License-Identifier: Apache-2.0 */
/* tg-test.c: shared helpers of the test programs. */
#include "config.h"
#include "tg-test.h"

#include <string.h>

gboolean
tg_test_launched (cudaError_t status, GError **error)
{
  if (status == cudaSuccess)
    return TRUE;
  g_set_error (error, TG_CUDA_ERROR, status, "test kernel launch failed: %s",
               cudaGetErrorName (status));
  return FALSE;
}

void
tg_test_init (int *argc, char ***argv)
{
  g_test_init (argc, argv, NULL);
}

static gpointer
probe_gpu (gpointer data)
{
  int count = 0;

  if (cudaGetDeviceCount (&count) != cudaSuccess || count == 0)
    {
      (void)cudaGetLastError ();
      return GINT_TO_POINTER (FALSE);
    }
  return GINT_TO_POINTER (tg_device_check (0, NULL));
}

gboolean
tg_test_have_gpu (void)
{
  static GOnce once = G_ONCE_INIT;

  g_once (&once, probe_gpu, NULL);
  return GPOINTER_TO_INT (once.retval);
}

void
tg_test_assert_cuda_error (const GError *error)
{
  g_assert_nonnull (error);
  g_assert_true (error->domain == TG_CUDA_ERROR);
  g_assert_cmpint (error->code, !=, cudaSuccess);
  g_assert_nonnull (strstr (error->message, " failed at "));
  g_assert_nonnull (strstr (error->message, cudaGetErrorName (error->code)));
  g_assert_nonnull (strstr (error->message, cudaGetErrorString (error->code)));
}

void
tg_test_live_snapshot (TgLiveObjects *before)
{
  /* The default stream is made once and kept: make it before counting. */
  if (tg_test_have_gpu ())
    g_assert_nonnull (tg_default_stream (0, NULL));
  tg_get_live_objects (before);
}

void
tg_test_assert_no_leaks (const TgLiveObjects *before)
{
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  TgLiveObjects now;

  /* The driver runs the user-object destructor of a graph destroyed with
   * launches in flight once they completed, on a thread of its own; only
   * then is its release decided, which tg_release_wait() waits for. */
  while (tg_test_user_objects () > before->user_objects
         && g_get_monotonic_time () < deadline)
    g_usleep (1000);
  g_assert_true (tg_release_wait (5 * G_USEC_PER_SEC));
  tg_get_live_objects (&now);
  g_assert_cmpint (now.producers, ==, before->producers);
  g_assert_cmpint (now.graphs, ==, before->graphs);
  g_assert_cmpint (now.graph_execs, ==, before->graph_execs);
  g_assert_cmpint (now.streams, ==, before->streams);
  g_assert_cmpint (now.captures, ==, 0);
  g_assert_cmpint (now.failed_releases, ==, before->failed_releases);
  g_assert_cmpint (now.user_objects, ==, before->user_objects);
}

gint
tg_test_user_objects (void)
{
  TgLiveObjects live;

  tg_get_live_objects (&live);
  return live.user_objects;
}

void
tg_test_gpu_set_up (TgTestGpu *gpu, gconstpointer data)
{
  if (!tg_test_have_gpu ())
    return;
  tg_test_live_snapshot (&gpu->live);
  gpu->stream = tg_test_stream_new ();
}

void
tg_test_gpu_tear_down (TgTestGpu *gpu, gconstpointer data)
{
  if (!tg_test_have_gpu ())
    return;
  tg_test_assert_not_capturing (gpu->stream);
  TG_TEST_CUDA (cudaStreamDestroy (gpu->stream));
  tg_test_assert_no_leaks (&gpu->live);
}

void
tg_test_assert_not_capturing (cudaStream_t stream)
{
  TgCaptureState state = TG_CAPTURE_ACTIVE;
  g_autoptr (GError) error = NULL;

  g_assert_true (tg_stream_get_capture_state (stream, &state, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (state, ==, TG_CAPTURE_NONE);
}

gsize
tg_test_graph_n_nodes (cudaGraph_t graph)
{
  size_t n = 0;

  TG_TEST_CUDA (cudaGraphGetNodes (graph, NULL, &n));
  return n;
}

guint
tg_test_graph_count_nodes (cudaGraph_t graph, enum cudaGraphNodeType type)
{
  size_t n = tg_test_graph_n_nodes (graph);
  g_autofree cudaGraphNode_t *nodes = g_new (cudaGraphNode_t, MAX (n, 1));
  guint count = 0;

  if (n > 0)
    TG_TEST_CUDA (cudaGraphGetNodes (graph, nodes, &n));
  for (size_t i = 0; i < n; i++)
    {
      enum cudaGraphNodeType t;

      TG_TEST_CUDA (cudaGraphNodeGetType (nodes[i], &t));
      count += t == type;
    }
  return count;
}

gpointer
tg_test_device_alloc (gsize size)
{
  gpointer ptr = NULL;

  TG_TEST_CUDA (cudaMalloc (&ptr, size));
  tg_test_device_clear (ptr, size);
  return ptr;
}

void
tg_test_device_free (gpointer ptr)
{
  TG_TEST_CUDA (cudaFree (ptr));
}

/* The helpers below use the legacy stream, which the tests' non-blocking
 * streams do not wait for: each waits for the whole device around it. */
void
tg_test_device_clear (gpointer device_ptr, gsize size)
{
  TG_TEST_CUDA (cudaDeviceSynchronize ());
  TG_TEST_CUDA (cudaMemset (device_ptr, 0, size));
  TG_TEST_CUDA (cudaDeviceSynchronize ());
}

void
tg_test_upload (gpointer device_dst, gconstpointer host_src, gsize size)
{
  TG_TEST_CUDA (cudaDeviceSynchronize ());
  TG_TEST_CUDA (cudaMemcpy (device_dst, host_src, size, cudaMemcpyHostToDevice));
  TG_TEST_CUDA (cudaDeviceSynchronize ());
}

void
tg_test_download (gpointer host_dst, gconstpointer device_src, gsize size)
{
  TG_TEST_CUDA (cudaDeviceSynchronize ());
  TG_TEST_CUDA (cudaMemcpy (host_dst, device_src, size, cudaMemcpyDeviceToHost));
}

cudaStream_t
tg_test_stream_new (void)
{
  cudaStream_t stream = NULL;

  TG_TEST_CUDA (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  return stream;
}

static gboolean
chain_seed_a (const TgLaunch *launch, gpointer data, GError **error)
{
  TgTestChain *c = data;
  return tg_test_launched (tgt_launch_seed (tg_launch_get_stream (launch),
                                            tg_launch_get_binding (launch, "a"), c->n,
                                            tg_launch_get_binding (launch, "param")),
                           error);
}

static gboolean
chain_mix_a (const TgLaunch *launch, gpointer data, GError **error)
{
  TgTestChain *c = data;
  return tg_test_launched (tgt_launch_mix (tg_launch_get_stream (launch),
                                           tg_launch_get_binding (launch, "a"), c->n,
                                           TG_TEST_CHAIN_MIX),
                           error);
}

static void
chain_count (gpointer data)
{
  TgTestChain *c = data;
  g_atomic_int_inc (&c->host_runs);
}

static gboolean
chain_upload (TgHostOps *ops, gpointer data, GError **error)
{
  TgTestChain *c = data;
  return tg_host_ops_copy_to_device (ops, c->k, c->host_k, sizeof (guint32), error)
         && tg_host_ops_enqueue (ops, chain_count, c, error);
}

static gboolean
chain_seed_b (const TgLaunch *launch, gpointer data, GError **error)
{
  TgTestChain *c = data;
  return tg_test_launched (tgt_launch_seed (tg_launch_get_stream (launch),
                                            tg_launch_get_binding (launch, "b"), c->n,
                                            tg_launch_get_binding (launch, "k")),
                           error);
}

static gboolean
chain_combine (const TgLaunch *launch, gpointer data, GError **error)
{
  TgTestChain *c = data;
  return tg_test_launched (tgt_launch_combine (tg_launch_get_stream (launch),
                                               tg_launch_get_binding (launch, "a"),
                                               tg_launch_get_binding (launch, "b"),
                                               c->n),
                           error);
}

TgTestChain *
tg_test_chain_new (const char *name, guint32 n, gboolean with_host,
                   TgStageFlags host_flags)
{
  TgTestChain *c = g_new0 (TgTestChain, 1);
  TgProducer *p = tg_producer_new (name, 0);
  gsize size = n * sizeof (guint32);
  g_autoptr (GError) error = NULL;
  guint stage;

  c->n = n;
  c->param = tg_test_device_alloc (sizeof (guint32));
  c->k = tg_test_device_alloc (sizeof (guint32));
  c->a = tg_test_device_alloc (size);
  c->b = tg_test_device_alloc (size);
  TG_TEST_CUDA (cudaMallocHost ((void **)&c->host_k, sizeof (guint32)));
  stage = tg_producer_add_device_stage (p, "seed-a", TG_STAGE_CAPTURE_SAFE,
                                        chain_seed_a, c, NULL, NULL);
  tg_producer_declare_binding (p, stage, "a", size, NULL);
  tg_producer_declare_binding (p, stage, "param", sizeof (guint32), NULL);
  stage = tg_producer_add_device_stage (p, "mix-a", TG_STAGE_CAPTURE_SAFE, chain_mix_a,
                                        c, NULL, NULL);
  tg_producer_declare_binding (p, stage, "a", size, NULL);
  if (with_host)
    tg_producer_add_host_stage (p, "upload", host_flags, chain_upload, c, NULL, NULL);
  stage = tg_producer_add_device_stage (p, "seed-b", TG_STAGE_CAPTURE_SAFE,
                                        chain_seed_b, c, NULL, NULL);
  tg_producer_declare_binding (p, stage, "b", size, NULL);
  tg_producer_declare_binding (p, stage, "k", sizeof (guint32), NULL);
  stage = tg_producer_add_device_stage (p, "combine", TG_STAGE_CAPTURE_SAFE,
                                        chain_combine, c, NULL, NULL);
  tg_producer_declare_binding (p, stage, "a", size, NULL);
  tg_producer_declare_binding (p, stage, "b", size, NULL);
  g_assert_true (tg_producer_bind (p, "param", c->param, sizeof (guint32), &error));
  g_assert_true (tg_producer_bind (p, "k", c->k, sizeof (guint32), &error));
  g_assert_true (tg_producer_bind (p, "a", c->a, size, &error));
  g_assert_true (tg_producer_bind (p, "b", c->b, size, &error));
  g_assert_no_error (error);
  c->producer = p;
  return c;
}

void
tg_test_chain_free (TgTestChain *c)
{
  g_clear_pointer (&c->producer, tg_producer_unref);
  tg_test_device_free (c->param);
  tg_test_device_free (c->k);
  tg_test_device_free (c->a);
  tg_test_device_free (c->b);
  TG_TEST_CUDA (cudaFreeHost (c->host_k));
  g_free (c);
}

void
tg_test_chain_set_inputs (TgTestChain *c, guint32 param, guint32 k)
{
  TG_TEST_CUDA (cudaDeviceSynchronize ());
  tg_test_upload (c->param, &param, sizeof param);
  tg_test_upload (c->k, &k, sizeof k);
  *c->host_k = k;
}

void
tg_test_chain_read (TgTestChain *c, guint32 *b)
{
  TG_TEST_CUDA (cudaDeviceSynchronize ());
  tg_test_download (b, c->b, c->n * sizeof (guint32));
}

void
tg_test_chain_expect (guint32 n, guint32 param, guint32 k, guint32 *b)
{
  g_autofree guint32 *a = g_new (guint32, n);

  for (guint32 i = 0; i < n; i++)
    {
      guint32 x = tgt_hash (i, param);
      a[i] = x * TG_TEST_CHAIN_MIX + ((x >> 7) ^ i);
    }
  for (guint32 i = 0; i < n; i++)
    b[i] = tgt_hash (i, k) + a[(guint64)i * 7 % n];
}

guint32
tg_test_read_u32 (const guint32 *device)
{
  guint32 value = 0;

  tg_test_download (&value, device, sizeof value);
  return value;
}

gboolean
tg_test_count_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (tgt_launch_count (tg_launch_get_stream (launch), data),
                           error);
}

gboolean
tg_test_count_bound_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (tgt_launch_count (tg_launch_get_stream (launch),
                                             tg_launch_get_binding (launch, "counter")),
                           error);
}

gboolean
tg_test_optional_count_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  /* Not declared, since it may be unbound: looked up on the producer. */
  guint32 *extra
      = tg_producer_get_binding (tg_launch_get_producer (launch), "extra", NULL);

  /* The topology depends on a binding: one kernel more when bound. */
  if (extra != NULL
      && tgt_launch_count (tg_launch_get_stream (launch), extra) != cudaSuccess)
    return FALSE;
  return tgt_launch_count (tg_launch_get_stream (launch),
                           tg_launch_get_binding (launch, "counter"))
         == cudaSuccess;
}

TgProducer *
tg_test_counter_producer (guint32 *counter, TgStageFlags flags, TgDeviceFunc func)
{
  TgProducer *p = tg_producer_new ("count", 0);
  g_autoptr (GError) error = NULL;
  guint stage
      = tg_producer_add_device_stage (p, "count", flags, func, NULL, NULL, NULL);

  tg_producer_declare_binding (p, stage, "counter", sizeof (guint32), NULL);
  g_assert_true (tg_producer_bind (p, "counter", counter, sizeof (guint32), &error));
  g_assert_no_error (error);
  return p;
}

static gint kept_alive;

static void
kept_release (gpointer data)
{
  g_atomic_int_add (&kept_alive, -1);
}

void
tg_test_keep_token (const TgLaunch *launch)
{
  g_atomic_int_inc (&kept_alive);
  tg_launch_keep (launch, NULL, kept_release);
}

gint
tg_test_kept_alive (void)
{
  return g_atomic_int_get (&kept_alive);
}

void
tg_test_kept_reset (void)
{
  g_atomic_int_set (&kept_alive, 0);
}

gboolean
tg_test_keeping_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  tg_test_keep_token (launch);
  return tg_test_count_bound_stage (launch, data, error);
}

gboolean
tg_test_loop_setup_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (
      tgt_launch_loop_setup (
          tg_launch_get_stream (launch), tg_launch_get_binding (launch, "value"),
          tg_launch_get_binding (launch, "loop_flag"),
          tg_launch_get_binding (launch, "target"),
          tg_launch_get_binding (launch, "setup_at"), GPOINTER_TO_INT (data)),
      error);
}

gboolean
tg_test_relax_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (
      tgt_launch_relax (tg_launch_get_stream (launch),
                        tg_launch_get_binding (launch, "value"),
                        tg_launch_get_binding (launch, "loop_flag"),
                        tg_launch_get_binding (launch, "target")),
      error);
}

guint32
tg_test_chain_param (guint call)
{
  return 1000 + 77 * call;
}

guint32
tg_test_chain_k (guint call)
{
  return 5 + 13 * call;
}

static gboolean
counted_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  TgTestCounted *c = data;

  g_atomic_int_inc (&c->calls);
  return tg_test_launched (tgt_launch_seed (tg_launch_get_stream (launch),
                                            tg_launch_get_binding (launch, "out"),
                                            TG_TEST_COUNTED_N,
                                            tg_launch_get_binding (launch, "param")),
                           error);
}

TgProducer *
tg_test_counted_new (TgTestCounted *c, TgStageFlags flags)
{
  const gsize size = TG_TEST_COUNTED_N * sizeof (guint32);
  TgProducer *p = tg_producer_new ("counted", 0);
  g_autoptr (GError) error = NULL;
  guint s
      = tg_producer_add_device_stage (p, "seed", flags, counted_stage, c, NULL, NULL);

  tg_producer_declare_binding (p, s, "out", size, NULL);
  tg_producer_declare_binding (p, s, "param", sizeof (guint32), NULL);
  g_assert_true (tg_producer_bind (p, "out", c->out, size, &error));
  g_assert_true (tg_producer_bind (p, "param", c->param, sizeof (guint32), &error));
  g_assert_no_error (error);
  return p;
}

void
tg_test_counted_init (TgTestCounted *c, guint32 param)
{
  c->out = tg_test_device_alloc (TG_TEST_COUNTED_N * sizeof (guint32));
  c->param = tg_test_device_alloc (sizeof (guint32));
  tg_test_upload (c->param, &param, sizeof param);
  c->calls = 0;
}

void
tg_test_counted_clear (TgTestCounted *c)
{
  tg_test_device_free (c->out);
  tg_test_device_free (c->param);
}

void
tg_test_counted_expect (TgTestCounted *c, guint32 param)
{
  g_autofree guint32 *host = g_new (guint32, TG_TEST_COUNTED_N);

  tg_test_download (host, c->out, TG_TEST_COUNTED_N * sizeof (guint32));
  for (guint i = 0; i < TG_TEST_COUNTED_N; i++)
    g_assert_cmpuint (host[i], ==, tgt_hash (i, param));
}

cudaGraph_t
tg_test_begin_caller_capture (cudaStream_t stream, guint32 *counter)
{
  enum cudaStreamCaptureStatus status;
  cudaGraph_t graph = NULL;

  TG_TEST_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeGlobal));
  TG_TEST_CUDA (tgt_launch_count (stream, counter));
  TG_TEST_CUDA (
      cudaStreamGetCaptureInfo (stream, &status, NULL, &graph, NULL, NULL, NULL));
  g_assert_cmpint (status, ==, cudaStreamCaptureStatusActive);
  return graph;
}

cudaGraphExec_t
tg_test_end_caller_capture (cudaStream_t stream)
{
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;

  TG_TEST_CUDA (cudaStreamEndCapture (stream, &graph));
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  return exec;
}

void
tg_test_replay_caller_capture (cudaGraphExec_t exec, cudaStream_t stream,
                               guint32 *counter)
{
  guint32 count = 0;

  TG_TEST_CUDA (cudaGraphLaunch (exec, stream));
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
  tg_test_download (&count, counter, sizeof count);
  g_assert_cmpuint (count, ==, 1);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
}

void
tg_test_expect_refusal (TgProducer *p, cudaStream_t stream, TgPolicy policy,
                        TgCondition condition, GQuark domain, gint code)
{
  guint32 *counter = tg_test_device_alloc (sizeof (guint32));
  cudaGraph_t graph = tg_test_begin_caller_capture (stream, counter);
  gsize before = tg_test_graph_n_nodes (graph);
  g_autoptr (GError) error = NULL;

  g_assert_false (tg_producer_run (p, stream, policy, condition, &error));
  g_assert_error (error, domain, code);
  g_test_message ("refused as expected: %s", error->message);
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, before);
  g_assert_true (tg_stream_is_capturing (stream));
  tg_test_replay_caller_capture (tg_test_end_caller_capture (stream), stream, counter);
  tg_test_device_free (counter);
}

/* Runs @p once under @policy and @condition on @stream, through a caller's
 * capture (instantiated and launched once) for RECORD, and waits. */
void
tg_test_run_once (cudaStream_t stream, TgProducer *p, TgPolicy policy, TgCondition condition)
{
  g_autoptr (GError) error = NULL;

  if (policy == TG_POLICY_RECORD)
    {
      cudaGraph_t graph = NULL;
      cudaGraphExec_t exec = NULL;
      gboolean ok;

      TG_TEST_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal));
      ok = tg_producer_run (p, stream, policy, condition, &error);
      g_assert_no_error (error);
      g_assert_true (ok);
      TG_TEST_CUDA (cudaStreamEndCapture (stream, &graph));
      TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
      TG_TEST_CUDA (cudaGraphLaunch (exec, stream));
      TG_TEST_CUDA (cudaStreamSynchronize (stream));
      TG_TEST_CUDA (cudaGraphExecDestroy (exec));
      TG_TEST_CUDA (cudaGraphDestroy (graph));
    }
  else
    {
      gboolean ok = tg_producer_run (p, stream, policy, condition, &error);

      g_assert_no_error (error);
      g_assert_true (ok);
    }
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
}
