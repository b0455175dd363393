/* track-kernels.h: launchers of the track producer's kernels
 * (track-kernels.cu).  Each enqueues on @stream and returns the launch's
 * cudaError_t.  The per-env kernels run one block of TRACK_BLOCK threads per
 * env and return at once for envs whose mask byte is 0. */
#ifndef TRACK_KERNELS_H
#define TRACK_KERNELS_H

#include "track-producer.h"

G_BEGIN_DECLS

/* Masked envs: control points from tg_effective_seed(seeds[e], epochs[e]),
 * the resampled Catmull-Rom centerline into @points, its sharpness. */
cudaError_t track_launch_generate (cudaStream_t stream, TrackShape shape, guint n_envs,
                                   const guint64 *seeds, const guint32 *epochs,
                                   const guint8 *mask, float2 *points,
                                   float *sharpness);

/* Masked envs still too sharp (sharpness > 1): a few passes of local
 * Laplacian smoothing around their sharp points, then their new sharpness. */
cudaError_t track_launch_relax (cudaStream_t stream, TrackShape shape, guint n_envs,
                                const guint8 *mask, float2 *points, float *sharpness);

/* One block: *flag = whether a masked env's sharpness is over 1. */
cudaError_t track_launch_reduce_flag (cudaStream_t stream, guint n_envs,
                                      const guint8 *mask, const float *sharpness,
                                      gint32 *flag);

/* Masked envs: valid[e] = no two segments cross, and points far apart along
 * the track are at least the track width apart. */
cudaError_t track_launch_validate (cudaStream_t stream, TrackShape shape, guint n_envs,
                                   const guint8 *mask, const float2 *points,
                                   guint8 *valid);

G_END_DECLS

#endif /* TRACK_KERNELS_H */
