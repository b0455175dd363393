/* SPDX-License-Identifier: Apache-2.0 */
// track-rows.cuh: rows of tracks (TrackRows) as the lookahead's kernels
// handle them: one made whole by a block, one copied by a warp.  C++, for
// the lookahead's calls (track-lookahead.cuh, track-overlap.cuh).
#ifndef TRACK_ROWS_CUH
#define TRACK_ROWS_CUH

#include <cuda/atomic>

#include "track-env.cuh"
#include "track-kernels.h"

#define FULL_WARP 0xffffffffu

// The last block of a kernel to finish (a ticket on @blocks, reset by it):
// the one that sees every block's tallies.  One that @tallied nothing (a
// switch block with no end: most, most steps) needs no fence before its
// ticket; the last one acquires after its ticket, so that its reads of the
// tallies come after every block's (the others need no acquire).
static __device__ bool
last_block (uint32_t *blocks, bool tallied)
{
  if (tallied)
    __threadfence (); // this block's tallies land before its ticket
  if (atomicAdd (blocks, 1u) != gridDim.x - 1)
    return false;
  cuda::atomic_thread_fence (cuda::memory_order_acquire, cuda::thread_scope_device);
  *blocks = 0;
  return true;
}

// A word the blocks of a kernel changed with atomics, read by the last
// block (last_block()): several such reads go out together, one round trip
// to memory rather than one after another.
template <typename T>
static __device__ __forceinline__ T
relaxed (T &word)
{
  return cuda::atomic_ref<T, cuda::thread_scope_device> (word).load (
      cuda::memory_order_relaxed);
}

static __device__ __forceinline__ bool
family_in_range (int32_t family)
{
  return family >= 0 && family < TRACK_N_FAMILIES;
}

// Whether the slots @s follow the env at (@seed, @epoch): made (or owed)
// for the epochs after @epoch from @seed.  Zeroed slots follow nothing.
static __device__ __forceinline__ bool
follows (TrackSlots s, uint64_t seed, uint32_t epoch)
{
  return s.follows && s.seed == seed && s.epoch == epoch;
}

// The points a lane of a warp loads before it stores any (COPY_BATCH * 32
// a warp): a row of up to that many points and control points costs one
// round trip to L2.
#define COPY_BATCH 8

// Row @to of @dst := row @from of @src, by the 32 lanes of a warp.  Every
// load of a batch before its stores: the rows may alias as far as the
// compiler knows, so a store between two loads would hold the second back
// until the first came (the switch of an ended env, a round trip a point
// per lane and a field, is the longest path of a step it ends in).  Read
// from L2 (__ldcg): a refill running beside this kernel may have written
// the row after this SM's L1 last saw it.
static __device__ void
copy_row (TrackShape shape, TrackRows dst, size_t to, TrackRows src, size_t from,
          int lane)
{
  const uint32_t np = shape.n_points, n = np + shape.n_control;
  const float2 *sp = src.points + from * np, *sc = src.control + from * shape.n_control;
  float2 *dp = dst.points + to * np, *dc = dst.control + to * shape.n_control;
  uint8_t family = 0, valid = 0;
  float sharpness = 0.f;

  if (lane == 0)
    {
      family = __ldcg (src.families + from);
      valid = __ldcg (src.valid + from);
      sharpness = __ldcg (src.sharpness + from);
    }
  for (uint32_t base = 0; base < n; base += 32 * COPY_BATCH)
    {
      float2 v[COPY_BATCH];

#pragma unroll
      for (int k = 0; k < COPY_BATCH; k++)
        {
          const uint32_t i = base + k * 32 + lane;

          v[k] = i < n ? __ldcg (i < np ? sp + i : sc + (i - np))
                       : make_float2 (0.f, 0.f);
        }
#pragma unroll
      for (int k = 0; k < COPY_BATCH; k++)
        {
          const uint32_t i = base + k * 32 + lane;

          if (i < n)
            *(i < np ? dp + i : dc + (i - np)) = v[k];
        }
    }
  if (lane == 0)
    {
      dst.families[to] = family;
      dst.valid[to] = valid;
      dst.sharpness[to] = sharpness;
    }
}

// One track of @family for effective seed @key into row @row of @rows, made
// whole: control points, centerline, the relaxation (while too sharp, at
// most @iters.max iterations: the iterations the loop stage gives this env;
// then on to @iters.min, which leave a smooth track as it is), validity.
// @smem holds track_env_smem() bytes; each phase reuses it.
static __device__ void
make_track (TrackShape shape, int family, uint64_t key, TrackIters iters,
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
  for (uint32_t it = 0; it < iters.max && (s > 1.f || it < iters.min); it++)
    s = relax_env (shape, points, cur, nxt, hot, scratch);
  ok = valid_env (shape, points, smem, seg, arc, scratch_v);
  if (threadIdx.x == 0)
    {
      rows.families[row] = (uint8_t)family;
      rows.valid[row] = ok;
      rows.sharpness[row] = s;
    }
}

// The ended envs of a switch block that find no spare made: the block makes
// their tracks at once, after the warps copied the others'.
struct OwedTracks
{
  uint32_t env[TRACK_BLOCK];
  uint64_t key[TRACK_BLOCK];
  uint8_t family[TRACK_BLOCK];
  uint32_t n;
};

static __device__ __forceinline__ void
owed_add (OwedTracks &owed, uint32_t e, uint64_t key, uint32_t family)
{
  const uint32_t k = atomicAdd (&owed.n, 1u);

  owed.env[k] = e;
  owed.key[k] = key;
  owed.family[k] = (uint8_t)family;
}

// Each lane whose env takes spare row @from >= 0 has it copied into its row
// of @current by its whole warp.  Every lane of the warp calls it.
static __device__ void
take_rows (TrackShape shape, TrackRows current, TrackRows spares, uint32_t e,
           int64_t from)
{
  for (unsigned todo = __ballot_sync (FULL_WARP, from >= 0); todo != 0;
       todo &= todo - 1)
    {
      const int lane = __ffs (todo) - 1;
      const uint32_t env = e - (threadIdx.x % 32) + lane;
      const int64_t row = __shfl_sync (FULL_WARP, from, lane);

      copy_row (shape, current, env, spares, (size_t)row, threadIdx.x % 32);
    }
}

// The owed envs' tracks, one after another, by the whole block.
static __device__ void
make_owed (const OwedTracks &owed, TrackShape shape, TrackIters iters,
           TrackRows current, float2 *smem)
{
  for (uint32_t k = 0; k < owed.n; k++)
    make_track (shape, owed.family[k], owed.key[k], iters, current, owed.env[k], smem);
}

#endif // TRACK_ROWS_CUH
