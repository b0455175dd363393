/* SPDX-License-Identifier: Apache-2.0 */
/* examples-test-sim.c: the simulator loop sharded over shards of one or two
 * devices ends in the same state, env by env and bit for bit, as one shard
 * of all the envs, and so does the loop with lookahead as the one that
 * generates on demand; and its floor regenerates nothing. */
#include "config.h"
#include "examples-test.h"
#include "simloop-shard.h"

#include <string.h>

#define SIM_ENVS 128
#define SIM_STEPS 120
/* With lookahead (the default), a new family reaches an env's tracks
 * lookahead episodes after it began: twice the steps, so several do. */
#define SHARD_STEPS (2 * SIM_STEPS)

/* Runs SIM_ENVS envs on one shard of device 0, then on two shards of
 * @devices, and compares every env.  Short laps and a short curriculum, so
 * that many episodes end, under every family. */
static void
assert_sharding_invisible (const int devices[2])
{
  static const int device0 = 0;
  g_autoptr (GError) error = NULL;
  SimOptions options;
  SimSnapshot one, two;
  SimShardRun one_run, runs[2];
  TrackConfig config;
  guint max_epoch = 0, per_family[TRACK_N_FAMILIES] = { 0 };
  double wall = 0;

  sim_options_init (&options);
  options.lap_steps = 60.f;
  options.curriculum_steps = 16;
  track_config_init (&config, SIM_ENVS);
  sim_snapshot_init (&one, SIM_ENVS, config.shape.n_points);
  sim_snapshot_init (&two, SIM_ENVS, config.shape.n_points);

  g_assert_true (sim_run_sharded (SIM_ENVS, 2024, &options, 1, &device0, SHARD_STEPS,
                                  &one, &one_run, &wall, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (wall, >, 0);
  g_assert_true (sim_run_sharded (SIM_ENVS, 2024, &options, 2, devices, SHARD_STEPS, &two,
                                  runs, &wall, &error));
  g_assert_no_error (error);

  g_assert_cmpuint (runs[0].first_env, ==, 0);
  g_assert_cmpuint (runs[0].n_envs, ==, SIM_ENVS / 2);
  g_assert_cmpuint (runs[1].first_env, ==, SIM_ENVS / 2);
  g_assert_cmpuint (runs[1].n_envs, ==, SIM_ENVS / 2);
  g_assert_cmpint (runs[1].device, ==, devices[1]);
  g_assert_cmpuint (runs[0].counters.steps, ==, SHARD_STEPS);
  g_assert_cmpuint (runs[1].counters.steps, ==, SHARD_STEPS);
  g_assert_cmpuint (runs[0].counters.laps + runs[1].counters.laps, ==,
                    one_run.counters.laps);
  g_assert_cmpuint (runs[0].counters.crashes + runs[1].counters.crashes, ==,
                    one_run.counters.crashes);
  g_assert_cmpuint (sim_snapshot_count_equal (&one, &two), ==, SIM_ENVS);

  /* Not a vacuous equality: episodes ended, and under several families. */
  for (guint e = 0; e < SIM_ENVS; e++)
    {
      max_epoch = MAX (max_epoch, one.epochs[e]);
      g_assert_cmpuint (one.families[e], <, TRACK_N_FAMILIES);
      per_family[one.families[e]]++;
    }
  g_assert_cmpuint (max_epoch, >=, 2);
  g_assert_cmpuint (one_run.counters.laps, >=, SIM_ENVS / 2);
  g_assert_cmpuint (per_family[0], <, SIM_ENVS);
  g_assert_cmpuint (per_family[1] + per_family[2], >, 0);

  sim_snapshot_clear (&one);
  sim_snapshot_clear (&two);
}

/* Two shards of device 0, each driven by a thread of its own. */
static void
test_sharded_one_device (TgTestGpu *gpu, gconstpointer data)
{
  static const int devices[2] = { 0, 0 };

  TG_TEST_REQUIRE_GPU ();
  assert_sharding_invisible (devices);
}

static void
test_sharded_two_devices (TgTestGpu *gpu, gconstpointer data)
{
  static const int devices[2] = { 0, 1 };
  int count = 0;

  TG_TEST_REQUIRE_GPU ();
  if (cudaGetDeviceCount (&count) != cudaSuccess || count < 2)
    {
      (void)cudaGetLastError ();
      g_test_skip ("needs 2 CUDA devices");
      return;
    }
  /* The seed state of device 1 makes TrackGen's default stream there, once
   * per process: make it before the leak check counts. */
  g_assert_nonnull (tg_default_stream (1, NULL));
  tg_test_live_snapshot (&gpu->live);
  assert_sharding_invisible (devices);
}

/* simloop's floor: the same step with no producer call (its step never
 * sets any-done), so that episodes end (and are counted) but no track is
 * regenerated or switched; beside it in the same shard, the loop's own
 * graph regenerates. */
static void
test_floor (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  SimOptions options;
  SimShard *shard;
  SimSnapshot snap;
  SimCounters counters;

  TG_TEST_REQUIRE_GPU ();
  sim_options_init (&options);
  options.lap_steps = 60.f;
  shard = sim_shard_new (0, 0, SIM_ENVS, 2024, &options, &error);
  g_assert_no_error (error);
  sim_snapshot_init (&snap, SIM_ENVS, sim_shard_get_config (shard)->shape.n_points);
  g_assert_true (sim_shard_capture (shard, &error)
                 && sim_shard_capture_floor (shard, &error)
                 && sim_shard_reset (shard, &error)
                 && sim_shard_run_floor (shard, SIM_STEPS, &error)
                 && sim_shard_read (shard, &snap, &counters, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (counters.steps, ==, SIM_STEPS);
  g_assert_cmpuint (counters.skipped_steps, ==, SIM_STEPS);
  g_assert_cmpuint (counters.regen_steps, ==, 0);
  g_assert_cmpuint (counters.laps, >=, SIM_ENVS / 2);
  for (guint e = 0; e < SIM_ENVS; e++)
    g_assert_cmpuint (snap.epochs[e], ==, 1); /* reset's, and no other */

  g_assert_true (sim_shard_reset (shard, &error)
                 && sim_shard_run_graph (shard, SIM_STEPS, &error)
                 && sim_shard_read (shard, &snap, &counters, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (counters.regen_steps, >, 0);
  g_assert_cmpuint (counters.regen_steps + counters.skipped_steps, ==, SIM_STEPS);

  sim_snapshot_clear (&snap);
  sim_shard_free (shard);
}

/* The loop with lookahead ends with every env as the loop that generates on
 * demand leaves it, bit for bit, for a family that stays (a new one reaches
 * lookahead's tracks L episodes later): short laps, many ends. */
static void
test_lookahead_invisible (TgTestGpu *gpu, gconstpointer data)
{
  static const int device0 = 0;
  g_autoptr (GError) error = NULL;
  SimOptions options;
  SimSnapshot snaps[2];
  SimShardRun runs[2];
  TrackConfig config;
  double wall = 0;

  TG_TEST_REQUIRE_GPU ();
  sim_options_init (&options);
  options.lap_steps = 60.f;
  options.curriculum_steps = 10 * SIM_STEPS;
  track_config_init (&config, SIM_ENVS);
  for (guint i = 0; i < 2; i++)
    {
      options.lookahead = i == 0 ? 0 : 2;
      options.refill_batch = 8;
      sim_snapshot_init (&snaps[i], SIM_ENVS, config.shape.n_points);
      g_assert_true (sim_run_sharded (SIM_ENVS, 2024, &options, 1, &device0, SIM_STEPS,
                                      &snaps[i], &runs[i], &wall, &error));
      g_assert_no_error (error);
    }
  g_assert_cmpuint (runs[0].counters.laps, >=, SIM_ENVS / 2);
  g_assert_cmpmem (&runs[0].counters, sizeof (SimCounters), &runs[1].counters,
                   sizeof (SimCounters));
  g_assert_cmpuint (sim_snapshot_count_equal (&snaps[0], &snaps[1]), ==, SIM_ENVS);
  for (guint i = 0; i < 2; i++)
    sim_snapshot_clear (&snaps[i]);
}

/* A fused run's shape: envs (one switch block, or several and a partial
 * one), spares per env, spent spares a refill waits for, the refill in the
 * step graph or beside the steps. */
typedef struct
{
  guint n_envs, lookahead, batch;
  gboolean overlap;
} FusedCase;

/* The fused calls' refills were decided (by the tally kernel, after each
 * step kernel): the tracks alone cannot tell, as an env with no spare
 * makes its own track, the same one.  Decided, most envs hold a spare
 * at the end; never decided (or decided twice, its list dropped), the
 * envs' spares run out within L ends.  The lists hold each env once.
 * And every env's slots follow its seed and epoch in @snap after the last
 * call: an env that ends in the call that refills it is claimed by its
 * switch and its refill block in turn; a refill that read the env's slots
 * before its switch wrote them and wrote its own after would leave the
 * epoch before the switch's (the tracks cannot tell that either: the env's
 * next end finds its slots stale and makes its track at once). */
static void
check_refills_decided (SimShard *shard, const SimSnapshot *snap, guint n_envs)
{
  TgProducer *track = sim_shard_get_track (shard);
  g_autofree TrackSlots *slots = g_new (TrackSlots, n_envs);
  TrackRefill refill;
  gsize size = 0;
  gpointer device = tg_producer_get_binding (track, "slots", &size);
  guint ready = 0, stale = 0;

  g_assert_cmpuint (size, ==, n_envs * sizeof (TrackSlots));
  TG_TEST_CUDA (cudaMemcpy (slots, device, size, cudaMemcpyDeviceToHost));
  device = tg_producer_get_binding (track, "refill", &size);
  g_assert_cmpuint (size, ==, sizeof refill);
  TG_TEST_CUDA (cudaMemcpy (&refill, device, size, cudaMemcpyDeviceToHost));
  for (guint e = 0; e < n_envs; e++)
    {
      ready += slots[e].ready > 0;
      stale += !slots[e].follows || slots[e].seed != snap->seeds[e]
               || slots[e].epoch != snap->epochs[e];
    }
  g_test_message ("%u of %u envs hold a spare, %u have slots that follow another "
                  "seed or epoch; lists of %u and %u envs",
                  ready, n_envs, stale, refill.n[0], refill.n[1]);
  g_assert_cmpuint (ready, >=, n_envs / 4);
  g_assert_cmpuint (stale, ==, 0);
  g_assert_cmpuint (refill.n[0], <=, n_envs);
  g_assert_cmpuint (refill.n[1], <=, n_envs);
}

/* Runs @c's envs fused on one shard, in the step graph (@graph) or driven
 * from the host, into @snap and @counters; every claim let go at the end
 * (with overlap there is no "claims" binding: nothing to check), and with
 * overlap, refills ran beside (the fused switch published its totals). */
static void
run_fused (const FusedCase *c, SimOptions *options, gboolean graph, SimSnapshot *snap,
           SimCounters *counters)
{
  g_autoptr (GError) error = NULL;
  g_autofree guint32 *claims = g_new (guint32, c->n_envs);
  SimShard *shard = sim_shard_new (0, 0, c->n_envs, 2024, options, &error);
  gsize size = 0;
  gpointer device;

  g_assert_no_error (error);
  g_assert_true (sim_shard_reset (shard, &error)
                 && (graph ? sim_shard_capture (shard, &error)
                                 && sim_shard_run_graph (shard, SHARD_STEPS, &error)
                           : sim_shard_run_host (shard, SHARD_STEPS, &error))
                 && sim_shard_read (shard, snap, counters, &error));
  g_assert_no_error (error);
  if (c->overlap)
    {
      TrackRefiller *refiller = sim_shard_get_refiller (shard);
      TrackRefillerStats stats;

      g_assert_true (track_refiller_wait (refiller, &error));
      g_assert_no_error (error);
      track_refiller_get_stats (refiller, &stats);
      g_assert_cmpuint (stats.started, >, 1);
      g_assert_cmpuint (stats.totals.made, >, 0);
      g_assert_cmpuint (stats.totals.misses, <, stats.totals.freed);
    }
  device = tg_producer_get_binding (sim_shard_get_track (shard), "claims", &size);
  g_assert_cmpuint (size, ==, c->overlap ? 0 : c->n_envs * sizeof (guint32));
  if (size > 0)
    TG_TEST_CUDA (cudaMemcpy (claims, device, size, cudaMemcpyDeviceToHost));
  for (guint e = 0; e < size / sizeof (guint32); e++)
    g_assert_cmpuint (claims[e], ==, 0);
  if (!c->overlap)
    check_refills_decided (shard, snap, c->n_envs);
  sim_shard_free (shard);
}

/* The step kernel that makes the producer's lookahead call (fused) leaves
 * every env and counter as the producer's own call after the step does,
 * bit for bit, in the step graph and driven from the host: short laps (many
 * ends), small refill batches (envs may end in the very call that
 * refills them), a family that changes; and so with the refill beside the
 * steps.  Its tracks and counters are no test of the claims (they passed
 * on an H100 with the claims taken out: doc/tracks.md); its check of the
 * slots (check_refills_decided()) is meant to be one, and has not yet run
 * with them taken out. */
static void
test_fused_invisible (TgTestGpu *gpu, gconstpointer data)
{
  static const int device0 = 0;
  const FusedCase *c = data;
  g_autoptr (GError) error = NULL;
  SimOptions options;
  SimSnapshot snaps[3];
  SimShardRun run;
  SimCounters counters[2];
  TrackConfig config;
  guint max_epoch = 0;
  double wall = 0;

  TG_TEST_REQUIRE_GPU ();
  sim_options_init (&options);
  options.lap_steps = 30.f;
  options.curriculum_steps = 16;
  options.lookahead = c->lookahead;
  options.refill_batch = c->batch;
  options.overlap = c->overlap;
  track_config_init (&config, c->n_envs);
  for (guint i = 0; i < 3; i++)
    sim_snapshot_init (&snaps[i], c->n_envs, config.shape.n_points);
  g_assert_true (sim_run_sharded (c->n_envs, 2024, &options, 1, &device0, SHARD_STEPS,
                                  &snaps[0], &run, &wall, &error));
  g_assert_no_error (error);
  options.fused = TRUE;
  run_fused (c, &options, TRUE, &snaps[1], &counters[0]);
  run_fused (c, &options, FALSE, &snaps[2], &counters[1]);

  for (guint e = 0; e < c->n_envs; e++)
    max_epoch = MAX (max_epoch, snaps[0].epochs[e]);
  g_assert_cmpuint (max_epoch, >=, 4);
  g_assert_cmpuint (run.counters.laps, >=, c->n_envs);
  for (guint i = 0; i < 2; i++)
    g_assert_cmpmem (&run.counters, sizeof (SimCounters), &counters[i],
                     sizeof (SimCounters));
  for (guint i = 1; i < 3; i++)
    g_assert_cmpuint (sim_snapshot_count_equal (&snaps[0], &snaps[i]), ==, c->n_envs);
  for (guint i = 0; i < 3; i++)
    sim_snapshot_clear (&snaps[i]);
}

/* A fused call needs lookahead: refused, naming it. */
static void
test_fused_refused (void)
{
  g_autoptr (GError) error = NULL;
  SimOptions options;

  TG_TEST_REQUIRE_GPU ();
  sim_options_init (&options);
  options.fused = TRUE;
  options.lookahead = 0;
  g_assert_null (sim_shard_new (0, 0, SIM_ENVS, 2024, &options, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "lookahead"));
}

#define ADD_FUSED(path, c)                                                             \
  g_test_add (path, TgTestGpu, c, tg_test_gpu_set_up, test_fused_invisible,             \
              tg_test_gpu_tear_down)

void
examples_test_add_sim (void)
{
  static const FusedCase one_block = { SIM_ENVS, 2, 4, FALSE },
                         one_spare = { 1000, 1, 2, FALSE },
                         three_spares = { 1000, 3, 8, FALSE },
                         overlap = { 1000, 2, 8, TRUE };

  TG_TEST_ADD_GPU ("/examples/sim/floor-skips-regeneration", test_floor);
  TG_TEST_ADD_GPU ("/examples/sim/sharded-one-device", test_sharded_one_device);
  TG_TEST_ADD_GPU ("/examples/sim/sharded-two-devices", test_sharded_two_devices);
  TG_TEST_ADD_GPU ("/examples/sim/lookahead-invisible", test_lookahead_invisible);
  ADD_FUSED ("/examples/sim/fused-invisible/one-block", &one_block);
  ADD_FUSED ("/examples/sim/fused-invisible/one-spare", &one_spare);
  ADD_FUSED ("/examples/sim/fused-invisible/three-spares", &three_spares);
  ADD_FUSED ("/examples/sim/fused-invisible/overlap", &overlap);
  g_test_add_func ("/examples/sim/fused-refused", test_fused_refused);
}
