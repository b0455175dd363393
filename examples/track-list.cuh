/* SPDX-License-Identifier: Apache-2.0 */
// track-list.cuh: the list of the envs a call of the track producer
// regenerates (a TrackList, track-shape.h): the kernel that makes it, and
// what the kernels that loop over it share.  C++, for track-kernels.cu.
#ifndef TRACK_LIST_CUH
#define TRACK_LIST_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "track-shape.h"

// Threads of the listing kernel, and the envs each one reads.
#define LIST_BLOCK 256
#define LIST_ENVS 4

// Lists the masked envs' ids, and with @epochs advances their epochs (the
// kernel reads the mask anyway: no kernel of its own for the advance).  Each
// block appends its envs with one atomic, and the last block to finish
// publishes the count and leaves the running one at 0 for the next call.
static __global__ void __launch_bounds__ (LIST_BLOCK)
list_kernel (uint32_t n_envs, const uint8_t *mask, uint32_t *epochs, uint32_t *ids,
             TrackList *list)
{
  __shared__ uint32_t warp_sums[LIST_BLOCK / 32], base;
  const uint32_t t = threadIdx.x, lane = t % 32, warp = t / 32;
  const uint64_t first = ((uint64_t) blockIdx.x * LIST_BLOCK + t) * LIST_ENVS;
  uint32_t mine = 0, before, sum;

#pragma unroll
  for (int j = 0; j < LIST_ENVS; j++) // independent loads, all in flight
    mine |= (first + j < n_envs && mask[first + j] != 0) << j;

  // The block's exclusive scan of the counts: within each warp, then over
  // the warps' sums.
  sum = __popc (mine);
  for (int off = 1; off < 32; off <<= 1)
    {
      uint32_t v = __shfl_up_sync (0xffffffffu, sum, off);
      if (lane >= off)
        sum += v;
    }
  if (lane == 31)
    warp_sums[warp] = sum;
  __syncthreads ();
  if (t == 0)
    {
      uint32_t total = 0;

      for (int w = 0; w < LIST_BLOCK / 32; w++)
        {
          uint32_t v = warp_sums[w];
          warp_sums[w] = total;
          total += v;
        }
      base = total > 0 ? atomicAdd (&list->counted, total) : 0;
    }
  __syncthreads ();
  before = base + warp_sums[warp] + sum - __popc (mine);
  for (int j = 0; j < LIST_ENVS; j++)
    if (mine & (1u << j))
      {
        ids[before++] = (uint32_t) (first + j);
        if (epochs != NULL)
          epochs[first + j] += 1; // wraps, as tg_seed_state_advance()
      }

  if (t == 0)
    {
      __threadfence (); // this block's count lands before its ticket
      if (atomicAdd (&list->blocks, 1u) == gridDim.x - 1)
        {
          list->n = atomicExch (&list->counted, 0u);
          list->blocks = 0;
        }
    }
}

// The blocks of a kernel over the list that take part: one at least, so
// that an empty list still decides; the others leave at once.
static __device__ __forceinline__ uint32_t
list_blocks (uint32_t n)
{
  return min (gridDim.x, max (n, 1u));
}

// Called by every thread of the @blocks taking part, after their envs:
// thread 0 adds its block's @sharp to the list's and takes a ticket; in the
// last block it returns whether any block's @sharp was set (and resets the
// tally); everywhere else -1.
static __device__ int
last_block (TrackList *list, uint32_t blocks, int sharp)
{
  int any = -1;

  if (threadIdx.x == 0)
    {
      if (sharp)
        atomicOr (&list->sharp, 1);
      __threadfence (); // this block's flag lands before its ticket
      if (atomicAdd (&list->blocks, 1u) == blocks - 1)
        {
          any = atomicExch (&list->sharp, 0) != 0;
          list->blocks = 0;
        }
    }
  return any;
}

#endif // TRACK_LIST_CUH
