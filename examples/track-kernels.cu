/* SPDX-License-Identifier: Apache-2.0 */
// track-kernels.cu: the kernels of on-demand generation, the track
// producer's stages: a listing kernel, then a generation, relaxation and
// validation kernel over the listed envs, each env's work done by the
// functions of track-env.cuh (shared with the lookahead's fused kernel).
//
// The listing kernel reads the mask of every env; the kernels after it take
// the listed envs alone (TrackList), on a grid fixed at capture that loops
// over the count read on the device: a call that regenerates one env costs
// about what one env costs, whatever the batch.  The list's order varies
// from run to run (its blocks append with atomics); no result depends on it.
#include <trackgen/kernel.h>

#include "launch.cuh"
#include "track-env.cuh"
#include "track-kernels.h"
#include "track-list.cuh"

// A block per listed env at a time: family F's control points (a thread
// each), the env's family, its centerline and sharpness; the last block sets
// the relaxation's flag.
template <int F>
static __global__ void
__launch_bounds__ (TRACK_BLOCK)
    generate_kernel (TrackShape shape, TrackList *list, const uint32_t *ids,
                     const uint64_t *seeds, const uint32_t *epochs, float2 *control,
                     uint8_t *families, float2 *points, float *sharpness, int32_t *flag,
                     int32_t *generated)
{
  extern __shared__ float2 smem[];
  const uint32_t n = list->n, blocks = list_blocks (n);
  int sharp = 0, any;

  if (blockIdx.x == 0 && threadIdx.x == 0) // whatever the list: validate runs
    *generated = 1;
  if (blockIdx.x >= blocks)
    return;
  for (uint32_t i = blockIdx.x; i < n; i += gridDim.x)
    {
      const uint32_t e = ids[i];
      const uint64_t key = tg_effective_seed (seeds[e], epochs[e]);
      float s;

      if (threadIdx.x == 0)
        families[e] = F;
      control_env (shape, F, key, smem, control + (size_t)e * shape.n_control);
      s = centerline_env (shape, points + (size_t)e * shape.n_points, smem);

      if (threadIdx.x == 0)
        sharpness[e] = s;
      sharp |= s > 1.f;
    }
  if ((any = last_block (list, blocks, sharp)) >= 0)
    *flag = any;
}

// One iteration of the relaxation: only the listed envs that are still too
// sharp are smoothed, so an env that converged is left as it is and its
// track does not depend on how long other envs keep the loop going.  The
// last block knows whether any env is still too sharp, so it ends the
// iteration itself (tg_loop_next) and no kernel of TrackGen's runs.
static __global__ void
__launch_bounds__ (TRACK_BLOCK)
    relax_kernel (TrackShape shape, TrackList *list, const uint32_t *ids,
                  float2 *points, float *sharpness, int32_t *flag, TgDeviceLoop loop)
{
  __shared__ float2 buf[2][TRACK_MAX_POINTS];
  __shared__ uint8_t hot[TRACK_MAX_POINTS];
  __shared__ float scratch[TRACK_BLOCK];
  const uint32_t n = list->n, blocks = list_blocks (n);
  int sharp = 0, any;

  if (blockIdx.x >= blocks)
    return;
  for (uint32_t i = blockIdx.x; i < n; i += gridDim.x)
    {
      const uint32_t e = ids[i];

      // Thread 0 decides for the block (it rewrites sharpness[e] after), so
      // the whole block smooths the env or skips it together.
      if (__syncthreads_or (threadIdx.x == 0 && sharpness[e] > 1.f))
        {
          float s = relax_env (shape, points + (size_t)e * shape.n_points, buf[0],
                               buf[1], hot, scratch);

          if (threadIdx.x == 0)
            sharpness[e] = s;
          sharp |= s > 1.f;
        }
    }
  if ((any = last_block (list, blocks, sharp)) >= 0)
    {
      *flag = any;
      tg_loop_next (loop, !any);
    }
}

// Only after a case of the switch ran (it set *generated): a call that
// generated nothing changes nothing, and needs no conditional node around
// this kernel, whose GPU time a taken IF would add to every regeneration.
static __global__ void
__launch_bounds__ (TRACK_BLOCK)
    validate_kernel (TrackShape shape, TrackList *list, const uint32_t *ids,
                     const float2 *points, uint8_t *valid, int32_t *flag,
                     int32_t *generated)
{
  __shared__ float2 pts[TRACK_MAX_POINTS];
  __shared__ float seg[TRACK_MAX_POINTS], arc[TRACK_MAX_POINTS];
  __shared__ float scratch[TRACK_BLOCK];
  const uint32_t n = list->n, blocks = list_blocks (n);

  // Thread 0 reads it for the block, before the block's ticket, so that the
  // last block clears it only once every block has read it.
  if (blockIdx.x >= blocks || !__syncthreads_or (threadIdx.x == 0 && *generated))
    return;
  for (uint32_t i = blockIdx.x; i < n; i += gridDim.x)
    {
      const uint32_t e = ids[i];
      bool ok = valid_env (shape, points + (size_t)e * shape.n_points, pts, seg, arc,
                           scratch);

      if (threadIdx.x == 0)
        valid[e] = ok;
    }
  // The last stage of a call: the next one starts with nothing generated and
  // nothing to relax, so a call whose switch runs no case changes nothing.
  if (last_block (list, blocks, 0) >= 0)
    *flag = *generated = 0;
}

extern "C" cudaError_t
track_launch_list (cudaStream_t stream, uint32_t n_envs, const uint8_t *mask,
                   uint32_t *epochs, uint32_t *ids, TrackList *list)
{
  uint64_t threads = ((uint64_t)n_envs + LIST_ENVS - 1) / LIST_ENVS;

  return launch_kernel (list_kernel,
                        (unsigned)((threads + LIST_BLOCK - 1) / LIST_BLOCK), LIST_BLOCK,
                        0, stream, n_envs, mask, epochs, ids, list);
}

extern "C" cudaError_t
track_launch_generate (cudaStream_t stream, int family, TrackShape shape,
                       uint32_t n_blocks, TrackList *list, const uint32_t *ids,
                       const uint64_t *seeds, const uint32_t *epochs, float2 *control,
                       uint8_t *families, float2 *points, float *sharpness,
                       int32_t *flag, int32_t *generated)
{
  static void (*const kernels[]) (TrackShape, TrackList *, const uint32_t *,
                                  const uint64_t *, const uint32_t *, float2 *,
                                  uint8_t *, float2 *, float *, int32_t *, int32_t *)
      = { generate_kernel<TRACK_FAMILY_POLAR>, generate_kernel<TRACK_FAMILY_STADIUM>,
          generate_kernel<TRACK_FAMILY_STAR> };
  static_assert (sizeof kernels / sizeof *kernels == TRACK_N_FAMILIES,
                 "a kernel per family");
  if (family < 0 || family >= TRACK_N_FAMILIES)
    return cudaErrorInvalidValue;
  return launch_kernel (kernels[family], n_blocks, TRACK_BLOCK, track_env_smem (shape),
                        stream, shape, list, ids, seeds, epochs, control, families,
                        points, sharpness, flag, generated);
}

extern "C" cudaError_t
track_launch_relax (cudaStream_t stream, TrackShape shape, uint32_t n_blocks,
                    TrackList *list, const uint32_t *ids, float2 *points,
                    float *sharpness, int32_t *flag, TgDeviceLoop loop)
{
  return launch_kernel (relax_kernel, n_blocks, TRACK_BLOCK, 0, stream, shape, list,
                        ids, points, sharpness, flag, loop);
}

extern "C" cudaError_t
track_launch_validate (cudaStream_t stream, TrackShape shape, uint32_t n_blocks,
                       TrackList *list, const uint32_t *ids, const float2 *points,
                       uint8_t *valid, int32_t *flag, int32_t *generated)
{
  return launch_kernel (validate_kernel, n_blocks, TRACK_BLOCK, 0, stream, shape, list,
                        ids, points, valid, flag, generated);
}
