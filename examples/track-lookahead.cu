/* SPDX-License-Identifier: Apache-2.0 */
// track-lookahead.cu: the lookahead's kernels.  An env keeps L spare
// tracks, made ahead for the epochs after its current one; when it ends, an
// always-on kernel copies its next spare over its current track (a warp per
// ended env, a few hundred bytes), and the spent slots are refilled in a
// batch by one fused kernel, only when the switch kernel decides so.  Each
// track is made by the functions of track-env.cuh, as on-demand generation
// makes it: the same (seed, epoch, family) gives the same track bit for bit.
#include <trackgen/kernel.h>

#include "launch.cuh"
#include "track-env.cuh"
#include "track-kernels.h"

#define SWITCH_BLOCK 256
#define FULL_WARP 0xffffffffu

static __device__ __forceinline__ bool
family_in_range (int32_t family)
{
  return family >= 0 && family < TRACK_N_FAMILIES;
}

// Row @to of @dst := row @from of @src, by the 32 lanes of a warp.
static __device__ void
copy_row (TrackShape shape, TrackRows dst, size_t to, TrackRows src, size_t from,
          int lane)
{
  const float2 *sp = src.points + from * shape.n_points;
  const float2 *sc = src.control + from * shape.n_control;
  float2 *dp = dst.points + to * shape.n_points,
         *dc = dst.control + to * shape.n_control;

  for (uint32_t i = lane; i < shape.n_points; i += 32)
    dp[i] = sp[i];
  for (uint32_t i = lane; i < shape.n_control; i += 32)
    dc[i] = sc[i];
  if (lane == 0)
    {
      dst.families[to] = src.families[from];
      dst.valid[to] = src.valid[from];
      dst.sharpness[to] = src.sharpness[from];
    }
}

// A thread per env decides; the warp copies each of its envs' next spares.
// Spares are usable while the env's seed and epoch are the ones they follow.
// The slot an env frees is owed the track of its epoch L ahead, with the
// family of now (kept in the slot's family until the refill makes it): a
// track is a function of (seed, epoch, family), whenever it is made, and a
// family set now reaches an env's tracks L episodes later.
static __global__ void
__launch_bounds__ (SWITCH_BLOCK)
    switch_kernel (TrackShape shape, uint32_t n_envs, const uint8_t *mask,
                   const int32_t *family, const uint64_t *seeds, uint32_t *epochs,
                   TrackRows current, TrackSpares sp, TgDeviceCondition decide)
{
  const uint32_t e = blockIdx.x * SWITCH_BLOCK + threadIdx.x;
  const int32_t f = *family;
  const bool can_make = family_in_range (f);
  int64_t from = -1; // the spare row this env takes
  int spent = 0, urgent = 0;

  if (e < n_envs && mask[e] && can_make)
    {
      TrackSlots s = sp.slots[e];
      const uint64_t seed = seeds[e];
      const uint32_t epoch = epochs[e];

      if (s.seed != seed || s.epoch != epoch) // set since: every slot owed anew
        {
          s.ready = 0;
          for (uint32_t j = 0; j < sp.lookahead; j++)
            sp.spares.families[(size_t)e * sp.lookahead + j] = (uint8_t)f;
        }
      if (s.ready > 0)
        {
          from = (int64_t)e * sp.lookahead + s.head;
          s.head = (uint8_t)((s.head + 1) % sp.lookahead);
          s.ready--;
        }
      else
        s.pending = 1;
      spent = 1;
      epochs[e] = s.epoch = epoch + 1; // wraps, as tg_seed_state_advance()
      urgent = s.ready == 0;
      if (!s.listed)
        {
          s.listed = 1;
          sp.ids[atomicAdd (&sp.refill->n, 1u)] = e;
        }
      sp.slots[e] = s;
    }

  // Every lane takes part, those past n_envs too: the warp copies together.
  for (unsigned todo = __ballot_sync (FULL_WARP, from >= 0); todo != 0;
       todo &= todo - 1)
    {
      const int lane = __ffs (todo) - 1;
      const uint32_t env = e - (threadIdx.x % 32) + lane;
      const int64_t row = __shfl_sync (FULL_WARP, from, lane);

      copy_row (shape, current, env, sp.spares, (size_t)row, threadIdx.x % 32);
    }
  __syncwarp (); // the rows are copied before their slots are owed
  if (from >= 0)
    sp.spares.families[from] = (uint8_t)f;

  spent = __syncthreads_count (spent);
  urgent = __syncthreads_or (urgent);
  if (threadIdx.x == 0)
    {
      if (spent)
        atomicAdd (&sp.refill->spent, (uint32_t)spent);
      if (urgent)
        atomicOr (&sp.refill->urgent, 1);
      __threadfence (); // this block's list, tallies and slots land before its ticket
      if (atomicAdd (&sp.refill->blocks, 1u) == gridDim.x - 1)
        {
          const uint32_t total = atomicAdd (&sp.refill->spent, 0u);
          const bool run
              = can_make && atomicAdd (&sp.refill->n, 0u) > 0
                && (atomicAdd (&sp.refill->urgent, 0) != 0 || total >= sp.refill_batch);

          sp.refill->urgent = 0;
          sp.refill->blocks = 0;
          tg_condition_set (decide, run);
        }
    }
}

// One track of @family for effective seed @key into row @row of @rows, made
// whole: control points, centerline, the relaxation (at most @max_iters
// iterations, while too sharp: the iterations the loop stage gives this
// env), validity.  @smem holds track_env_smem() bytes; each phase reuses it.
static __device__ void
make_track (TrackShape shape, int family, uint64_t key, uint32_t max_iters,
            TrackRows rows, size_t row, float2 *smem)
{
  const uint32_t n = shape.n_points;
  float2 *points = rows.points + row * n;
  float2 *cur = smem, *nxt = smem + n;
  uint8_t *hot = (uint8_t *)(nxt + n);
  float *scratch = (float *)(hot + ((n + 15) & ~15u));
  float *seg = (float *)(smem + n), *arc = seg + n, *scratch_v = arc + n;
  float s;
  bool ok;

  control_env (shape, family, key, smem, rows.control + row * shape.n_control);
  s = centerline_env (shape, points, smem);
  for (uint32_t it = 0; it < max_iters && s > 1.f; it++)
    s = relax_env (shape, points, cur, nxt, hot, scratch);
  ok = valid_env (shape, points, smem, seg, arc, scratch_v);
  if (threadIdx.x == 0)
    {
      rows.families[row] = (uint8_t)family;
      rows.valid[row] = ok;
      rows.sharpness[row] = s;
    }
}

// A block per listed env at a time: the track it is owed, then its empty
// slots, for the epochs after the one its seed state holds now.
static __global__ void
__launch_bounds__ (TRACK_BLOCK)
    refill_kernel (TrackShape shape, uint32_t max_iters, const int32_t *family,
                   const uint64_t *seeds, const uint32_t *epochs, TrackRows current,
                   TrackSpares sp)
{
  extern __shared__ float2 smem[];
  const uint32_t n = sp.refill->n;
  const int32_t f = *family;

  for (uint32_t i = blockIdx.x; i < n; i += gridDim.x)
    {
      const uint32_t e = sp.ids[i];
      const uint64_t seed = seeds[e];
      const uint32_t base = epochs[e];
      TrackSlots s = sp.slots[e];

      // Set since it was listed: every slot anew, with the family of now.
      const bool stale = s.seed != seed || s.epoch != base;

      if (stale)
        s.ready = 0;
      if (s.pending)
        make_track (shape, f, tg_effective_seed (seed, base), max_iters, current, e,
                    smem);
      for (uint32_t j = s.ready; j < sp.lookahead; j++)
        {
          const size_t row = (size_t)e * sp.lookahead + (s.head + j) % sp.lookahead;
          const int32_t owed = sp.spares.families[row];

          make_track (shape, stale || !family_in_range (owed) ? f : owed,
                      tg_effective_seed (seed, base + 1 + j), max_iters, sp.spares, row,
                      smem);
        }
      __syncthreads (); // every thread read the slots before they change
      if (threadIdx.x == 0)
        {
          s.seed = seed;
          s.epoch = base;
          s.ready = (uint8_t)sp.lookahead;
          s.pending = s.listed = 0;
          sp.slots[e] = s;
        }
    }
  if (threadIdx.x == 0)
    {
      __threadfence ();
      if (atomicAdd (&sp.refill->blocks, 1u) == gridDim.x - 1)
        {
          sp.refill->n = 0;
          sp.refill->spent = 0;
          sp.refill->blocks = 0;
        }
    }
}

extern "C" cudaError_t
track_launch_switch (cudaStream_t stream, TrackShape shape, uint32_t n_envs,
                     const uint8_t *mask, const int32_t *family, const uint64_t *seeds,
                     uint32_t *epochs, TrackRows current, TrackSpares spares,
                     TgDeviceCondition decide)
{
  return launch_kernel (switch_kernel, (n_envs + SWITCH_BLOCK - 1) / SWITCH_BLOCK,
                        SWITCH_BLOCK, 0, stream, shape, n_envs, mask, family, seeds,
                        epochs, current, spares, decide);
}

extern "C" cudaError_t
track_launch_refill (cudaStream_t stream, TrackShape shape, uint32_t n_blocks,
                     uint32_t max_iters, const int32_t *family, const uint64_t *seeds,
                     const uint32_t *epochs, TrackRows current, TrackSpares spares)
{
  return launch_kernel (refill_kernel, n_blocks, TRACK_BLOCK, track_env_smem (shape),
                        stream, shape, max_iters, family, seeds, epochs, current,
                        spares);
}
