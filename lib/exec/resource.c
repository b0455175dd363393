/* resource.c: counted creation and destruction of CUDA objects. */
#include "config.h"
#include "resource-private.h"

static gint live[TG_LIVE_N];

void
tg__live_add (TgLiveKind kind, gint delta)
{
  g_atomic_int_add (&live[kind], delta);
}

void
tg_get_live_objects (TgLiveObjects *out)
{
  g_return_if_fail (out != NULL);
  out->producers = g_atomic_int_get (&live[TG_LIVE_PRODUCERS]);
  out->graphs = g_atomic_int_get (&live[TG_LIVE_GRAPHS]);
  out->graph_execs = g_atomic_int_get (&live[TG_LIVE_GRAPH_EXECS]);
  out->streams = g_atomic_int_get (&live[TG_LIVE_STREAMS]);
  out->captures = g_atomic_int_get (&live[TG_LIVE_CAPTURES]);
}

enum cudaStreamCaptureMode
tg__relaxed_begin (void)
{
  enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  (void)cudaThreadExchangeStreamCaptureMode (&mode);
  return mode;
}

void
tg__relaxed_end (enum cudaStreamCaptureMode saved)
{
  (void)cudaThreadExchangeStreamCaptureMode (&saved);
}

cudaStream_t
tg__stream_new (GError **error)
{
  cudaStream_t stream = NULL;
  enum cudaStreamCaptureMode mode = tg__relaxed_begin ();
  gboolean ok
      = TG_CUDA_OK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking), error);
  tg__relaxed_end (mode);
  if (!ok)
    return NULL;
  tg__live_add (TG_LIVE_STREAMS, 1);
  return stream;
}

void
tg__stream_free (cudaStream_t stream)
{
  if (stream == NULL)
    return;
  (void)cudaStreamDestroy (stream);
  tg__live_add (TG_LIVE_STREAMS, -1);
}

gboolean
tg__graph_instantiate (cudaGraph_t graph, cudaGraphExec_t *exec, GError **error)
{
  cudaError_t status = cudaGraphInstantiate (exec, graph, 0);

  if (status != cudaSuccess)
    {
      (void)cudaGetLastError ();
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED,
                     "cudaGraphInstantiate failed: %s (%s)", cudaGetErrorName (status),
                     cudaGetErrorString (status));
      *exec = NULL;
      return FALSE;
    }
  tg__live_add (TG_LIVE_GRAPH_EXECS, 1);
  return TRUE;
}

void
tg__graph_exec_free (cudaGraphExec_t exec)
{
  if (exec == NULL)
    return;
  (void)cudaGraphExecDestroy (exec);
  tg__live_add (TG_LIVE_GRAPH_EXECS, -1);
}

void
tg__graph_free (cudaGraph_t graph)
{
  if (graph == NULL)
    return;
  (void)cudaGraphDestroy (graph);
  tg__live_add (TG_LIVE_GRAPHS, -1);
}

gpointer
tg__host_alloc (gsize size, GError **error)
{
  gpointer ptr = NULL;
  enum cudaStreamCaptureMode mode = tg__relaxed_begin ();
  gboolean ok = TG_CUDA_OK (cudaMallocHost (&ptr, size), error);
  tg__relaxed_end (mode);
  return ok ? ptr : NULL;
}

void
tg__host_free (gpointer ptr)
{
  if (ptr != NULL)
    (void)cudaFreeHost (ptr);
}
