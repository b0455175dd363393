/* SPDX-License-Identifier: Apache-2.0 */
// track-overlap.cu: the lookahead with an overlapped refill: the producer's
// switch kernel (overlap_switch_call() of track-overlap.cuh, where the slot
// states are described) and the refill's kernels, which run beside it.
#include <trackgen/kernel.h>

#include "launch.cuh"
#include "track-overlap.cuh"

// The GPU's clock in ns (the time a refill's blocks hold their SMs).
static __device__ __forceinline__ uint64_t
global_ns (void)
{
  uint64_t t;

  asm volatile ("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

static __global__ void
__launch_bounds__ (TRACK_BLOCK)
    switch_kernel (TrackShape shape, TrackIters iters, const uint8_t *mask,
                   const int32_t *family, const uint64_t *seeds, uint32_t *epochs,
                   TrackRows current, TrackOverlapSpares sp)
{
  // Loaded together, neither waiting for the other.
  const uint32_t e = blockIdx.x * TRACK_BLOCK + threadIdx.x;
  const bool masked = e < sp.n_envs && mask[e] != 0;
  const int32_t f = *family;

  overlap_switch_call (shape, iters, masked, f, seeds, epochs, current, sp, true);
}

// The refill's list: the slots owed when it starts, in any order (a
// thread a slot), so that its blocks share the tracks to make one at a time.
static __global__ void
list_owed_kernel (TrackOverlapSpares sp)
{
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i < sp.n_envs * sp.lookahead
      && state_of (slot_state (sp, i).load (cuda::memory_order_relaxed)) == SLOT_OWED)
    sp.owed[atomicAdd (&sp.overlap->n_owed, 1u)] = i;
}

static __global__ void
__launch_bounds__ (TRACK_BLOCK)
    refill_kernel (TrackShape shape, TrackIters iters, TrackOverlapSpares sp)
{
  extern __shared__ float2 smem[];
  __shared__ uint32_t at;
  __shared__ Word claimed; // 0: none (a FILLING state is never 0)
  __shared__ uint64_t key;
  TrackOverlap *o = sp.overlap;
  const uint32_t n_owed = o->n_owed; // listed by the kernel before
  const uint64_t began = global_ns ();
  uint32_t made = 0;

  for (;;)
    {
      if (threadIdx.x == 0)
        {
          const uint32_t k = atomicAdd (&o->cursor, 1u);

          at = k < n_owed ? sp.owed[k] : UINT32_MAX;
          claimed = 0;
          if (at != UINT32_MAX)
            {
              WordRef ref = slot_state (sp, at);
              Word w = ref.load (cuda::memory_order_relaxed);

              if (state_of (w) == SLOT_OWED
                  && ref.compare_exchange_strong (w, with_state (w, SLOT_FILLING),
                                                  cuda::memory_order_acquire))
                {
                  // The seed its switch set before it owed the slot.
                  const Word seed = slots_seed (sp, at / sp.lookahead)
                                        .load (cuda::memory_order_relaxed);

                  claimed = with_state (w, SLOT_FILLING);
                  key = tg_effective_seed (seed, epoch_of (w));
                }
            }
        }
      __syncthreads ();
      if (at == UINT32_MAX)
        break;
      if (claimed != 0)
        {
          // Ends past a barrier: every thread's rows are written.
          make_track (shape, (int)family_of (claimed), key, iters, sp.spares, at, smem);
          if (threadIdx.x == 0)
            {
              Word expect = claimed;

              made += slot_state (sp, at).compare_exchange_strong (
                  expect, with_state (claimed, SLOT_READY), cuda::memory_order_release);
            }
        }
      __syncthreads (); // before thread 0 claims again
    }
  if (threadIdx.x != 0)
    return;
  if (made)
    atomicAdd (&o->totals.made, made);
  atomicAdd ((Word *)&o->totals.busy_ns, global_ns () - began);
  if (last_block (&o->refill_blocks, true))
    {
      volatile TrackTotals *host = o->host;

      o->totals.refills++;
      host->made = relaxed (o->totals.made);
      host->busy_ns = relaxed (o->totals.busy_ns);
      __threadfence_system (); // the tracks' count before the refill is done
      host->refills = o->totals.refills;
    }
}

extern "C" cudaError_t
track_launch_switch_overlap (cudaStream_t stream, TrackShape shape, TrackIters iters,
                             const uint8_t *mask, const int32_t *family,
                             const uint64_t *seeds, uint32_t *epochs, TrackRows current,
                             TrackOverlapSpares spares)
{
  return launch_kernel (switch_kernel, (spares.n_envs + TRACK_BLOCK - 1) / TRACK_BLOCK,
                        TRACK_BLOCK, track_env_smem (shape), stream, shape, iters, mask,
                        family, seeds, epochs, current, spares);
}

extern "C" cudaError_t
track_launch_refill_overlap (cudaStream_t stream, TrackShape shape, uint32_t n_blocks,
                             TrackIters iters, TrackOverlapSpares spares)
{
  const uint32_t n_slots = spares.n_envs * spares.lookahead;
  // The cursor and the list's length, side by side.
  cudaError_t status
      = cudaMemsetAsync (&spares.overlap->cursor, 0, 2 * sizeof (uint32_t), stream);

  if (status == cudaSuccess)
    status = launch_kernel (list_owed_kernel, (n_slots + 255) / 256, 256, 0, stream,
                            spares);
  if (status != cudaSuccess)
    return status;
  return launch_kernel (refill_kernel, n_blocks, TRACK_BLOCK, track_env_smem (shape),
                        stream, shape, iters, spares);
}
