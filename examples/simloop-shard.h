/* SPDX-License-Identifier: Apache-2.0 */
/* simloop-shard.h: one shard of the simulator loop, and a population
 * sharded over devices.
 *
 * A shard holds envs [first, first + n) of a population: a TgSeedState made
 * by tg_seed_state_new_shard() (so env e is seeded from its global index e,
 * whichever shard holds it), its own track producer, non-blocking stream and
 * step graph, on one device.  Every per-env random decision of the step
 * (speed, crash, start) is keyed by the env's global index and the step
 * number, and the shape family by the step number, so an env's run does not
 * depend on the sharding: sharded or not, the envs end in the same state,
 * bit for bit.
 *
 * A shard is driven by one host thread at a time; its functions set that
 * thread's current device to the shard's and leave it so (a thread drives
 * one device). */
#ifndef SIMLOOP_SHARD_H
#define SIMLOOP_SHARD_H

#include "simloop-kernels.h"
#include "track-producer.h"

G_BEGIN_DECLS

typedef struct
{
  float lap_steps;        /* mean steps per lap */
  float crash_prob;       /* per env and step */
  guint curriculum_steps; /* steps of each shape family, in turn */
  guint lookahead;        /* spare tracks per env (0: generated on demand) */
  guint refill_batch;     /* with lookahead: spent spares that start a refill */
  gboolean overlap;       /* with lookahead: refills beside the steps (TrackRefiller) */
  gboolean fused;         /* with lookahead: the producer's call fused into the step
                             kernel (sim_launch_step_fused()), no node of its own on
                             the step (simloop --fused) */
  guint heavy;            /* a relaxation cap for a heavy generator (0: the default
                             one): turns tighter than the default allows, made
                             smooth in up to this many iterations */
  gboolean step_times;    /* time every step (simloop --step-times) */
} SimOptions;

/* The defaults: about half the steps of a 2000-step run end no episode;
 * two spare tracks per env, refilled 64 at a time in the step graph. */
void sim_options_init (SimOptions *options);

/* The state of a population's envs, on the host, in global order. */
typedef struct
{
  guint n_envs, n_points;
  guint64 *seeds;
  guint32 *epochs;
  float *progress; /* each agent's position along its track */
  guint8 *families;
  guint8 *valid;
  float2 *points; /* n_points per env */
} SimSnapshot;

void sim_snapshot_init (SimSnapshot *snap, guint n_envs, guint n_points);
void sim_snapshot_clear (SimSnapshot *snap);
/* The number of envs whose seed, epoch, progress, family, validity and
 * track are the same, bit for bit, in @a and @b (of the same size). */
guint sim_snapshot_count_equal (const SimSnapshot *a, const SimSnapshot *b);

typedef struct _SimShard SimShard;

/* Envs [@first_env, @first_env + @n_envs) of the population of @base_seed,
 * on @device (made current).  Returns NULL with the error. */
SimShard *sim_shard_new (int device, guint first_env, guint n_envs, guint64 base_seed,
                         const SimOptions *options, GError **error);
void sim_shard_free (SimShard *shard);

const TrackConfig *sim_shard_get_config (const SimShard *shard);
cudaStream_t sim_shard_get_stream (const SimShard *shard);
/* The shard's track producer (its bindings: the tracks, the spares). */
TgProducer *sim_shard_get_track (const SimShard *shard);

/* Captures the step graph: step, tally, and the track producer recorded,
 * under tg_conditional(any-done) on demand, unconditionally with lookahead
 * (its always-on switch kernel decides its refill); fused, the step and the
 * tally alone, the step kernel making the producer's call. */
gboolean sim_shard_capture (SimShard *shard, GError **error);
/* Captures the loop's floor: the same step graph with no regeneration and
 * no track switch (no producer call; its step kernel never sets any-done). */
gboolean sim_shard_capture_floor (SimShard *shard, GError **error);
/* Every env at epoch 1 with its first track (family 0), its agent at a
 * random start, the counters at 0.  Blocks. */
gboolean sim_shard_reset (SimShard *shard, GError **error);
/* @n_steps replays of the step graph.  Blocks until they ran. */
gboolean sim_shard_run_graph (SimShard *shard, guint n_steps, GError **error);
/* @n_steps replays of the floor graph.  Blocks until they ran. */
gboolean sim_shard_run_floor (SimShard *shard, guint n_steps, GError **error);
/* The same steps driven from the host: on demand, any-done read back after
 * each step and the producer run eagerly when an episode ended; with
 * lookahead, the producer run eagerly every step (it waits for its switch
 * kernel's decision); fused, the step's kernels alone (and, with overlap,
 * the refiller's poll).  Blocks. */
gboolean sim_shard_run_host (SimShard *shard, guint n_steps, GError **error);
/* With overlap, the shard's refiller (NULL otherwise). */
TrackRefiller *sim_shard_get_refiller (const SimShard *shard);
/* Records an event after each step of the next replays (run_graph,
 * run_floor) of up to @n_steps steps, and keeps the GPU time between
 * consecutive ones, and with overlap each refill's span; 0 stops. */
gboolean sim_shard_time_steps (SimShard *shard, guint n_steps, GError **error);
/* The step times of the last timed replay, in microseconds: *@n of them
 * (its steps but the first), owned by the shard. */
const float *sim_shard_get_step_times (const SimShard *shard, guint *n);
/* Which of those steps a refill ran beside, for a part of it at least, on
 * the GPU: @beside holds one for each step time.  Waits for no refill: the
 * replay's last one ended (sim_shard_run_graph() ends each replay waiting
 * for its steps, track_refiller_wait() for the refill). */
gboolean sim_shard_steps_beside_refills (SimShard *shard, gboolean *beside,
                                         GError **error);

/* Reads the shard's envs into @snap at their global indices (@snap holds
 * envs 0 to at least first + n - 1), and its counters.  Blocks. */
gboolean sim_shard_read (SimShard *shard, SimSnapshot *snap, SimCounters *counters,
                         GError **error);

/* One shard of a sharded run. */
typedef struct
{
  int device;
  guint first_env, n_envs;
  double seconds;       /* its own loop */
  SimCounters counters; /* at the end */
} SimShardRun;

/* Runs the population of @n_envs envs of @base_seed sharded over @n_shards
 * shards, shard i on @devices[i] (devices may repeat) with envs [i E / S,
 * (i + 1) E / S), each on a host thread of its own: every thread makes,
 * captures and resets its shard, then all replay their step graphs
 * @n_steps times, starting together.  Fills @snap (@n_envs envs), @runs
 * (@n_shards) and @wall_seconds (from the first start to the last end). */
gboolean sim_run_sharded (guint n_envs, guint64 base_seed, const SimOptions *options,
                          guint n_shards, const int *devices, guint n_steps,
                          SimSnapshot *snap, SimShardRun *runs, double *wall_seconds,
                          GError **error);

G_END_DECLS

#endif /* SIMLOOP_SHARD_H */
