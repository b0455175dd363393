/* SPDX-License-Identifier: Apache-2.0 */
// simloop-kernels.cu: agents driving laps of their tracks.
#include <curand_kernel.h>
#include <trackgen/kernel.h>

#include "launch.cuh"
#include "simloop-kernels.h"
#include "track-lookahead.cuh"
#include "track-overlap.cuh"

// Philox subsequences of an agent's key: the start, then one per step.
#define SUBSEQ_INIT 0ull
#define SUBSEQ_STEP 1ull
#define AGENT_SALT 0xA6E7u

// An agent's Philox key: its track's effective seed mixed with its GLOBAL env
// index, never the shard-local one, so the agent's draws do not depend on
// the sharding, and two envs never share draws, even with equal seeds.  The
// mix keeps it apart from the track generator's key, the effective seed.
static __device__ uint64_t
agent_key (uint64_t seed, uint32_t epoch, uint32_t global_env)
{
  return tg_mix64 (tg_effective_seed (seed, epoch) ^ tg_env_seed (AGENT_SALT, global_env));
}

static_assert (sizeof (uint64_t) == sizeof (unsigned long long), "atomicAdd on uint64_t");

static __global__ void
init_kernel (SimParams params, const uint64_t *seeds, const uint32_t *epochs,
             float *progress)
{
  uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t rng;

  if (e >= params.n_envs)
    return;
  curand_init (agent_key (seeds[e], epochs[e], params.first_env + e), SUBSEQ_INIT, 0, &rng);
  progress[e] = (float) params.n_points * (1.f - curand_uniform (&rng)); // [0, n)
}

// Env @e's agent moves on at step @step; whether its episode ended.
static __device__ bool
move_agent (const SimParams &params, const uint64_t *seeds, const uint32_t *epochs,
            const uint8_t *valid, float *progress, uint8_t *mask, int32_t *any_done,
            SimCounters *counters, uint64_t step, uint32_t e)
{
  uint64_t *cause = NULL;
  float p = progress[e];

  if (!valid[e])
    cause = &counters->invalid;
  else
    {
      curandStatePhilox4_32_10_t rng;
      float4 u;

      curand_init (agent_key (seeds[e], epochs[e], params.first_env + e),
                   SUBSEQ_STEP + step, 0, &rng);
      u = curand_uniform4 (&rng);
      p += params.mean_speed * (0.5f + u.x);
      if (u.y < params.crash_prob)
        cause = &counters->crashes;
      else if (p >= (float) params.n_points)
        cause = &counters->laps;
    }
  if (cause != NULL)
    {
      atomicAdd ((unsigned long long *) cause, 1ull);
      if (params.regenerate)
        atomicOr (any_done, 1);
      p = 0.f;
    }
  progress[e] = p;
  mask[e] = cause != NULL;
  return cause != NULL;
}

// The shape family of step @step's new tracks.
static __device__ int32_t
step_family (const SimParams &params, uint64_t step)
{
  return (int32_t) (step / params.curriculum_steps % TRACK_N_FAMILIES);
}

static __global__ void
step_kernel (SimParams params, const uint64_t *seeds, const uint32_t *epochs,
             const uint8_t *valid, float *progress, uint8_t *mask, int32_t *any_done,
             SimCounters *counters)
{
  uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;

  if (e < params.n_envs)
    move_agent (params, seeds, epochs, valid, progress, mask, any_done, counters,
                counters->steps, e);
}

// The step with the track producer's call fused in: the agents move, then
// the envs that ended switch (and, in the step graph, the refill runs), as
// the producer's call after the tally does, with the family the tally
// gives this step; the tally kernel, which runs after it anyway, decides
// the next refill (with overlap: publishes the totals to the refiller).
// One kernel a mode: the other's code would cost every step its shared
// memory and registers.
template <bool Overlap>
static __global__ void
__launch_bounds__ (TRACK_BLOCK)
    step_fused_kernel (SimParams params, float *progress, uint8_t *mask,
                       int32_t *any_done, SimCounters *counters, TrackFused fused)
{
  const uint32_t n_switch = (params.n_envs + TRACK_BLOCK - 1) / TRACK_BLOCK;
  const uint32_t e = blockIdx.x * TRACK_BLOCK + threadIdx.x;
  const uint64_t step = counters->steps;
  const bool ended = blockIdx.x < n_switch && e < params.n_envs
                     && move_agent (params, fused.seeds, fused.epochs, fused.current.valid,
                                    progress, mask, any_done, counters, step, e);

  const int32_t f = step_family (params, step);

  if constexpr (Overlap)
    overlap_switch_call (fused.shape, fused.iters, ended, f, fused.seeds, fused.epochs,
                         fused.current, fused.overlap_spares, false);
  else
    lookahead_call (fused.shape, fused.iters, n_switch, ended, nullptr, f, fused.seeds,
                    fused.epochs, fused.current, fused.spares, false);
}

// With the lookahead's call fused into the step, once every block of the
// step tallied: @refill, the next refill is decided here; @overlap, the
// switch's totals are published here.
static __global__ void
tally_kernel (SimParams params, const int32_t *any_done, SimCounters *counters,
              int32_t *family, TrackRefill *refill, uint32_t refill_batch,
              TrackOverlap *overlap)
{
  // Loaded before the decision's loads: one round trip for all.
  const uint64_t steps = counters->steps;
  const int32_t done = *any_done;
  const int32_t f = step_family (params, steps);

  if (refill != nullptr)
    lookahead_decide (refill, refill_batch, f);
  if (overlap != nullptr)
    overlap_publish (overlap);
  if (done)
    counters->regen_steps++;
  else
    counters->skipped_steps++;
  *family = f;
  counters->steps = steps + 1;
}

#define GRID(n) ((n) + 255) / 256, 256

extern "C" cudaError_t
sim_launch_init (cudaStream_t stream, SimParams params, const uint64_t *seeds,
                 const uint32_t *epochs, float *progress)
{
  return launch_kernel (init_kernel, GRID (params.n_envs), 0, stream, params, seeds, epochs,
                        progress);
}

extern "C" cudaError_t
sim_launch_step (cudaStream_t stream, SimParams params, const uint64_t *seeds,
                 const uint32_t *epochs, const uint8_t *valid, float *progress,
                 uint8_t *mask, int32_t *any_done, SimCounters *counters)
{
  return launch_kernel (step_kernel, GRID (params.n_envs), 0, stream, params, seeds,
                        epochs, valid, progress, mask, any_done, counters);
}

extern "C" cudaError_t
sim_launch_step_fused (cudaStream_t stream, SimParams params, float *progress,
                       uint8_t *mask, int32_t *any_done, SimCounters *counters,
                       TrackFused fused)
{
  const uint32_t n_switch = (params.n_envs + TRACK_BLOCK - 1) / TRACK_BLOCK;
  const size_t smem = track_env_smem (fused.shape);

  // With overlap, the switch blocks alone: every block of the kernel takes
  // part in its last block's ticket.
  return fused.overlap
             ? launch_kernel (step_fused_kernel<true>, n_switch, TRACK_BLOCK, smem, stream,
                              params, progress, mask, any_done, counters, fused)
             : launch_kernel (step_fused_kernel<false>, n_switch + fused.n_refill_blocks,
                              TRACK_BLOCK, smem, stream, params, progress, mask, any_done,
                              counters, fused);
}

extern "C" cudaError_t
sim_launch_tally (cudaStream_t stream, SimParams params, const int32_t *any_done,
                  SimCounters *counters, int32_t *family, const TrackFused *fused)
{
  const bool decide = fused != nullptr && !fused->overlap;
  const bool publish = fused != nullptr && fused->overlap;

  return launch_kernel (tally_kernel, 1, 1, 0, stream, params, any_done, counters,
                        family, decide ? fused->spares.refill : nullptr,
                        decide ? fused->spares.refill_batch : 0u,
                        publish ? fused->overlap_spares.overlap : nullptr);
}
