/* SPDX-License-Identifier: Apache-2.0 */
/* driver.c: calls made through the driver API.
 *
 * A REPLAY call is one capture query and one graph launch, and its target is
 * 3% over a bare cuGraphLaunch: the runtime's wrappers around these two
 * driver calls cost more than that (bench/exec-bench.c prints both), and so
 * would a once-check per call, so their entry points are published on their
 * own (tg__driver_hot) and read with one load.  The entry points come from
 * the runtime, so nothing links libcuda.  Whenever the
 * driver does not answer with success (no entry point, no current context on
 * this thread, a real error), the runtime call is made instead: it owns the
 * error codes, and a failed launch or query has done nothing to repeat.
 *
 * The driver also answers two questions the runtime cannot without harm:
 * which device a capturing stream belongs to (cudaStreamGetDevice
 * invalidates the capture), and how large the allocation behind a device
 * pointer is (to check a buffer's size against the memory behind it). */
#include "config.h"
#include "driver-private.h"
#include "error-private.h"
#include "tsan-private.h"

G_STATIC_ASSERT ((int)CU_STREAM_CAPTURE_STATUS_NONE
                 == (int)cudaStreamCaptureStatusNone);
G_STATIC_ASSERT ((int)CU_STREAM_CAPTURE_STATUS_ACTIVE
                 == (int)cudaStreamCaptureStatusActive);
G_STATIC_ASSERT ((int)CU_STREAM_CAPTURE_STATUS_INVALIDATED
                 == (int)cudaStreamCaptureStatusInvalidated);

typedef struct
{
  PFN_cuStreamGetCtx_v9020 stream_get_ctx;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current;
  PFN_cuCtxPushCurrent_v4000 ctx_push;
  PFN_cuCtxPopCurrent_v4000 ctx_pop;
  PFN_cuCtxGetDevice_v2000 ctx_get_device;
  PFN_cuMemGetAddressRange_v3020 mem_get_range;
  PFN_cuDeviceGet_v2000 device_get;
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_retain;
} Driver;

gpointer
tg__driver_entry_point (const char *symbol)
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
      tg__cuda_clear (err);
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
      d.stream_get_ctx = tg__driver_entry_point ("cuStreamGetCtx");
      d.ctx_get_current = tg__driver_entry_point ("cuCtxGetCurrent");
      d.ctx_push = tg__driver_entry_point ("cuCtxPushCurrent");
      d.ctx_pop = tg__driver_entry_point ("cuCtxPopCurrent");
      d.ctx_get_device = tg__driver_entry_point ("cuCtxGetDevice");
      d.mem_get_range = tg__driver_entry_point ("cuMemGetAddressRange");
      d.device_get = tg__driver_entry_point ("cuDeviceGet");
      d.primary_retain = tg__driver_entry_point ("cuDevicePrimaryCtxRetain");
      /* Published on their own: the hot path reads them without the once. */
      g_atomic_pointer_set (&tg__driver_hot.is_capturing,
                            tg__driver_entry_point ("cuStreamIsCapturing"));
      g_atomic_pointer_set (&tg__driver_hot.graph_launch,
                            tg__driver_entry_point ("cuGraphLaunch"));
      TG_TSAN_RELEASE (&ready);
      g_once_init_leave (&ready, 1);
    }
  TG_TSAN_ACQUIRE (&ready);
  return &d;
}

TgDriverHot tg__driver_hot;

cudaError_t
tg__stream_is_capturing_slow (cudaStream_t stream, gboolean tried,
                              enum cudaStreamCaptureStatus *status)
{
  PFN_cuStreamIsCapturing_v10000 is_capturing;
  CUstreamCaptureStatus s;

  (void)driver ();
  is_capturing = g_atomic_pointer_get (&tg__driver_hot.is_capturing);
  if (!tried && is_capturing != NULL
      && is_capturing ((CUstream)stream, &s) == CUDA_SUCCESS)
    {
      *status = (enum cudaStreamCaptureStatus)s;
      return cudaSuccess;
    }
  return cudaStreamIsCapturing (stream, status);
}

cudaError_t
tg__graph_launch_slow (cudaGraphExec_t exec, cudaStream_t stream, gboolean tried)
{
  PFN_cuGraphLaunch_v10000 graph_launch;

  (void)driver ();
  graph_launch = g_atomic_pointer_get (&tg__driver_hot.graph_launch);
  if (!tried && graph_launch != NULL
      && graph_launch ((CUgraphExec)exec, (CUstream)stream) == CUDA_SUCCESS)
    return cudaSuccess;
  return cudaGraphLaunch (exec, stream);
}

/* The runtime works in each device's primary context.  Retained once for
 * the process's life, so the handle stays that context's: comparing it with
 * the current context or a stream's is a cheap exact test of the device. */
#define MAX_PRIMARY 64
static gpointer primary[MAX_PRIMARY];

gpointer
tg__primary_context (int device)
{
  const Driver *d = driver ();
  gpointer ctx;
  CUdevice dev;
  CUcontext c = NULL;

  if (device < 0 || device >= MAX_PRIMARY)
    return NULL;
  if ((ctx = g_atomic_pointer_get (&primary[device])) != NULL)
    return ctx;
  if (d->device_get == NULL || d->primary_retain == NULL
      || d->device_get (&dev, device) != CUDA_SUCCESS
      || d->primary_retain (&c, dev) != CUDA_SUCCESS)
    return NULL;
  /* A thread that lost the race keeps an extra reference: harmless. */
  (void)g_atomic_pointer_compare_and_exchange (&primary[device], NULL, c);
  return g_atomic_pointer_get (&primary[device]);
}

gpointer
tg__current_context (void)
{
  const Driver *d = driver ();
  CUcontext c = NULL;

  if (d->ctx_get_current == NULL || d->ctx_get_current (&c) != CUDA_SUCCESS)
    return NULL;
  return c;
}

cudaError_t
tg__stream_get_device (cudaStream_t stream, int expected, int *device)
{
  const Driver *d = driver ();
  CUcontext ctx = NULL, current = NULL;
  CUdevice dev = 0;
  gboolean pushed;

  if (d->stream_get_ctx == NULL
      || d->stream_get_ctx ((CUstream)stream, &ctx) != CUDA_SUCCESS)
    return cudaErrorNotSupported;
  /* The common answer in one comparison. */
  if (ctx != NULL && (gpointer)ctx == tg__primary_context (expected))
    {
      *device = expected;
      return cudaSuccess;
    }
  if (d->ctx_get_current == NULL || d->ctx_push == NULL || d->ctx_pop == NULL
      || d->ctx_get_device == NULL || d->ctx_get_current (&current) != CUDA_SUCCESS)
    return cudaErrorNotSupported;
  /* Only the context's device is wanted: make it current for one query. */
  pushed = ctx != current && d->ctx_push (ctx) == CUDA_SUCCESS;
  if (ctx != current && !pushed)
    return cudaErrorNotSupported;
  if (d->ctx_get_device (&dev) != CUDA_SUCCESS)
    dev = -1;
  if (pushed)
    (void)d->ctx_pop (&ctx);
  if (dev < 0)
    return cudaErrorNotSupported;
  *device = dev;
  return cudaSuccess;
}

cudaError_t
tg__mem_get_range (gconstpointer ptr, gconstpointer *base, gsize *size)
{
  const Driver *d = driver ();
  CUdeviceptr b = 0;
  size_t n = 0;
  CUresult r;

  if (d->mem_get_range == NULL)
    return cudaErrorNotSupported;
  r = d->mem_get_range (&b, &n, (CUdeviceptr)(guintptr)ptr);
  if (r == CUDA_ERROR_NOT_FOUND || r == CUDA_ERROR_INVALID_VALUE)
    return cudaErrorInvalidValue;
  if (r != CUDA_SUCCESS)
    return cudaErrorNotSupported;
  *base = (gconstpointer)(guintptr)b;
  *size = n;
  return cudaSuccess;
}
