/* SPDX-License-Identifier: Apache-2.0 */
// track-lookahead.cu: the lookahead's kernel, one call of
// track-lookahead.cuh a launch.  One kernel node a step, no conditional
// node: a graph holding one costs the driver more at every launch than a
// skipped refill costs the GPU.
#include <trackgen/kernel.h>

#include "launch.cuh"
#include "track-lookahead.cuh"

static __global__ void
__launch_bounds__ (TRACK_BLOCK)
    lookahead_kernel (TrackShape shape, TrackIters iters, uint32_t n_switch,
                      const uint8_t *mask, const int32_t *family, const uint64_t *seeds,
                      uint32_t *epochs, TrackRows current, TrackSpares sp)
{
  // The loads a step begins with, none waiting for another: at a few
  // microseconds a step, every round trip to memory in a row shows.
  const uint32_t e = blockIdx.x * SWITCH_BLOCK + threadIdx.x;
  const bool masked = blockIdx.x < n_switch && e < sp.n_envs && mask[e];
  const int32_t f = *family;

  sp.claims = nullptr; // the mask says which envs ended
  lookahead_call (shape, iters, n_switch, masked, mask, f, seeds, epochs, current, sp,
                  true);
}

extern "C" cudaError_t
track_launch_lookahead (cudaStream_t stream, TrackShape shape, uint32_t n_refill_blocks,
                        TrackIters iters, const uint8_t *mask, const int32_t *family,
                        const uint64_t *seeds, uint32_t *epochs, TrackRows current,
                        TrackSpares spares)
{
  uint32_t n_switch = (spares.n_envs + SWITCH_BLOCK - 1) / SWITCH_BLOCK;

  return launch_kernel (lookahead_kernel, n_switch + n_refill_blocks, TRACK_BLOCK,
                        track_env_smem (shape), stream, shape, iters, n_switch, mask,
                        family, seeds, epochs, current, spares);
}

extern "C" cudaError_t
track_lookahead_blocks_per_sm (TrackShape shape, int *n)
{
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor (n, lookahead_kernel, TRACK_BLOCK,
                                                        track_env_smem (shape));
}
