/* track-kernels.h: launchers of the track producer's kernels
 * (track-kernels.cu), in plain C.  Each enqueues on @stream and returns the
 * launch's own cudaError_t.  The per-env kernels give each env a block of
 * TRACK_BLOCK threads, one env after another, and take only the envs that
 * track_launch_list() listed (a TrackList, track-shape.h). */
#ifndef TRACK_KERNELS_H
#define TRACK_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <trackgen/kernel.h>

#include "track-shape.h"

/* Lists the envs whose mask byte is non-zero: their ids into @ids (in an
 * order that varies from run to run) and their number into list->n, which
 * the kernels below read when they run; with @epochs (a seed state's), adds
 * 1 to each listed env's epoch, wrapping, as tg_seed_state_advance() does.
 * The only kernel here whose cost grows with @n_envs: a byte an env. */
TRACK_EXTERN_C cudaError_t track_launch_list (cudaStream_t stream, uint32_t n_envs,
                                              const uint8_t *mask, uint32_t *epochs,
                                              uint32_t *ids, TrackList *list);

/* The kernels below run @n_blocks blocks (fixed when a graph captures them)
 * that loop over the listed envs; blocks past the list leave at once. */

/* Listed envs: the K control points of @family (a TrackFamily; others are
 * cudaErrorInvalidValue) drawn from tg_effective_seed(seeds[e], epochs[e])
 * into @control (K per env), families[e] := @family, and the closed
 * Catmull-Rom curve through the control points, resampled to N points
 * evenly spaced by arc length, into @points, with its sharpness; *flag :=
 * whether a listed env's sharpness is over 1.  Sets *generated to 1,
 * whatever the list. */
TRACK_EXTERN_C cudaError_t track_launch_generate (
    cudaStream_t stream, int family, TrackShape shape, uint32_t n_blocks,
    TrackList *list, const uint32_t *ids, const uint64_t *seeds, const uint32_t *epochs,
    float2 *control, uint8_t *families, float2 *points, float *sharpness, int32_t *flag,
    int32_t *generated);

/* One iteration of the relaxation: listed envs still too sharp (sharpness >
 * 1) get a few passes of local Laplacian smoothing around their sharp
 * points, then their new sharpness; *flag := whether one is still too
 * sharp, and the iteration ends with tg_loop_next (@loop, !*flag), so the
 * loop goes on while an env is too sharp, up to its cap. */
TRACK_EXTERN_C cudaError_t track_launch_relax (cudaStream_t stream, TrackShape shape,
                                               uint32_t n_blocks, TrackList *list,
                                               const uint32_t *ids, float2 *points,
                                               float *sharpness, int32_t *flag,
                                               TgDeviceLoop loop);

/* When *generated is set (a case ran), listed envs: valid[e] = no two
 * segments cross, and points far apart along the track are at least the
 * track width apart; then clears *flag and *generated: the next call starts
 * with nothing generated and nothing left to relax.  Else nothing. */
TRACK_EXTERN_C cudaError_t track_launch_validate (cudaStream_t stream, TrackShape shape,
                                                  uint32_t n_blocks, TrackList *list,
                                                  const uint32_t *ids,
                                                  const float2 *points, uint8_t *valid,
                                                  int32_t *flag, int32_t *generated);

#endif /* TRACK_KERNELS_H */
