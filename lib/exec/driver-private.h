/* driver-private.h: the CUDA calls of REPLAY's hot path, made through the
 * driver API where it answers.  Private to libtrackgen. */
#ifndef TG_DRIVER_PRIVATE_H
#define TG_DRIVER_PRIVATE_H

#include <trackgen/exec.h>

G_BEGIN_DECLS

/* cudaStreamIsCapturing, with the same results and errors. */
cudaError_t tg__stream_is_capturing (cudaStream_t stream,
                                     enum cudaStreamCaptureStatus *status);

/* cudaGraphLaunch, with the same results and errors. */
cudaError_t tg__graph_launch (cudaGraphExec_t exec, cudaStream_t stream);

G_END_DECLS

#endif
