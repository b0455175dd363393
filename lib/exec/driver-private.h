/* driver-private.h: the CUDA calls made through the driver API, where it
 * answers: REPLAY's hot path, and the queries the runtime cannot make
 * without disturbing a capture.  Private to libtrackgen. */
#ifndef TG_DRIVER_PRIVATE_H
#define TG_DRIVER_PRIVATE_H

#include <trackgen/exec.h>

G_BEGIN_DECLS

/* The driver's entry point @symbol (CUDA 12.0 ABI), or NULL when the driver
 * has none; a caller's pending runtime error is left as it was. */
gpointer tg__driver_entry_point (const char *symbol);

/* cudaStreamIsCapturing, with the same results and errors. */
cudaError_t tg__stream_is_capturing (cudaStream_t stream,
                                     enum cudaStreamCaptureStatus *status);

/* cudaGraphLaunch, with the same results and errors. */
cudaError_t tg__graph_launch (cudaGraphExec_t exec, cudaStream_t stream);

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
