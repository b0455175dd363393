/* SPDX-License-Identifier: Apache-2.0 */
/* simloop-kernels.h: the simulator loop's kernels (simloop-kernels.cu): an
 * agent per env driving laps of its track.  Plain C, so nvcc compiles it
 * without GLib.  Each launcher enqueues on @stream and returns the launch's
 * own cudaError_t. */
#ifndef SIMLOOP_KERNELS_H
#define SIMLOOP_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "track-kernels.h"
#include "track-shape.h"

/* Counters of a run, on the device; the step kernel adds to them with
 * integer atomics, so their values do not depend on the order of the adds. */
typedef struct
{
  uint64_t steps;         /* steps taken: the next step's number */
  uint64_t laps;          /* episodes ended by a completed lap */
  uint64_t crashes;       /* episodes ended by a crash */
  uint64_t invalid;       /* episodes ended at once on an invalid track */
  uint64_t regen_steps;   /* steps after which tracks were regenerated */
  uint64_t skipped_steps; /* steps whose regeneration the device skipped */
} SimCounters;

typedef struct
{
  uint32_t n_envs;           /* of the shard */
  uint32_t first_env;        /* the global index of the shard's first env */
  uint32_t n_points;         /* of a track: a lap is n_points samples long */
  float mean_speed;          /* samples per step */
  float crash_prob;          /* per env and step */
  uint32_t curriculum_steps; /* steps of each shape family, in turn */
  uint32_t regenerate;       /* 0: any_done stays 0, the regeneration is skipped */
} SimParams;

/* progress[e] := a uniform start in [0, n_points), drawn from the env's
 * (seed, epoch) and global index, so that the first laps, and so the
 * episode ends, spread over time. */
TRACK_EXTERN_C cudaError_t sim_launch_init (cudaStream_t stream, SimParams params,
                                            const uint64_t *seeds,
                                            const uint32_t *epochs, float *progress);

/* One step of every env: its agent moves on by a noisy speed drawn from
 * cuRAND Philox keyed by tg_effective_seed(seed, epoch), the env's global
 * index (first_env + e, never e alone) and the step number,
 * and its episode ends after a lap, a crash, or at once on an invalid
 * track.  mask[e] := whether env e's episode ended (it then restarts at the
 * start line); *any_done is set when any ended (clear it before), unless
 * params.regenerate is 0: the same step, whose regeneration never runs. */
TRACK_EXTERN_C cudaError_t sim_launch_step (cudaStream_t stream, SimParams params,
                                            const uint64_t *seeds,
                                            const uint32_t *epochs,
                                            const uint8_t *valid, float *progress,
                                            uint8_t *mask, int32_t *any_done,
                                            SimCounters *counters);

/* The step of sim_launch_step() with the track producer's lookahead call
 * fused in (a TrackFused, track-kernels.h, of the producer whose "valid",
 * "mask" and seed state the step reads): the envs that ended switch to
 * their next tracks in the same kernel, with the family sim_launch_tally()
 * gives this step, and the refill runs there too (with overlap, beside the
 * steps, started by the refiller's poll); the same tracks, epochs and
 * counters as sim_launch_step(), sim_launch_tally() and the producer's call
 * after them, bit for bit, with one kernel fewer on the step.  The next
 * refill is decided (with overlap: the totals the refiller polls are
 * published) by sim_launch_tally() given @fused, which must follow before
 * the next step. */
TRACK_EXTERN_C cudaError_t sim_launch_step_fused (cudaStream_t stream, SimParams params,
                                                  float *progress, uint8_t *mask,
                                                  int32_t *any_done, SimCounters *counters,
                                                  TrackFused fused);

/* One thread: counts the step as regenerating or skipped, sets the shape
 * family of this step's regeneration, *family := (steps / curriculum_steps)
 * mod TRACK_N_FAMILIES, then steps + 1.  The curriculum follows the step
 * number, the same in every shard of a population, where a count of
 * regenerations would not be: a shard regenerates when one of its own envs
 * ends.  @fused: right after each sim_launch_step_fused() with it, the
 * tally decides the lookahead's next refill too (lookahead_decide(): the
 * call in the step kernel leaves that to a later kernel), or with overlap
 * publishes the switch's totals to the refiller (overlap_publish()); NULL
 * after sim_launch_step(). */
TRACK_EXTERN_C cudaError_t sim_launch_tally (cudaStream_t stream, SimParams params,
                                             const int32_t *any_done,
                                             SimCounters *counters, int32_t *family,
                                             const TrackFused *fused);

#endif /* SIMLOOP_KERNELS_H */
