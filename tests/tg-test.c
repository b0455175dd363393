/* tg-test.c: shared helpers of the test programs. */
#include "config.h"
#include "tg-test.h"

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
      (void) cudaGetLastError ();
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
  TgLiveObjects now;

  g_assert_true (tg_release_wait (5 * G_USEC_PER_SEC));
  tg_get_live_objects (&now);
  g_assert_cmpint (now.producers, ==, before->producers);
  g_assert_cmpint (now.graphs, ==, before->graphs);
  g_assert_cmpint (now.graph_execs, ==, before->graph_execs);
  g_assert_cmpint (now.streams, ==, before->streams);
  g_assert_cmpint (now.captures, ==, 0);
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

gpointer
tg_test_device_alloc (gsize size)
{
  gpointer ptr = NULL;

  TG_TEST_CUDA (cudaMalloc (&ptr, size));
  TG_TEST_CUDA (cudaMemset (ptr, 0, size));
  return ptr;
}

void
tg_test_device_free (gpointer ptr)
{
  TG_TEST_CUDA (cudaFree (ptr));
}

void
tg_test_upload (gpointer device_dst, gconstpointer host_src, gsize size)
{
  TG_TEST_CUDA (cudaMemcpy (device_dst, host_src, size, cudaMemcpyHostToDevice));
}

void
tg_test_download (gpointer host_dst, gconstpointer device_src, gsize size)
{
  TG_TEST_CUDA (cudaMemcpy (host_dst, device_src, size, cudaMemcpyDeviceToHost));
}

cudaStream_t
tg_test_stream_new (void)
{
  cudaStream_t stream = NULL;

  TG_TEST_CUDA (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  return stream;
}
