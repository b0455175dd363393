/* SPDX-License-Identifier: Apache-2.0 */
/* examples-test-fused.c: the step kernel that makes the producer's
 * lookahead call (fused) leaves every env and counter as the producer's own
 * call after the step does, bit for bit, in the step graph and driven from
 * the host: short laps (many ends), small refill batches, a family that
 * changes; and so with the refill beside the steps.
 *
 * Only "crashes" tests the claims (an env that ends in the very call whose
 * refill block makes its spares, claimed by each side in turn): with the
 * claims taken out (the three claim functions returning at once, the
 * kernels rebuilt) it failed 3 runs of 3 with 8 to 10 envs' slots stale,
 * and passed 3 of 3 with them (H100, 2026-12-06); every other case passed
 * without them.  A refill is decided at the end of a call for the envs
 * that ended in it, so the two meet only when an env ends in two calls in
 * a row, which laps never do (an agent runs at most 1.5x its mean speed: a
 * lap takes two steps at least) and an invalid track or a rare crash
 * almost never does: with laps of 3 steps and every switch held back 1 to
 * 16 us in a test build, no switch found its env claimed.  The case
 * "crashes" ends one env in 20 at random every step, so that some end in
 * two calls in a row. */
#include "config.h"
#include "examples-test.h"
#include "simloop-shard.h"

#include <string.h>

/* A fused run's shape: envs (one switch block, or several and a partial
 * one), spares per env, spent spares a refill waits for, the refill in the
 * step graph or beside the steps, and how often an env ends. */
typedef struct
{
  const char *name;
  guint n_envs, lookahead, batch;
  gboolean overlap;
  float lap_steps;  /* an agent's mean steps a lap */
  float crash_prob; /* per env and step */
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
  options.lap_steps = c->lap_steps;
  options.crash_prob = c->crash_prob;
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

/* Laps of 30 steps; of 3 (a refill list of hundreds of envs a call); and
 * crashes (one env in 20 a step, whatever its last end): an env may end
 * in the call right after its last end, the one that refills it, and
 * meet its refill there (claimed: see the top of this file). */
static const FusedCase fused_cases[] = {
  { "one-block", SIM_ENVS, 2, 4, FALSE, 30.f, 2e-5f },
  { "one-spare", 1000, 1, 2, FALSE, 30.f, 2e-5f },
  { "three-spares", 1000, 3, 8, FALSE, 30.f, 2e-5f },
  { "overlap", 1000, 2, 8, TRUE, 30.f, 2e-5f },
  { "short-laps", 1000, 2, 8, FALSE, 3.f, 2e-5f },
  { "crashes", 1000, 2, 8, FALSE, 30.f, 0.05f },
};

void
examples_test_add_fused (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (fused_cases); i++)
    {
      g_autofree char *path
          = g_strconcat ("/examples/sim/fused-invisible/", fused_cases[i].name, NULL);

      g_test_add (path, TgTestGpu, &fused_cases[i], tg_test_gpu_set_up,
                  test_fused_invisible, tg_test_gpu_tear_down);
    }
  g_test_add_func ("/examples/sim/fused-refused", test_fused_refused);
}
