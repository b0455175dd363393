/* SPDX-License-Identifier: Apache-2.0 */
/* examples-test-sim.c: the simulator loop sharded over shards of one or two
 * devices ends in the same state, env by env and bit for bit, as one shard
 * of all the envs, and so does the loop with lookahead as the one that
 * generates on demand; and its floor regenerates nothing. */
#include "config.h"
#include "examples-test.h"
#include "simloop-shard.h"

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

void
examples_test_add_sim (void)
{
  TG_TEST_ADD_GPU ("/examples/sim/floor-skips-regeneration", test_floor);
  TG_TEST_ADD_GPU ("/examples/sim/sharded-one-device", test_sharded_one_device);
  TG_TEST_ADD_GPU ("/examples/sim/sharded-two-devices", test_sharded_two_devices);
  TG_TEST_ADD_GPU ("/examples/sim/lookahead-invisible", test_lookahead_invisible);
}
