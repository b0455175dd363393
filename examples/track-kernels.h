/* track-kernels.h: launchers of the track producer's kernels
 * (track-kernels.cu), in plain C.  Each enqueues on @stream and returns the
 * launch's own cudaError_t.  The per-env kernels run one block of
 * TRACK_BLOCK threads per env and return at once for envs whose mask byte is
 * 0. */
#ifndef TRACK_KERNELS_H
#define TRACK_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "track-shape.h"

/* Masked envs: control points from tg_effective_seed(seeds[e], epochs[e]),
 * the resampled Catmull-Rom centerline into @points, its sharpness. */
TRACK_EXTERN_C cudaError_t track_launch_generate (
    cudaStream_t stream, TrackShape shape, uint32_t n_envs, const uint64_t *seeds,
    const uint32_t *epochs, const uint8_t *mask, float2 *points, float *sharpness);

/* Masked envs still too sharp (sharpness > 1): a few passes of local
 * Laplacian smoothing around their sharp points, then their new sharpness. */
TRACK_EXTERN_C cudaError_t track_launch_relax (cudaStream_t stream, TrackShape shape,
                                               uint32_t n_envs, const uint8_t *mask,
                                               float2 *points, float *sharpness);

/* One block: *flag = whether a masked env's sharpness is over 1. */
TRACK_EXTERN_C cudaError_t track_launch_reduce_flag (cudaStream_t stream,
                                                     uint32_t n_envs,
                                                     const uint8_t *mask,
                                                     const float *sharpness,
                                                     int32_t *flag);

/* Masked envs: valid[e] = no two segments cross, and points far apart along
 * the track are at least the track width apart. */
TRACK_EXTERN_C cudaError_t track_launch_validate (cudaStream_t stream, TrackShape shape,
                                                  uint32_t n_envs, const uint8_t *mask,
                                                  const float2 *points, uint8_t *valid);

#endif /* TRACK_KERNELS_H */
