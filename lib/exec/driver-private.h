/* SPDX-License-Identifier: Apache-2.0 */
/* driver-private.h: the CUDA calls made through the driver API, where it
 * answers: REPLAY's hot path, and the queries the runtime cannot make
 * without disturbing a capture.  Private to libtrackgen. */
#ifndef TG_DRIVER_PRIVATE_H
#define TG_DRIVER_PRIVATE_H

#include <trackgen/exec.h>

#include <cudaTypedefs.h>

G_BEGIN_DECLS

/* The driver's entry point @symbol (CUDA 12.0 ABI), or NULL when the driver
 * has none; a caller's pending runtime error is left as it was. */
gpointer tg__driver_entry_point (const char *symbol);

/* The entry points of REPLAY's hot path, read with one load each and no
 * once-check: NULL until driver.c looked them up (the first call through
 * them does), and for good when the driver has none. */
typedef struct
{
  PFN_cuStreamIsCapturing_v10000 is_capturing;
  PFN_cuGraphLaunch_v10000 graph_launch;
} TgDriverHot;

extern TgDriverHot tg__driver_hot;

/* The slow halves of the two calls below: the entry points looked up on
 * first use (and the driver asked, unless @tried says it answered already
 * with an error), else the runtime's call, which owns the error codes. */
cudaError_t tg__stream_is_capturing_slow (cudaStream_t stream, gboolean tried,
                                          enum cudaStreamCaptureStatus *status);
cudaError_t tg__graph_launch_slow (cudaGraphExec_t exec, cudaStream_t stream,
                                   gboolean tried);

/* cudaStreamIsCapturing, with the same results and errors: the driver's
 * answer when it succeeds (one indirect call), else the runtime's. */
static inline cudaError_t
tg__stream_is_capturing (cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
  PFN_cuStreamIsCapturing_v10000 is_capturing
      = g_atomic_pointer_get (&tg__driver_hot.is_capturing);
  CUstreamCaptureStatus s;

  if (G_LIKELY (is_capturing != NULL)
      && is_capturing ((CUstream)stream, &s) == CUDA_SUCCESS)
    {
      *status = (enum cudaStreamCaptureStatus)s;
      return cudaSuccess;
    }
  return tg__stream_is_capturing_slow (stream, is_capturing != NULL, status);
}

/* cudaGraphLaunch, with the same results and errors, likewise. */
static inline cudaError_t
tg__graph_launch (cudaGraphExec_t exec, cudaStream_t stream)
{
  PFN_cuGraphLaunch_v10000 graph_launch
      = g_atomic_pointer_get (&tg__driver_hot.graph_launch);

  if (G_LIKELY (graph_launch != NULL)
      && graph_launch ((CUgraphExec)exec, (CUstream)stream) == CUDA_SUCCESS)
    return cudaSuccess;
  return tg__graph_launch_slow (exec, stream, graph_launch != NULL);
}

/* The device of @stream's context, found in one comparison when it is
 * @expected's primary context.  Unlike cudaStreamGetDevice, which
 * invalidates a capture in progress on @stream, this leaves it intact.
 * cudaErrorNotSupported when the driver cannot answer. */
cudaError_t tg__stream_get_device (cudaStream_t stream, int expected, int *device);

/* The primary context of @device (the runtime's), retained for the
 * process's life; NULL when the driver cannot say. */
gpointer tg__primary_context (int device);

/* The calling thread's current context, or NULL. */
gpointer tg__current_context (void);

/* The allocation holding device address @ptr: its base and size.
 * cudaErrorInvalidValue when @ptr is in no device allocation the driver
 * knows, cudaErrorNotSupported when the driver cannot answer. */
cudaError_t tg__mem_get_range (gconstpointer ptr, gconstpointer *base, gsize *size);

G_END_DECLS

#endif
