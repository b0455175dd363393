/* track-kernels.h: launchers of the track producer's kernels
 * (track-kernels.cu), in plain C.  Each enqueues on @stream and returns the
 * launch's own cudaError_t.  The per-env kernels run one block of
 * TRACK_BLOCK threads per env and return at once for envs whose mask byte is
 * 0. */
#ifndef TRACK_KERNELS_H
#define TRACK_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <trackgen/kernel.h>

#include "track-shape.h"

/* Masked envs: the K control points of @family (a TrackFamily; others are
 * cudaErrorInvalidValue) drawn from tg_effective_seed(seeds[e], epochs[e])
 * into @control (K per env), and families[e] := @family.  One thread per
 * control point. */
TRACK_EXTERN_C cudaError_t track_launch_control (cudaStream_t stream, int family,
                                                 TrackShape shape, uint32_t n_envs,
                                                 const uint64_t *seeds,
                                                 const uint32_t *epochs,
                                                 const uint8_t *mask, float2 *control,
                                                 uint8_t *families);

/* Masked envs: the closed Catmull-Rom curve through their control points,
 * resampled to N points evenly spaced by arc length, into @points, and its
 * sharpness.  Sets *generated to 1, whatever the mask. */
TRACK_EXTERN_C cudaError_t track_launch_centerline (
    cudaStream_t stream, TrackShape shape, uint32_t n_envs, const uint8_t *mask,
    const float2 *control, float2 *points, float *sharpness, int32_t *generated);

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

/* The same, inside the relaxation loop: also ends the iteration, with
 * tg_loop_next (@loop, !*flag), so the loop goes on while an env is too
 * sharp, up to its cap. */
TRACK_EXTERN_C cudaError_t track_launch_reduce_next (cudaStream_t stream,
                                                     uint32_t n_envs,
                                                     const uint8_t *mask,
                                                     const float *sharpness,
                                                     int32_t *flag, TgDeviceLoop loop);

/* Masked envs: valid[e] = no two segments cross, and points far apart along
 * the track are at least the track width apart.  Clears *flag and
 * *generated: the next call starts with nothing generated and nothing left
 * to relax. */
TRACK_EXTERN_C cudaError_t track_launch_validate (cudaStream_t stream, TrackShape shape,
                                                  uint32_t n_envs, const uint8_t *mask,
                                                  const float2 *points, uint8_t *valid,
                                                  int32_t *flag, int32_t *generated);

#endif /* TRACK_KERNELS_H */
