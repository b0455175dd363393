/* driver.c: cudaStreamIsCapturing and cudaGraphLaunch through the driver.
 *
 * A REPLAY call is one capture query and one graph launch, and its target is
 * 5% over a bare cudaGraphLaunch: the runtime's wrappers around these two
 * driver calls cost more than that (bench/exec-bench.c prints both).  The
 * entry points come from the runtime, so nothing links libcuda.  Whenever the
 * driver does not answer with success (no entry point, no current context on
 * this thread, a real error), the runtime call is made instead: it owns the
 * error codes, and a failed launch or query has done nothing to repeat. */
#include "config.h"
#include "driver-private.h"

#include <cudaTypedefs.h>

G_STATIC_ASSERT ((int)CU_STREAM_CAPTURE_STATUS_NONE
                 == (int)cudaStreamCaptureStatusNone);
G_STATIC_ASSERT ((int)CU_STREAM_CAPTURE_STATUS_ACTIVE
                 == (int)cudaStreamCaptureStatusActive);
G_STATIC_ASSERT ((int)CU_STREAM_CAPTURE_STATUS_INVALIDATED
                 == (int)cudaStreamCaptureStatusInvalidated);

typedef struct
{
  PFN_cuStreamIsCapturing_v10000 is_capturing;
  PFN_cuGraphLaunch_v10000 graph_launch;
} Driver;

static gpointer
entry_point (const char *symbol)
{
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  void *fn = NULL;
  cudaError_t err;

#if CUDART_VERSION >= 12050
  err = cudaGetDriverEntryPointByVersion (symbol, &fn, 12000, cudaEnableDefault,
                                          &found);
#else
  err = cudaGetDriverEntryPoint (symbol, &fn, cudaEnableDefault, &found);
#endif
  if (err != cudaSuccess || found != cudaDriverEntryPointSuccess)
    {
      (void)cudaGetLastError ();
      return NULL;
    }
  return fn;
}

static const Driver *
driver (void)
{
  static Driver d;
  static gsize ready;

  if (g_once_init_enter (&ready))
    {
      d.is_capturing = entry_point ("cuStreamIsCapturing");
      d.graph_launch = entry_point ("cuGraphLaunch");
      g_once_init_leave (&ready, 1);
    }
  return &d;
}

cudaError_t
tg__stream_is_capturing (cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
  const Driver *d = driver ();
  CUstreamCaptureStatus s;

  if (d->is_capturing != NULL && d->is_capturing ((CUstream)stream, &s) == CUDA_SUCCESS)
    {
      *status = (enum cudaStreamCaptureStatus)s;
      return cudaSuccess;
    }
  return cudaStreamIsCapturing (stream, status);
}

cudaError_t
tg__graph_launch (cudaGraphExec_t exec, cudaStream_t stream)
{
  const Driver *d = driver ();

  if (d->graph_launch != NULL
      && d->graph_launch ((CUgraphExec)exec, (CUstream)stream) == CUDA_SUCCESS)
    return cudaSuccess;
  return cudaGraphLaunch (exec, stream);
}
