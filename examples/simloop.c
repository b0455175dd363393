/* simloop.c: a batched simulator that regenerates tracks inside its own
 * CUDA graph.
 *
 * E envs each drive an agent around a track.  One step is a graph the
 * example captures itself, on its own non-blocking stream: the step kernel
 * moves the agents and marks the envs whose episode ended in the track
 * producer's "mask", sets an any-done flag on the device, the tally kernel
 * picks the shape family of the step's regeneration (a curriculum: each
 * family in turn for CURRICULUM steps) in the producer's "family", and then,
 * under tg_conditional(any_done), the track producer is recorded: its
 * "generate" switch runs the case of that family, which advances the masked
 * envs' epochs and draws their control points, and the next stages relax
 * and validate their new tracks.  Replaying the graph T times runs the whole
 * loop without a host round trip; steps where no episode ended skip the
 * regeneration on the device.  A step's family applies to every env that
 * step regenerates (a SWITCH runs one case per launch); each env's family
 * is kept in "families".
 *
 * The same loop is then driven from the host (read back any-done, run the
 * producer eagerly when needed) for comparison: it must end in the same
 * state bit for bit.  Finally sampled envs' tracks are regenerated
 * standalone from their (seed, epoch, family), compared bit for bit, and
 * drawn to an SVG. */
#include <trackgen/trackgen.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simloop-kernels.h"
#include "track-producer.h"

#define N_SHOWN 16       /* envs regenerated standalone and drawn */
#define LAP_STEPS 6000.f /* mean steps per lap: about half the steps end no episode */
#define CRASH_PROB 2e-5f /* per env and step */
#define CURRICULUM 500   /* steps of each shape family, in turn */

typedef struct
{
  guint n_envs, n_steps;
  TrackConfig config;
  SimParams params;
  TgSeedState *seeds;
  TgProducer *track;
  cudaStream_t stream;
  float *progress;       /* device: each agent's position along its track */
  gint32 *any_done;      /* device: an episode ended this step */
  SimCounters *counters; /* device */
  gint32 *any_done_host; /* pinned, for the host-driven loop */
  cudaGraphExec_t step_graph;
} Sim;

/* What a loop leaves behind, on the host, to compare two runs. */
typedef struct
{
  guint64 *seeds;
  guint32 *epochs;
  float2 *points;
  guint8 *valid;
  guint8 *families;
  float *progress;
  SimCounters counters;
} Snapshot;

static gpointer
binding (const Sim *sim, const char *name)
{
  return tg_producer_get_binding (sim->track, name, NULL);
}

static gboolean
sim_init (Sim *sim, guint n_envs, guint n_steps, guint64 base_seed, GError **error)
{
  memset (sim, 0, sizeof *sim);
  sim->n_envs = n_envs;
  sim->n_steps = n_steps;
  track_config_init (&sim->config, n_envs);
  sim->config.advance = TRUE;
  sim->params.n_envs = n_envs;
  sim->params.n_points = sim->config.shape.n_points;
  sim->params.mean_speed = sim->config.shape.n_points / LAP_STEPS;
  sim->params.crash_prob = CRASH_PROB;
  sim->params.curriculum_steps = CURRICULUM;

  return TRACK_CUDA_OK (cudaStreamCreateWithFlags (&sim->stream, cudaStreamNonBlocking),
                        error)
         && (sim->seeds = tg_seed_state_new (0, n_envs, base_seed, error)) != NULL
         && (sim->track
             = track_producer_new (&sim->config, sim->seeds, sim->stream, error))
                != NULL
         && TRACK_CUDA_OK (
             cudaMalloc ((void **)&sim->progress, n_envs * sizeof (float)), error)
         && TRACK_CUDA_OK (cudaMalloc ((void **)&sim->any_done, sizeof (gint32)), error)
         && TRACK_CUDA_OK (cudaMalloc ((void **)&sim->counters, sizeof (SimCounters)),
                           error)
         && TRACK_CUDA_OK (
             cudaMallocHost ((void **)&sim->any_done_host, sizeof (gint32)), error);
}

static void
check_cleanup (cudaError_t status, const char *what)
{
  if (status != cudaSuccess)
    fprintf (stderr, "simloop: warning: %s failed: %s\n", what,
             cudaGetErrorName (status));
}

static void
sim_clear (Sim *sim)
{
  if (sim->step_graph != NULL)
    check_cleanup (cudaGraphExecDestroy (sim->step_graph), "cudaGraphExecDestroy");
  if (sim->stream != NULL)
    check_cleanup (cudaStreamDestroy (sim->stream), "cudaStreamDestroy");
  check_cleanup (cudaFree (sim->progress), "cudaFree");
  check_cleanup (cudaFree (sim->any_done), "cudaFree");
  check_cleanup (cudaFree (sim->counters), "cudaFree");
  if (sim->any_done_host != NULL)
    check_cleanup (cudaFreeHost (sim->any_done_host), "cudaFreeHost");
  g_clear_pointer (&sim->track, tg_producer_unref);
  g_clear_pointer (&sim->seeds, tg_seed_state_unref);
}

/* Every env at epoch 1 with its first track, its agent at a random start. */
static gboolean
sim_reset (Sim *sim, GError **error)
{
  return tg_seed_state_reset_epochs (sim->seeds, sim->stream, NULL, 0, error)
         && TRACK_CUDA_OK (
             cudaMemsetAsync (binding (sim, "mask"), 1, sim->n_envs, sim->stream),
             error)
         && TRACK_CUDA_OK (
             cudaMemsetAsync (binding (sim, "family"), 0, sizeof (gint32), sim->stream),
             error)
         && tg_producer_run (sim->track, sim->stream, TG_POLICY_EAGER,
                             tg_unconditional (), error)
         && TRACK_CUDA_OK (sim_launch_init (sim->stream, sim->params,
                                            tg_seed_state_get_seeds (sim->seeds),
                                            sim->progress),
                           error)
         && TRACK_CUDA_OK (
             cudaMemsetAsync (sim->counters, 0, sizeof (SimCounters), sim->stream),
             error)
         && TRACK_CUDA_OK (cudaStreamSynchronize (sim->stream), error);
}

/* The agents' part of a step; the episodes that ended are in "mask". */
static gboolean
sim_enqueue_step (Sim *sim, GError **error)
{
  return TRACK_CUDA_OK (
             cudaMemsetAsync (sim->any_done, 0, sizeof (gint32), sim->stream), error)
         && TRACK_CUDA_OK (
             sim_launch_step (
                 sim->stream, sim->params, tg_seed_state_get_seeds (sim->seeds),
                 tg_seed_state_get_epochs (sim->seeds), binding (sim, "valid"),
                 sim->progress, binding (sim, "mask"), sim->any_done, sim->counters),
             error)
         && TRACK_CUDA_OK (sim_launch_tally (sim->stream, sim->params, sim->any_done,
                                             sim->counters, binding (sim, "family")),
                           error);
}

/* The example's own capture of one step; TrackGen records into it. */
static gboolean
sim_capture (Sim *sim, GError **error)
{
  cudaGraph_t graph = NULL;
  cudaError_t ended;
  gboolean ok;

  if (!TRACK_CUDA_OK (
          cudaStreamBeginCapture (sim->stream, cudaStreamCaptureModeThreadLocal),
          error))
    return FALSE;
  ok = sim_enqueue_step (sim, error)
       && tg_producer_run (sim->track, sim->stream, TG_POLICY_RECORD,
                           tg_conditional (sim->any_done), error);
  /* End the capture whatever happened, so the stream is left usable. */
  ended = cudaStreamEndCapture (sim->stream, &graph);
  ok = TRACK_CUDA_OK (ended, ok ? error : NULL) && ok;
  ok = ok && TRACK_CUDA_OK (cudaGraphInstantiate (&sim->step_graph, graph, 0), error)
       && TRACK_CUDA_OK (cudaGraphUpload (sim->step_graph, sim->stream), error);
  if (graph != NULL)
    ok = TRACK_CUDA_OK (cudaGraphDestroy (graph), ok ? error : NULL) && ok;
  return ok;
}

static gboolean
run_in_graph (Sim *sim, double *seconds, GError **error)
{
  gint64 start = g_get_monotonic_time ();

  for (guint t = 0; t < sim->n_steps; t++)
    if (!TRACK_CUDA_OK (cudaGraphLaunch (sim->step_graph, sim->stream), error))
      return FALSE;
  if (!TRACK_CUDA_OK (cudaStreamSynchronize (sim->stream), error))
    return FALSE;
  *seconds = (g_get_monotonic_time () - start) / 1e6;
  return TRUE;
}

/* The same loop without a graph: the host reads any-done back each step and
 * runs the producer eagerly when an episode ended. */
static gboolean
run_host_driven (Sim *sim, double *seconds, GError **error)
{
  gint64 start = g_get_monotonic_time ();

  for (guint t = 0; t < sim->n_steps; t++)
    {
      if (!sim_enqueue_step (sim, error)
          || !TRACK_CUDA_OK (cudaMemcpyAsync (sim->any_done_host, sim->any_done,
                                              sizeof (gint32), cudaMemcpyDeviceToHost,
                                              sim->stream),
                             error)
          || !TRACK_CUDA_OK (cudaStreamSynchronize (sim->stream), error))
        return FALSE;
      if (*sim->any_done_host != 0
          && !tg_producer_run (sim->track, sim->stream, TG_POLICY_EAGER,
                               tg_unconditional (), error))
        return FALSE;
    }
  if (!TRACK_CUDA_OK (cudaStreamSynchronize (sim->stream), error))
    return FALSE;
  *seconds = (g_get_monotonic_time () - start) / 1e6;
  return TRUE;
}

static void
snapshot_clear (Snapshot *snap)
{
  g_free (snap->seeds);
  g_free (snap->epochs);
  g_free (snap->points);
  g_free (snap->valid);
  g_free (snap->families);
  g_free (snap->progress);
}

static gboolean
download (Sim *sim, gpointer dst, gconstpointer src, gsize size, GError **error)
{
  return TRACK_CUDA_OK (
      cudaMemcpyAsync (dst, src, size, cudaMemcpyDeviceToHost, sim->stream), error);
}

/* From the stack is fine: the copy is staged before the call returns. */
static gboolean
upload (Sim *sim, gpointer dst, gconstpointer src, gsize size, GError **error)
{
  return TRACK_CUDA_OK (
      cudaMemcpyAsync (dst, src, size, cudaMemcpyHostToDevice, sim->stream), error);
}

static gboolean
sim_snapshot (Sim *sim, Snapshot *snap, GError **error)
{
  gsize n = sim->n_envs, n_points = n * sim->config.shape.n_points;

  snap->seeds = g_new (guint64, n);
  snap->epochs = g_new (guint32, n);
  snap->points = g_new (float2, n_points);
  snap->valid = g_new (guint8, n);
  snap->families = g_new (guint8, n);
  snap->progress = g_new (float, n);
  return download (sim, snap->points, binding (sim, "points"),
                   n_points * sizeof (float2), error)
         && download (sim, snap->valid, binding (sim, "valid"), n, error)
         && download (sim, snap->families, binding (sim, "families"), n, error)
         && download (sim, snap->progress, sim->progress, n * sizeof (float), error)
         && download (sim, &snap->counters, sim->counters, sizeof (SimCounters), error)
         && tg_seed_state_read (sim->seeds, sim->stream, snap->seeds, snap->epochs,
                                error);
}

static gboolean
snapshot_equal (const Sim *sim, const Snapshot *a, const Snapshot *b)
{
  gsize n = sim->n_envs, n_points = n * sim->config.shape.n_points;

  return memcmp (a->epochs, b->epochs, n * sizeof (guint32)) == 0
         && memcmp (a->points, b->points, n_points * sizeof (float2)) == 0
         && memcmp (a->valid, b->valid, n) == 0
         && memcmp (a->families, b->families, n) == 0
         && memcmp (a->progress, b->progress, n * sizeof (float)) == 0
         && memcmp (&a->counters, &b->counters, sizeof (SimCounters)) == 0;
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
verify_standalone (Sim *sim, const Snapshot *snap, const char *svg_path, guint *n_shown,
                   guint *n_same, GError **error)
{
  guint n = MIN (N_SHOWN, sim->n_envs), n_points = sim->config.shape.n_points;
  g_autofree Pick *picks = g_new (Pick, sim->n_envs);
  guint64 seeds[N_SHOWN];
  guint32 epochs[N_SHOWN];
  guint8 mask[N_SHOWN];
  g_auto (GStrv) labels = g_new0 (char *, n + 1);
  g_autofree float2 *points = g_new (float2, (gsize)n * n_points);
  g_autoptr (TgSeedState) state = NULL;
  g_autoptr (TgProducer) p = NULL;
  TrackConfig config = sim->config;
  gboolean ok;

  for (guint e = 0; e < sim->n_envs; e++)
    picks[e] = (Pick){ snap->epochs[e], e };
  qsort (picks, sim->n_envs, sizeof *picks, pick_compare);
  for (guint i = 0; i < n; i++)
    {
      guint e = picks[i].env;

      seeds[i] = snap->seeds[e];
      epochs[i] = picks[i].epoch;
      labels[i] = g_strdup_printf ("env %u, epoch %u, %s", e, picks[i].epoch,
                                   track_family_name (snap->families[e]));
    }
  config.n_envs = n;
  config.advance = FALSE; /* generate at the given epochs */
  config.svg_path = svg_path;
  config.svg_tracks = n;
  config.svg_labels = (const char *const *)labels;

  ok = (state = track_seed_state_new_at (0, sim->stream, n, seeds, epochs, error))
           != NULL
       && (p = track_producer_new (&config, state, sim->stream, error)) != NULL;
  for (gint32 f = 0; ok && f < TRACK_N_FAMILIES; f++)
    {
      gboolean any = FALSE;

      for (guint i = 0; i < n; i++)
        {
          mask[i] = snap->families[picks[i].env] == f;
          any |= mask[i];
        }
      ok = !any
           || (upload (sim, tg_producer_get_binding (p, "mask", NULL), mask, n, error)
               && upload (sim, tg_producer_get_binding (p, "family", NULL), &f,
                          sizeof f, error)
               && tg_producer_run (p, sim->stream, TG_POLICY_AUTO, tg_unconditional (),
                                   error));
    }
  if (!ok
      || !download (sim, points, tg_producer_get_binding (p, "points", NULL),
                    (gsize)n * n_points * sizeof *points, error)
      || !TRACK_CUDA_OK (cudaStreamSynchronize (sim->stream), error))
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

static void
print_loop (const char *name, const Sim *sim, double seconds)
{
  printf ("%-17s %12.0f env-steps/s  (%u steps in %.3f s)\n", name,
          (double)sim->n_envs * sim->n_steps / seconds, sim->n_steps, seconds);
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

static gboolean
run (guint n_envs, guint n_steps, guint64 base_seed, const char *svg_path,
     gboolean *same, GError **error)
{
  Sim sim;
  Snapshot graph_end = { 0 }, host_end = { 0 };
  struct cudaDeviceProp prop;
  double graph_s = 0, host_s = 0;
  guint n_shown = 0, n_same = 0;
  gboolean ok;

  ok = sim_init (&sim, n_envs, n_steps, base_seed, error)
       && TRACK_CUDA_OK (cudaGetDeviceProperties (&prop, 0), error);
  if (ok)
    printf ("simloop: %u envs x %u steps on %s; tracks of %u points from %u control "
            "points\n",
            n_envs, n_steps, prop.name, sim.config.shape.n_points,
            sim.config.shape.n_control);
  ok = ok && sim_capture (&sim, error) && sim_reset (&sim, error)
       && run_in_graph (&sim, &graph_s, error)
       && sim_snapshot (&sim, &graph_end, error);
  if (ok)
    {
      print_loop ("in-graph loop:", &sim, graph_s);
      print_counters (&graph_end.counters);
    }
  ok = ok && sim_reset (&sim, error) && run_host_driven (&sim, &host_s, error)
       && sim_snapshot (&sim, &host_end, error);
  if (ok)
    {
      *same = snapshot_equal (&sim, &graph_end, &host_end);
      print_loop ("host-driven loop:", &sim, host_s);
      printf ("  in-graph speed-up: %.1fx; same epochs, tracks, agents and counters as "
              "the in-graph loop: %s\n",
              host_s / graph_s, *same ? "yes" : "NO");
    }
  ok = ok && verify_standalone (&sim, &graph_end, svg_path, &n_shown, &n_same, error);
  if (ok)
    {
      printf ("determinism: %u of %u envs regenerated standalone from (seed, epoch, "
              "family) "
              "are bit-identical to the loop's tracks\n",
              n_same, n_shown);
      printf ("wrote %s (%u tracks)\n", svg_path, n_shown);
      *same = *same && n_same == n_shown;
    }
  snapshot_clear (&graph_end);
  snapshot_clear (&host_end);
  sim_clear (&sim);
  return ok;
}

int
main (int argc, char **argv)
{
  gint envs = 4096, steps = 2000;
  gint64 seed = 42;
  g_autofree char *output = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) context = NULL;
  gboolean same = FALSE;
  const GOptionEntry entries[] = {
    { "envs", 'e', 0, G_OPTION_ARG_INT, &envs, "Number of envs (default 4096)", "E" },
    { "steps", 't', 0, G_OPTION_ARG_INT, &steps, "Steps of each loop (default 2000)",
      "T" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &seed, "Base seed of the envs (default 42)",
      "SEED" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "Where to write the SVG of 16 tracks (default tracks.svg)", "PATH" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };

  context
      = g_option_context_new ("- regenerate tracks inside a simulator's CUDA graph");
  g_option_context_set_summary (
      context,
      "Steps E envs T times in a CUDA graph that regenerates the tracks of the "
      "envs whose episode ended,\nthen runs the same loop driven from the host, "
      "checks determinism, and draws 16 tracks.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      fprintf (stderr, "simloop: %s (see --help)\n", error->message);
      return 2;
    }
  if (envs < 1 || steps < 1)
    {
      fprintf (stderr, "simloop: --envs and --steps must be positive\n");
      return 2;
    }
  if (output == NULL)
    output = g_strdup ("tracks.svg");

  if (!tg_device_check (0, &error))
    {
      fprintf (stderr, "simloop: needs a CUDA GPU: %s\n", error->message);
      return 77;
    }
  if (!run ((guint)envs, (guint)steps, (guint64)seed, output, &same, &error))
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
