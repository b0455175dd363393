/* SPDX-License-Identifier: Apache-2.0 */
// track-lookahead.cu: the lookahead's kernel.  An env keeps L spare tracks,
// made ahead for the epochs after its current one.  One kernel a call, of
// two kinds of blocks: switch blocks, a thread per env, copy an ended env's
// next spare over its current track (a warp per ended env, a few hundred
// bytes) and list it for the refill; refill blocks make the spares of the
// envs a refill decided in the previous call took, or return at once.  One
// kernel node a step, no conditional node: a graph holding one costs the
// driver more at every launch than a skipped refill costs the GPU.  Each
// track is made by the functions of track-env.cuh, as on-demand generation
// makes it: the same (seed, epoch, family) gives the same track bit for bit.
#include <trackgen/kernel.h>

#include "launch.cuh"
#include "track-rows.cuh"

// A switch block makes the track of an env that ended with no spare itself.
#define SWITCH_BLOCK TRACK_BLOCK

// The switch blocks' part: a thread per env.  With the family in range, an
// ended env moves on to its next epoch and takes its next slot, and the
// slot it frees is owed the track of the epoch L ahead, of the family of now
// (kept in the slot's family until a refill makes it): a track is a function
// of (seed, epoch, family) whenever it is made, a family set now reaches an
// env's tracks L episodes later.  Spares are usable while the env's seed
// and epoch are the ones they follow.  An env whose next slot is not made
// yet gets that slot's track, of the family it is owed, from its block at
// once: its tracks depend on its own ends alone, never on when a refill
// came.  Returns whether the env spent a slot; *@urgent: it has no spare
// left.
static __device__ int
switch_env (TrackShape shape, uint32_t max_iters, uint32_t e, bool ended, int32_t f,
            const uint64_t *seeds, uint32_t *epochs, TrackRows current, TrackSpares sp,
            uint32_t list, float2 *smem, int *urgent)
{
  __shared__ OwedTracks owed;
  int64_t from = -1; // the spare row this env takes
  int64_t freed = -1; // the slot it frees
  int64_t at = -1;    // its place in list @list, if it joins it now
  int spent = 0;

  if (threadIdx.x == 0)
    owed.n = 0;
  __syncthreads ();
  if (ended)
    {
      TrackSlots s = sp.slots[e];
      const uint64_t seed = seeds[e];
      const uint32_t epoch = epochs[e];

      if (!follows (s, seed, epoch)) // set since: every slot owed anew
        {
          s.seed = seed;
          s.follows = 1;
          s.ready = 0;
          for (uint32_t j = 0; j < sp.lookahead; j++)
            sp.spares.families[(size_t)e * sp.lookahead + j] = (uint8_t)f;
        }
      freed = (int64_t)e * sp.lookahead + s.head;
      s.head = (uint8_t)((s.head + 1) % sp.lookahead);
      if (s.ready > 0)
        {
          from = freed;
          s.ready--;
        }
      else
        {
          owed_add (owed, e, tg_effective_seed (seed, epoch + 1),
                    sp.spares.families[freed]);
        }
      spent = 1;
      epochs[e] = s.epoch = epoch + 1; // wraps, as tg_seed_state_advance()
      *urgent = s.ready == 0;
      if (!s.listed)
        {
          s.listed = 1;
          at = atomicAdd (&sp.refill->n[list], 1u); // in flight during the copy
        }
      sp.slots[e] = s;
    }

  // Every lane takes part, those past n_envs too: the warp copies together.
  take_rows (shape, current, sp.spares, e, from);
  if (at >= 0)
    sp.ids[(size_t)list * sp.n_envs + at] = e;
  __syncthreads (); // the rows are copied and the owed families read ...
  if (freed >= 0)   // ... before the slots are owed anew
    sp.spares.families[freed] = (uint8_t)f;
  make_owed (owed, shape, max_iters, current, smem); // rare: at once, in the step
  return spent;
}

// The refill blocks' part: the envs of list @list, a block per env at a
// time, each one's empty slots, of the families they are owed, for the
// epochs after the one its seed state holds.  An env that ends in this call
// is left for the next refill (its switch block has its slots).
static __device__ void
refill_envs (TrackShape shape, uint32_t max_iters, uint32_t block, uint32_t n_blocks,
             const uint8_t *mask, int32_t f, const uint64_t *seeds,
             const uint32_t *epochs, TrackSpares sp, uint32_t list, uint32_t next,
             float2 *smem)
{
  const uint32_t n = sp.refill->n[list];

  for (uint32_t i = block; i < n; i += n_blocks)
    {
      const uint32_t e = sp.ids[(size_t)list * sp.n_envs + i];
      const uint64_t seed = seeds[e];
      const uint32_t base = epochs[e];
      TrackSlots s = sp.slots[e];
      const bool stale = !follows (s, seed, base);

      if (mask[e] || (stale && !family_in_range (f)))
        {
          if (threadIdx.x == 0) // still listed, in the list ends append to
            sp.ids[(size_t)next * sp.n_envs + atomicAdd (&sp.refill->n[next], 1u)] = e;
          continue;
        }
      if (stale) // set since it was listed: every slot anew, of the family of now
        s.ready = 0;
      for (uint32_t j = s.ready; j < sp.lookahead; j++)
        {
          const size_t row = (size_t)e * sp.lookahead + (s.head + j) % sp.lookahead;

          make_track (shape, stale ? f : sp.spares.families[row],
                      tg_effective_seed (seed, base + 1 + j), max_iters, sp.spares, row,
                      smem);
        }
      __syncthreads (); // every thread read the slots before they change
      if (threadIdx.x == 0)
        {
          s.seed = seed;
          s.follows = 1;
          s.epoch = base;
          s.ready = (uint8_t)sp.lookahead;
          s.listed = 0;
          sp.slots[e] = s;
        }
    }
}

static __global__ void
__launch_bounds__ (TRACK_BLOCK)
    lookahead_kernel (TrackShape shape, uint32_t max_iters, uint32_t n_switch,
                      const uint8_t *mask, const int32_t *family, const uint64_t *seeds,
                      uint32_t *epochs, TrackRows current, TrackSpares sp)
{
  extern __shared__ float2 smem[];
  // The loads a step begins with, none waiting for another: at a few
  // microseconds a step, every round trip to memory in a row shows.
  const uint32_t e = blockIdx.x * SWITCH_BLOCK + threadIdx.x;
  const bool masked = blockIdx.x < n_switch && e < sp.n_envs && mask[e];
  const int32_t f = *family;
  const bool can_make = family_in_range (f);
  // Written by the last block alone, after every block read them.
  const uint32_t cur = sp.refill->cur, go = sp.refill->go;
  int spent = 0, urgent = 0;

  if (blockIdx.x < n_switch)
    spent = switch_env (shape, max_iters, e, can_make && masked, f, seeds, epochs,
                        current, sp, cur, smem, &urgent);
  else if (go)
    refill_envs (shape, max_iters, blockIdx.x - n_switch, gridDim.x - n_switch, mask, f,
                 seeds, epochs, sp, 1 - cur, cur, smem);

  spent = __syncthreads_count (spent);
  urgent = __syncthreads_or (urgent);
  if (threadIdx.x == 0)
    {
      if (spent)
        atomicAdd (&sp.refill->spent, (uint32_t)spent);
      if (urgent)
        atomicOr (&sp.refill->urgent, 1);
      // This block's lists, tallies and slots land before its ticket.
      if (last_block (&sp.refill->blocks, spent || go))
        {
          TrackRefill *r = sp.refill;
          // Read together: one round trip, not one after another.
          const uint32_t listed = relaxed (r->n[cur]), spent_all = relaxed (r->spent);
          const int32_t urgent_any = relaxed (r->urgent);
          const bool next = can_make && listed > 0
                            && (urgent_any != 0 || spent_all >= sp.refill_batch);

          if (go)
            r->n[1 - cur] = 0; // refilled, or moved to the list ends append to
          if (next) // the next call refills what this one listed
            {
              r->cur = 1 - cur;
              r->spent = 0;
            }
          r->go = next;
          r->urgent = 0;
        }
    }
}

extern "C" cudaError_t
track_launch_lookahead (cudaStream_t stream, TrackShape shape, uint32_t n_refill_blocks,
                        uint32_t max_iters, const uint8_t *mask, const int32_t *family,
                        const uint64_t *seeds, uint32_t *epochs, TrackRows current,
                        TrackSpares spares)
{
  uint32_t n_switch = (spares.n_envs + SWITCH_BLOCK - 1) / SWITCH_BLOCK;

  return launch_kernel (lookahead_kernel, n_switch + n_refill_blocks, TRACK_BLOCK,
                        track_env_smem (shape), stream, shape, max_iters, n_switch,
                        mask, family, seeds, epochs, current, spares);
}

extern "C" cudaError_t
track_lookahead_blocks_per_sm (TrackShape shape, int *n)
{
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor (n, lookahead_kernel, TRACK_BLOCK,
                                                        track_env_smem (shape));
}
