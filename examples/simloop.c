/* SPDX-License-Identifier: Apache-2.0 */
/* simloop.c: a batched simulator that regenerates tracks inside its own
 * CUDA graph (the shards and their loops are in simloop-shard.c, what it
 * prints of timed steps in simloop-times.c).
 *
 * E envs each drive an agent around a track.  One step is a graph the
 * example captures itself, on its own non-blocking stream: the step kernel
 * moves the agents and marks the envs whose episode ended in the track
 * producer's "mask", sets an any-done flag on the device, the tally kernel
 * writes the shape family of the step's new tracks to the producer's
 * "family" (a curriculum: each family in turn for 500 steps).  Replaying
 * the graph T times runs the whole loop without a host round trip.
 *
 * By default each env keeps two tracks ready (--lookahead 2) and the step
 * kernel makes the producer's lookahead call itself (fused,
 * sim_launch_step_fused()): an ended env switches to its next spare, and
 * the kernel's refill blocks refill the spent spares once 256 are spent or
 * an env has none left, as the tally kernel decides; the step graph has the
 * floor's nodes.  --producer-call records the producer's own call after the
 * step instead, as a simulator whose step kernel is not its own does.
 * --lookahead 0 generates on demand: the producer is recorded under
 * tg_conditional(any_done), its "generate" switch runs the case of the
 * step's family (advancing the masked envs' epochs, drawing their control
 * points) and its next stages relax and validate the new tracks.
 *
 * Beside it, the loop's floor: the same graph replayed T times with the
 * step kernel never setting any-done, so the regeneration is skipped every
 * step; the ratio of the two times is what regeneration costs.
 *
 * The same loop is then driven from the host (read back any-done, run the
 * producer eagerly when needed) for comparison: it must end in the same
 * state bit for bit.  Finally sampled envs' tracks are regenerated
 * standalone from their (seed, epoch, family), compared bit for bit, and
 * drawn to an SVG.
 *
 * With --overlap (and lookahead), the spares are refilled beside the steps
 * by a TrackRefiller, which the replay loop polls after each step; the
 * loop and its floor then time every step (events), and it prints their
 * median and p99, the refills' GPU time, the ends that found no spare
 * ready, and the loop's steps apart: those a refill ran beside on the GPU
 * (events around each refill) against those it did not.  --heavy N makes
 * the generator heavy: tighter turns, and every spare track relaxed N
 * times, smooth or not (a smooth track does not move: the same tracks, far
 * slower than a step; on demand, up to N); the steps are timed then too,
 * with or without --overlap (a refill in the step graph stalls its step:
 * the p99 shows it).  --step-times times them in any
 * mode: the median step against the floor's is what every step pays, the
 * mean beyond the median what refills add.  Fused or not, the tracks are
 * the same.
 *
 * With --devices N > 1, the same E envs run on one device, then sharded over
 * N devices: a seed state per device made by tg_seed_state_new_shard(), its
 * own producer, stream and step graph, driven by a host thread of its own,
 * all replaying at once.  It prints the rates, the scaling over one device,
 * and checks that every env ends as the one-device run left it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simloop-shard.h"
#include "simloop-times.h"

#define N_SHOWN 16 /* envs regenerated standalone and drawn */
/* The default population with --devices: enough envs to keep a device busy.
 * A step of 4096 envs is bound by launch latency (tens of microseconds,
 * whatever the number of envs), which no sharding can shorten. */
#define SHARDED_ENVS 262144
/* Spent spares that start a refill in the step graph: rarer refills pay
 * (H100, 2026-12-06, fused: 0.58x to 0.60x the floor with 64, 0.65x to
 * 0.66x with 256, 0.64x to 0.65x with 512; the producer's call: 0.48x,
 * 0.51x with 128, 0.52x with 256 and 512).  Overlapped refills keep
 * TrackConfig's 64. */
#define STEP_REFILL_BATCH 256

/* Ordered on @stream; from the host's stack too: the copy is staged before
 * the call returns. */
static gboolean
copy (cudaStream_t stream, gpointer dst, gconstpointer src, gsize size, GError **error)
{
  return TRACK_CUDA_OK (cudaMemcpyAsync (dst, src, size, cudaMemcpyDefault, stream),
                        error);
}

typedef struct
{
  guint32 epoch;
  guint env;
} Pick;

/* The most regenerated envs first, then the lowest ids. */
static int
pick_compare (const void *a, const void *b)
{
  const Pick *x = a, *y = b;

  if (x->epoch != y->epoch)
    return x->epoch > y->epoch ? -1 : 1;
  return x->env < y->env ? -1 : x->env > y->env;
}

/* Regenerates the most regenerated envs from (seed, epoch, family) alone, in
 * a fresh seed state and producer of their own (whose HOST stage draws them;
 * one call per family, masked to that family's envs), and compares their
 * tracks with the ones the loop holds, bit for bit. */
static gboolean
verify_standalone (SimShard *shard, const SimSnapshot *snap, const char *svg_path,
                   guint *n_shown, guint *n_same, GError **error)
{
  cudaStream_t stream = sim_shard_get_stream (shard);
  guint n = MIN (N_SHOWN, snap->n_envs), n_points = snap->n_points;
  g_autofree Pick *picks = g_new (Pick, snap->n_envs);
  guint64 seeds[N_SHOWN];
  guint32 epochs[N_SHOWN];
  guint8 mask[N_SHOWN];
  g_auto (GStrv) labels = g_new0 (char *, n + 1);
  g_autofree float2 *points = g_new (float2, (gsize)n * n_points);
  g_autoptr (TgSeedState) state = NULL;
  g_autoptr (TgProducer) p = NULL;
  TrackConfig config = *sim_shard_get_config (shard);
  gboolean ok;

  for (guint e = 0; e < snap->n_envs; e++)
    picks[e] = (Pick){ snap->epochs[e], e };
  qsort (picks, snap->n_envs, sizeof *picks, pick_compare);
  for (guint i = 0; i < n; i++)
    {
      guint e = picks[i].env;

      seeds[i] = snap->seeds[e];
      epochs[i] = picks[i].epoch;
      labels[i] = g_strdup_printf ("env %u, epoch %u, %s", e, picks[i].epoch,
                                   track_family_name (snap->families[e]));
    }
  config.n_envs = n;
  config.advance = FALSE; /* generate at the given epochs, on demand */
  config.lookahead = 0;
  config.min_iters = 0; /* each stops once smooth: the same tracks */
  config.overlap = FALSE;
  config.svg_path = svg_path;
  config.svg_tracks = n;
  config.svg_labels = (const char *const *)labels;

  ok = (state = track_seed_state_new_at (0, stream, n, seeds, epochs, error)) != NULL
       && (p = track_producer_new (&config, state, stream, error)) != NULL;
  for (gint32 f = 0; ok && f < TRACK_N_FAMILIES; f++)
    {
      gboolean any = FALSE;

      for (guint i = 0; i < n; i++)
        {
          mask[i] = snap->families[picks[i].env] == f;
          any |= mask[i];
        }
      ok = !any
           || (copy (stream, tg_producer_get_binding (p, "mask", NULL), mask, n, error)
               && copy (stream, tg_producer_get_binding (p, "family", NULL), &f,
                        sizeof f, error)
               && tg_producer_run (p, stream, TG_POLICY_AUTO, tg_unconditional (),
                                   error));
    }
  if (!ok
      || !copy (stream, points, tg_producer_get_binding (p, "points", NULL),
                (gsize)n * n_points * sizeof *points, error)
      || !TRACK_CUDA_OK (cudaStreamSynchronize (stream), error))
    return FALSE;

  *n_shown = n;
  *n_same = 0;
  for (guint i = 0; i < n; i++)
    *n_same += memcmp (points + (gsize)i * n_points,
                       snap->points + (gsize)picks[i].env * n_points,
                       n_points * sizeof *points)
               == 0;
  return TRUE;
}

static double
rate (guint n_envs, guint n_steps, double seconds)
{
  return (double)n_envs * n_steps / seconds;
}

static void
print_loop (const char *name, guint n_envs, guint n_steps, double seconds)
{
  printf ("%-17s %12.0f env-steps/s  (%u steps in %.3f s)\n", name,
          rate (n_envs, n_steps, seconds), n_steps, seconds);
}

static void
print_counters (const SimCounters *c)
{
  printf ("  tracks regenerated on the device: %" G_GUINT64_FORMAT
          " (laps %" G_GUINT64_FORMAT ", crashes %" G_GUINT64_FORMAT
          ", invalid tracks %" G_GUINT64_FORMAT ")\n",
          c->laps + c->crashes + c->invalid, c->laps, c->crashes, c->invalid);
  printf ("  regeneration ran after %" G_GUINT64_FORMAT " steps, skipped on the device "
          "in %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " (%.1f%%)\n",
          c->regen_steps, c->skipped_steps, c->steps,
          c->steps > 0 ? 100.0 * c->skipped_steps / c->steps : 0.0);
}

/* Times @loop over @n_steps steps of @shard. */
static gboolean
timed (gboolean (*loop) (SimShard *, guint, GError **), SimShard *shard, guint n_steps,
       double *seconds, GError **error)
{
  gint64 start = g_get_monotonic_time ();

  if (!loop (shard, n_steps, error))
    return FALSE;
  *seconds = (g_get_monotonic_time () - start) / 1e6;
  return TRUE;
}

/* One device: the loop in the graph, then driven from the host, then the
 * standalone regeneration and the SVG. */
static gboolean
run_one_device (guint n_envs, guint n_steps, guint64 base_seed,
                const SimOptions *options, const char *svg_path, gboolean *same,
                GError **error)
{
  SimShard *shard;
  SimSnapshot graph_end, host_end;
  SimCounters graph_counters, host_counters;
  const TrackConfig *c;
  struct cudaDeviceProp prop;
  double graph_s = 0, floor_s = 0, host_s = 0, floor_median = 0, floor_p99 = 0;
  TrackRefillerStats before = { 0 }, at_end = { 0 }, after = { 0 };
  TrackRefiller *refiller;
  gboolean timing;
  guint n_shown = 0, n_same = 0;
  gboolean ok;

  if ((shard = sim_shard_new (0, 0, n_envs, base_seed, options, error)) == NULL)
    return FALSE;
  c = sim_shard_get_config (shard);
  sim_snapshot_init (&graph_end, n_envs, c->shape.n_points);
  sim_snapshot_init (&host_end, n_envs, c->shape.n_points);
  ok = TRACK_CUDA_OK (cudaGetDeviceProperties (&prop, 0), error);
  if (ok)
    {
      printf ("simloop: %u envs x %u steps on %s; tracks of %u points from %u control "
              "points\n",
              n_envs, n_steps, prop.name, c->shape.n_points, c->shape.n_control);
      if (c->lookahead > 0)
        printf ("  lookahead: %u spare tracks per env, refilled %u at a time%s%s\n",
                c->lookahead, c->refill_batch,
                c->overlap ? ", beside the steps" : " in the step graph",
                options->fused ? "; its call fused into the step kernel" : "");
      else
        printf ("  on demand: tracks generated when an episode ends\n");
      if (options->heavy > 0)
        printf ("  heavy generator: turns of %.0f m at least, %s %u relaxation "
                "iterations a track\n",
                c->shape.min_turn_radius, c->min_iters > 0 ? "all" : "up to",
                c->max_iters);
    }
  refiller = sim_shard_get_refiller (shard);
  /* Each step timed with overlap, a heavy generator or --step-times (events
   * after each: not in the other runs, whose figures they would change). */
  timing = refiller != NULL || options->heavy > 0 || options->step_times;
  ok = ok && sim_shard_capture (shard, error) && sim_shard_capture_floor (shard, error)
       && (!timing || sim_shard_time_steps (shard, n_steps, error))
       && sim_shard_reset (shard, error)
       && timed (sim_shard_run_floor, shard, n_steps, &floor_s, error);
  floor_median = sim_step_quantile (shard, 0.5);
  floor_p99 = sim_step_quantile (shard, 0.99);
  ok = ok && sim_shard_reset (shard, error);
  if (ok && refiller != NULL)
    track_refiller_get_stats (refiller, &before);
  ok = ok && timed (sim_shard_run_graph, shard, n_steps, &graph_s, error);
  if (ok && refiller != NULL)
    track_refiller_get_stats (refiller, &at_end);
  ok = ok && (refiller == NULL || track_refiller_wait (refiller, error))
       && sim_shard_read (shard, &graph_end, &graph_counters, error);
  if (ok && refiller != NULL)
    track_refiller_get_stats (refiller, &after);
  if (ok)
    {
      print_loop ("in-graph loop:", n_envs, n_steps, graph_s);
      print_counters (&graph_counters);
      print_loop ("floor:", n_envs, n_steps, floor_s);
      printf (
          "  the same step graph with no regeneration and no track switch; the loop "
          "runs at %.2fx its speed (target >= 0.6x)\n",
          floor_s / graph_s);
      printf ("  regeneration: %.2f us of GPU time per step, amortized (the loop's "
              "%.2f us a step, its floor's %.2f)\n",
              (graph_s - floor_s) * 1e6 / n_steps, graph_s * 1e6 / n_steps,
              floor_s * 1e6 / n_steps);
      if (timing)
        sim_print_step_times (shard, floor_median, floor_p99);
      if (refiller != NULL)
        sim_print_overlap (&before, &at_end, &after, floor_median, floor_s, graph_s);
    }
  ok = ok
       && (refiller == NULL || sim_print_beside_refills (shard, floor_median, error));
  ok = ok && (!timing || sim_shard_time_steps (shard, 0, error));
  ok = ok && sim_shard_reset (shard, error)
       && timed (sim_shard_run_host, shard, n_steps, &host_s, error)
       && sim_shard_read (shard, &host_end, &host_counters, error);
  if (ok)
    {
      *same = sim_snapshot_count_equal (&graph_end, &host_end) == n_envs
              && memcmp (&graph_counters, &host_counters, sizeof (SimCounters)) == 0;
      print_loop ("host-driven loop:", n_envs, n_steps, host_s);
      printf ("  in-graph speed-up: %.1fx; same epochs, tracks, agents and counters as "
              "the in-graph loop: %s\n",
              host_s / graph_s, *same ? "yes" : "NO");
    }
  ok = ok && verify_standalone (shard, &graph_end, svg_path, &n_shown, &n_same, error);
  if (ok)
    {
      printf ("determinism: %u of %u envs regenerated standalone from (seed, epoch, "
              "family) are bit-identical to the loop's tracks\n",
              n_same, n_shown);
      printf ("wrote %s (%u tracks)\n", svg_path, n_shown);
      *same = *same && n_same == n_shown;
    }
  sim_snapshot_clear (&graph_end);
  sim_snapshot_clear (&host_end);
  sim_shard_free (shard);
  return ok;
}

/* The population on one device, then sharded over @n_devices, each shard
 * on a thread of its own, all replaying at once; the sharded run must end
 * with every env as the one-device run left it. */
static gboolean
run_sharded (guint n_devices, guint n_envs, guint n_steps, guint64 base_seed,
             const SimOptions *options, gboolean *same, GError **error)
{
  g_autofree int *devices = g_new (int, n_devices);
  g_autofree SimShardRun *runs = g_new (SimShardRun, n_devices);
  SimShardRun one_run;
  SimSnapshot one, sharded;
  TrackConfig config;
  struct cudaDeviceProp prop;
  double one_s = 0, wall_s = 0;
  gboolean ok;

  track_config_init (&config, n_envs);
  sim_snapshot_init (&one, n_envs, config.shape.n_points);
  sim_snapshot_init (&sharded, n_envs, config.shape.n_points);
  for (guint d = 0; d < n_devices; d++)
    devices[d] = (int)d;
  ok = TRACK_CUDA_OK (cudaGetDeviceProperties (&prop, 0), error);
  if (ok)
    printf ("simloop: %u envs x %u steps, on 1 device, then sharded over %u devices "
            "(%s, ...)\n",
            n_envs, n_steps, n_devices, prop.name);
  ok = ok
       && sim_run_sharded (n_envs, base_seed, options, 1, devices, n_steps, &one,
                           &one_run, &one_s, error);
  if (ok)
    print_loop ("1 device:", n_envs, n_steps, one_s);
  ok = ok
       && sim_run_sharded (n_envs, base_seed, options, n_devices, devices, n_steps,
                           &sharded, runs, &wall_s, error);
  if (ok)
    {
      guint n_same = sim_snapshot_count_equal (&one, &sharded);

      for (guint d = 0; d < n_devices; d++)
        printf ("device %d:         %12.0f env-steps/s  (envs %u to %u, %u steps in "
                "%.3f s)\n",
                runs[d].device, rate (runs[d].n_envs, n_steps, runs[d].seconds),
                runs[d].first_env, runs[d].first_env + runs[d].n_envs - 1, n_steps,
                runs[d].seconds);
      printf ("%u devices in total: %10.0f env-steps/s  (%u steps in %.3f s)\n",
              n_devices, rate (n_envs, n_steps, wall_s), n_steps, wall_s);
      printf ("scaling: %.2fx over 1 device (target >= 1.9x)\n", one_s / wall_s);
      printf ("sharding determinism: %u/%u envs identical\n", n_same, n_envs);
      *same = n_same == n_envs;
    }
  sim_snapshot_clear (&one);
  sim_snapshot_clear (&sharded);
  return ok;
}

/* Whether @path can be written: a file (or none yet) in a writable
 * directory. */
static gboolean
writable_file (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  return path[0] != '\0' && !g_file_test (path, G_FILE_TEST_IS_DIR)
         && g_file_test (dir, G_FILE_TEST_IS_DIR) && access (dir, W_OK) == 0;
}

int
main (int argc, char **argv)
{
  gint envs = G_MININT /* not given */, steps = 2000, n_devices = 1, count = 0,
       lookahead, refill_batch = G_MININT /* not given */, heavy = 0;
  gboolean overlap = FALSE, fused = FALSE, producer_call = FALSE;
  guint64 seed = 42;
  g_autofree char *output = NULL, *seed_text = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) context = NULL;
  gboolean same = FALSE;
  SimOptions options;
  const GOptionEntry entries[] = {
    { "envs", 'e', 0, G_OPTION_ARG_INT, &envs,
      "Number of envs (default 4096, or " G_STRINGIFY (SHARDED_ENVS) " with --devices)",
      "E" },
    { "steps", 't', 0, G_OPTION_ARG_INT, &steps, "Steps of each loop (default 2000)",
      "T" },
    { "seed", 's', 0, G_OPTION_ARG_STRING, &seed_text,
      "Base seed of the envs, 0 to 2^64 - 1 (default 42)", "SEED" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "Where to write the SVG of 16 tracks (default tracks.svg)", "PATH" },
    { "devices", 'd', 0, G_OPTION_ARG_INT, &n_devices,
      "Shard the envs over N devices, after a run on 1 (default 1: no sharding)", "N" },
    { "lookahead", 'l', 0, G_OPTION_ARG_INT, &lookahead,
      "Spare tracks kept ready per env, 0 to " G_STRINGIFY (
          TRACK_MAX_LOOKAHEAD) " (default 2; 0: generate on demand)",
      "L" },
    { "refill-batch", 'b', 0, G_OPTION_ARG_INT, &refill_batch,
      "With lookahead: spent spares that start a refill (default " G_STRINGIFY (
          STEP_REFILL_BATCH) ", 64 with --overlap)",
      "B" },
    { "overlap", 0, 0, G_OPTION_ARG_NONE, &overlap,
      "With lookahead: refill beside the steps, on a low-priority stream, started "
      "by the host loop's poll (TrackRefiller); times the steps",
      NULL },
    { "fused", 0, 0, G_OPTION_ARG_NONE, &fused,
      "With lookahead: the producer's call made inside the step kernel, no kernel of "
      "its own on the step (the default)",
      NULL },
    { "producer-call", 0, 0, G_OPTION_ARG_NONE, &producer_call,
      "With lookahead: the producer's own call recorded after the step kernel, its "
      "kernel on every step, instead",
      NULL },
    { "heavy", 0, 0, G_OPTION_ARG_INT, &heavy,
      "A heavy generator: tighter turns, N relaxation iterations every spare track "
      "(on demand, up to N; default 0: the normal one); times the steps",
      "N" },
    { "step-times", 0, 0, G_OPTION_ARG_NONE, &options.step_times,
      "Time every step (events after each): the median step, the mean and the p99, "
      "beside the floor's median",
      NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };

  sim_options_init (&options);
  lookahead = (gint)options.lookahead;
  context
      = g_option_context_new ("- regenerate tracks inside a simulator's CUDA graph");
  g_option_context_set_summary (
      context,
      "Steps E envs T times in a CUDA graph that regenerates the tracks of the "
      "envs whose episode ended,\nbeside its floor (the same graph, the "
      "regeneration skipped every step),\nthen runs the same loop driven from the "
      "host, checks determinism, and draws 16 tracks.\nWith --devices N > 1: the same "
      "envs on 1 device, then sharded over N devices\n(a host thread each), "
      "with the scaling and a determinism check across the sharding.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      fprintf (stderr, "simloop: %s (see --help)\n", error->message);
      return 2;
    }
  if (argc > 1)
    {
      fprintf (stderr, "simloop: unexpected argument %s (see --help)\n", argv[1]);
      return 2;
    }
  if (seed_text != NULL
      && !g_ascii_string_to_unsigned (seed_text, 10, 0, G_MAXUINT64, &seed, &error))
    {
      fprintf (stderr, "simloop: --seed: %s\n", error->message);
      return 2;
    }
  if (envs == G_MININT)
    envs = n_devices > 1 ? SHARDED_ENVS : 4096;
  if (envs < 1 || steps < 1 || n_devices < 1 || envs < n_devices)
    {
      fprintf (stderr,
               "simloop: %s must be positive, with at least one env per device\n",
               steps < 1       ? "--steps"
               : n_devices < 1 ? "--devices"
               : envs < 1      ? "--envs"
                               : "--envs and --devices");
      return 2;
    }
  if (lookahead < 0 || lookahead > TRACK_MAX_LOOKAHEAD
      || (refill_batch < 1 && refill_batch != G_MININT))
    {
      fprintf (stderr,
               "simloop: --lookahead must be in [0, %d] and --refill-batch "
               "positive\n",
               TRACK_MAX_LOOKAHEAD);
      return 2;
    }
  if (heavy < 0)
    {
      fprintf (stderr, "simloop: --heavy must be 0 (off) or more\n");
      return 2;
    }
  if ((overlap || fused || producer_call || refill_batch != G_MININT) && lookahead == 0)
    {
      fprintf (stderr,
               "simloop: --overlap, --fused, --producer-call and --refill-batch "
               "need --lookahead of 1 or more\n");
      return 2;
    }
  if (output != NULL && n_devices > 1)
    {
      fprintf (stderr,
               "simloop: --output draws a run on one device: not with --devices\n");
      return 2;
    }
  if (fused && producer_call)
    {
      fprintf (stderr, "simloop: --fused and --producer-call are the two places of the "
                       "producer's call: give one\n");
      return 2;
    }
  fused = lookahead > 0 && !producer_call;
  if (refill_batch == G_MININT)
    refill_batch = overlap ? (gint)options.refill_batch : STEP_REFILL_BATCH;
  options.lookahead = (guint)lookahead;
  options.refill_batch = (guint)refill_batch;
  options.overlap = overlap;
  options.fused = fused;
  options.heavy = (guint)heavy;
  if (output == NULL)
    output = g_strdup ("tracks.svg");
  if (n_devices == 1 && !writable_file (output))
    {
      /* Checked now: the SVG is written at the end of the run. */
      fprintf (stderr,
               "simloop: --output %s: not a file in a writable directory; pass one\n",
               output);
      return 2;
    }

  if (!tg_device_check (0, &error))
    {
      fprintf (stderr, "simloop: needs a CUDA GPU: %s\n", error->message);
      return 77;
    }
  if (cudaGetDeviceCount (&count) != cudaSuccess || count < n_devices)
    {
      fprintf (stderr,
               "simloop: --devices %d needs %d CUDA devices, this machine has %d\n",
               n_devices, n_devices, count);
      return 77;
    }
  for (int d = 1; d < n_devices; d++)
    if (!tg_device_check (d, &error))
      {
        fprintf (stderr, "simloop: device %d cannot run: %s\n", d, error->message);
        return 77;
      }
  if (!(n_devices == 1 ? run_one_device ((guint)envs, (guint)steps, (guint64)seed,
                                         &options, output, &same, &error)
                       : run_sharded ((guint)n_devices, (guint)envs, (guint)steps,
                                      (guint64)seed, &options, &same, &error)))
    {
      fprintf (stderr, "simloop: %s\n", error->message);
      return 1;
    }
  if (!same)
    {
      fprintf (stderr, "simloop: the runs differ: the loop is not deterministic\n");
      return 1;
    }
  return 0;
}
