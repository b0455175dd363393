/* simloop-kernels.h: the simulator loop's kernels (simloop-kernels.cu): an
 * agent per env driving laps of its track.  Each launcher enqueues on
 * @stream and returns the launch's cudaError_t. */
#ifndef SIMLOOP_KERNELS_H
#define SIMLOOP_KERNELS_H

#include <trackgen/trackgen.h>

G_BEGIN_DECLS

/* Counters of a run, on the device; the step kernel adds to them with
 * integer atomics, so their values do not depend on the order of the adds. */
typedef struct
{
  guint64 steps;         /* steps taken: the next step's number */
  guint64 laps;          /* episodes ended by a completed lap */
  guint64 crashes;       /* episodes ended by a crash */
  guint64 invalid;       /* episodes ended at once on an invalid track */
  guint64 regen_steps;   /* steps after which tracks were regenerated */
  guint64 skipped_steps; /* steps whose regeneration the device skipped */
} SimCounters;

typedef struct
{
  guint n_envs;
  guint n_points;   /* of a track: a lap is n_points samples long */
  float mean_speed; /* samples per step */
  float crash_prob; /* per env and step */
} SimParams;

/* progress[e] := a uniform start in [0, n_points), drawn from the env's
 * seed, so that the first laps, and so the episode ends, spread over time. */
cudaError_t sim_launch_init (cudaStream_t stream, SimParams params,
                             const guint64 *seeds, float *progress);

/* One step of every env: its agent moves on by a noisy speed drawn from
 * cuRAND Philox keyed by tg_effective_seed(seed, epoch) and the step number,
 * and its episode ends after a lap, a crash, or at once on an invalid
 * track.  mask[e] := whether env e's episode ended (it then restarts at the
 * start line); *any_done is set when any ended (clear it before). */
cudaError_t sim_launch_step (cudaStream_t stream, SimParams params,
                             const guint64 *seeds, const guint32 *epochs,
                             const guint8 *valid, float *progress, guint8 *mask,
                             gint32 *any_done, SimCounters *counters);

/* One thread: counts the step as regenerating or skipped, then steps + 1. */
cudaError_t sim_launch_tally (cudaStream_t stream, const gint32 *any_done,
                              SimCounters *counters);

G_END_DECLS

#endif /* SIMLOOP_KERNELS_H */
