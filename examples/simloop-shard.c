/* SPDX-License-Identifier: Apache-2.0 */
/* simloop-shard.c: a shard of the simulator loop on one device, and a
 * population sharded over devices, one host thread per shard. */
#include "simloop-shard.h"

#include <stdio.h>
#include <string.h>

struct _SimShard
{
  int device;
  guint first_env, n_envs;
  TrackConfig config;
  SimParams params;
  TgSeedState *seeds;
  TgProducer *track;
  cudaStream_t stream;
  /* The producer's buffers the step reads and writes. */
  guint8 *mask, *valid, *families;
  gint32 *family;
  float2 *points;
  float *progress;       /* device: each agent's position along its track */
  gint32 *any_done;      /* device: an episode ended this step */
  SimCounters *counters; /* device */
  gint32 *any_done_host; /* pinned, for the host-driven loop */
  cudaGraphExec_t step_graph;
  cudaGraphExec_t floor_graph; /* the step graph that never regenerates */
  TrackRefiller *refiller;     /* with overlap */
  gboolean fuse;               /* the producer's call in the step kernel: */
  TrackFused fused;            /* what it takes */
  /* Step timing: an event after each step of a timed replay, and the GPU
   * time between consecutive ones of the last. */
  cudaEvent_t *events;
  guint n_events, n_times;
  float *step_us;
  float *step_end_ms; /* each timed step's end, from the first step's */
};

void
sim_options_init (SimOptions *options)
{
  options->lap_steps = 6000.f;
  options->crash_prob = 2e-5f;
  options->curriculum_steps = 500;
  options->lookahead = 2;
  options->refill_batch = 64;
  options->overlap = FALSE;
  options->fused = FALSE;
  options->heavy = 0;
  options->step_times = FALSE;
}

void
sim_snapshot_init (SimSnapshot *snap, guint n_envs, guint n_points)
{
  snap->n_envs = n_envs;
  snap->n_points = n_points;
  snap->seeds = g_new (guint64, n_envs);
  snap->epochs = g_new (guint32, n_envs);
  snap->progress = g_new (float, n_envs);
  snap->families = g_new (guint8, n_envs);
  snap->valid = g_new (guint8, n_envs);
  snap->points = g_new (float2, (gsize)n_envs * n_points);
}

void
sim_snapshot_clear (SimSnapshot *snap)
{
  g_free (snap->seeds);
  g_free (snap->epochs);
  g_free (snap->progress);
  g_free (snap->families);
  g_free (snap->valid);
  g_free (snap->points);
}

guint
sim_snapshot_count_equal (const SimSnapshot *a, const SimSnapshot *b)
{
  gsize track = a->n_points * sizeof (float2);
  guint n = 0;

  g_return_val_if_fail (a->n_envs == b->n_envs && a->n_points == b->n_points, 0);
  for (guint e = 0; e < a->n_envs; e++)
    n += a->seeds[e] == b->seeds[e] && a->epochs[e] == b->epochs[e]
         && memcmp (&a->progress[e], &b->progress[e], sizeof (float)) == 0
         && a->families[e] == b->families[e] && a->valid[e] == b->valid[e]
         && memcmp (a->points + (gsize)e * a->n_points,
                    b->points + (gsize)e * b->n_points, track)
                == 0;
  return n;
}

/* The shard's stream; with overlap, of the device's greatest priority: a
 * refill runs at the least (the default), so wherever both wait for an SM,
 * the steps' blocks go first. */
static gboolean
create_stream (cudaStream_t *stream, gboolean overlap, GError **error)
{
  int least = 0, greatest = 0;

  return TRACK_CUDA_OK (cudaDeviceGetStreamPriorityRange (&least, &greatest), error)
         && TRACK_CUDA_OK (cudaStreamCreateWithPriority (stream, cudaStreamNonBlocking,
                                                         overlap ? greatest : 0),
                           error);
}

SimShard *
sim_shard_new (int device, guint first_env, guint n_envs, guint64 base_seed,
               const SimOptions *options, GError **error)
{
  SimShard *shard = g_new0 (SimShard, 1);
  gboolean ok;

  shard->device = device;
  shard->first_env = first_env;
  shard->n_envs = n_envs;
  track_config_init (&shard->config, n_envs);
  shard->config.advance = TRUE;
  shard->config.lookahead = options->lookahead;
  shard->config.refill_batch = options->refill_batch;
  shard->config.overlap = options->overlap;
  if (options->heavy > 0)
    {
      /* Every spare track runs all N iterations: the same tracks, each at
       * a set cost (on demand, up to N). */
      shard->config.max_iters = options->heavy;
      shard->config.min_iters = options->lookahead > 0 ? options->heavy : 0;
      shard->config.shape.min_turn_radius = 45.f;
    }
  shard->params.n_envs = n_envs;
  shard->params.first_env = first_env;
  shard->params.n_points = shard->config.shape.n_points;
  shard->params.mean_speed = shard->config.shape.n_points / options->lap_steps;
  shard->params.crash_prob = options->crash_prob;
  shard->params.curriculum_steps = MAX (options->curriculum_steps, 1);
  shard->params.regenerate = 1;

  ok = TRACK_CUDA_OK (cudaSetDevice (device), error)
       && create_stream (&shard->stream, options->overlap, error)
       && (shard->seeds
           = tg_seed_state_new_shard (device, first_env, n_envs, base_seed, error))
              != NULL
       && (shard->track
           = track_producer_new (&shard->config, shard->seeds, shard->stream, error))
              != NULL
       && TRACK_CUDA_OK (
           cudaMalloc ((void **)&shard->progress, n_envs * sizeof (float)), error)
       && TRACK_CUDA_OK (cudaMalloc ((void **)&shard->any_done, sizeof (gint32)), error)
       && TRACK_CUDA_OK (cudaMalloc ((void **)&shard->counters, sizeof (SimCounters)),
                         error)
       && TRACK_CUDA_OK (
           cudaMallocHost ((void **)&shard->any_done_host, sizeof (gint32)), error)
       && (!options->overlap
           || (shard->refiller = track_refiller_new (shard->track, &shard->config,
                                                     shard->seeds, error))
                  != NULL)
       && (!options->fused
           || track_fused_init (&shard->fused, shard->track, &shard->config,
                                shard->seeds, error));
  shard->fuse = options->fused;
  if (!ok)
    {
      sim_shard_free (shard);
      return NULL;
    }
  shard->mask = tg_producer_get_binding (shard->track, "mask", NULL);
  shard->valid = tg_producer_get_binding (shard->track, "valid", NULL);
  shard->families = tg_producer_get_binding (shard->track, "families", NULL);
  shard->family = tg_producer_get_binding (shard->track, "family", NULL);
  shard->points = tg_producer_get_binding (shard->track, "points", NULL);
  return shard;
}

static void
check_cleanup (cudaError_t status, const char *what)
{
  if (status != cudaSuccess)
    fprintf (stderr, "simloop: warning: %s failed: %s\n", what,
             cudaGetErrorName (status));
}

void
sim_shard_free (SimShard *shard)
{
  if (shard->stream != NULL)
    check_cleanup (cudaSetDevice (shard->device), "cudaSetDevice");
  if (shard->step_graph != NULL)
    check_cleanup (cudaGraphExecDestroy (shard->step_graph), "cudaGraphExecDestroy");
  if (shard->floor_graph != NULL)
    check_cleanup (cudaGraphExecDestroy (shard->floor_graph), "cudaGraphExecDestroy");
  if (shard->progress != NULL)
    check_cleanup (cudaFree (shard->progress), "cudaFree");
  if (shard->any_done != NULL)
    check_cleanup (cudaFree (shard->any_done), "cudaFree");
  if (shard->counters != NULL)
    check_cleanup (cudaFree (shard->counters), "cudaFree");
  if (shard->any_done_host != NULL)
    check_cleanup (cudaFreeHost (shard->any_done_host), "cudaFreeHost");
  g_clear_pointer (&shard->refiller, track_refiller_free);
  (void)sim_shard_time_steps (shard, 0, NULL);
  g_clear_pointer (&shard->track, tg_producer_unref);
  g_clear_pointer (&shard->seeds, tg_seed_state_unref);
  /* Last: the producer's buffers were filled on it. */
  if (shard->stream != NULL)
    check_cleanup (cudaStreamDestroy (shard->stream), "cudaStreamDestroy");
  g_free (shard);
}

const TrackConfig *
sim_shard_get_config (const SimShard *shard)
{
  return &shard->config;
}

TgProducer *
sim_shard_get_track (const SimShard *shard)
{
  return shard->track;
}

cudaStream_t
sim_shard_get_stream (const SimShard *shard)
{
  return shard->stream;
}

TrackRefiller *
sim_shard_get_refiller (const SimShard *shard)
{
  return shard->refiller;
}

gboolean
sim_shard_time_steps (SimShard *shard, guint n_steps, GError **error)
{
  gboolean ok = TRUE;

  for (guint t = 0; t < shard->n_events; t++)
    check_cleanup (cudaEventDestroy (shard->events[t]), "cudaEventDestroy");
  g_clear_pointer (&shard->events, g_free);
  g_clear_pointer (&shard->step_us, g_free);
  g_clear_pointer (&shard->step_end_ms, g_free);
  shard->n_events = shard->n_times = 0;
  if (n_steps == 0)
    return shard->refiller == NULL
           || track_refiller_keep_spans (shard->refiller, FALSE, error);
  shard->events = g_new0 (cudaEvent_t, n_steps);
  shard->step_us = g_new0 (float, n_steps);
  shard->step_end_ms = g_new0 (float, n_steps);
  for (; ok && shard->n_events < n_steps; shard->n_events++)
    ok = TRACK_CUDA_OK (cudaEventCreate (&shard->events[shard->n_events]), error);
  return ok;
}

const float *
sim_shard_get_step_times (const SimShard *shard, guint *n)
{
  *n = shard->n_times;
  return shard->step_us;
}

/* With lookahead, the spares made before the loop starts: the first call
 * made every env's track, then a call with no env ended refills in the
 * step graph, or a refill runs beside (with overlap: once the first call's
 * totals are in, it is due). */
static gboolean
settle (SimShard *shard, GError **error)
{
  if (shard->config.lookahead == 0)
    return TRUE;
  if (shard->refiller != NULL)
    return TRACK_CUDA_OK (cudaStreamSynchronize (shard->stream), error)
           && track_refiller_poll (shard->refiller, NULL, error)
           && track_refiller_wait (shard->refiller, error);
  return TRACK_CUDA_OK (cudaMemsetAsync (shard->mask, 0, shard->n_envs, shard->stream),
                        error)
         && tg_producer_run (shard->track, shard->stream, TG_POLICY_EAGER,
                             tg_unconditional (), error);
}

gboolean
sim_shard_reset (SimShard *shard, GError **error)
{
  cudaStream_t s = shard->stream;

  /* A refill still running would finish on the spares a reset drops. */
  return (shard->refiller == NULL || track_refiller_wait (shard->refiller, error))
         && tg_seed_state_reset_epochs (shard->seeds, s, NULL, 0, error)
         && track_producer_reset (shard->track, s, error)
         && TRACK_CUDA_OK (cudaMemsetAsync (shard->mask, 1, shard->n_envs, s), error)
         && TRACK_CUDA_OK (cudaMemsetAsync (shard->family, 0, sizeof (gint32), s),
                           error)
         && tg_producer_run (shard->track, s, TG_POLICY_EAGER, tg_unconditional (),
                             error)
         && settle (shard, error)
         && TRACK_CUDA_OK (
             sim_launch_init (s, shard->params, tg_seed_state_get_seeds (shard->seeds),
                              tg_seed_state_get_epochs (shard->seeds), shard->progress),
             error)
         && TRACK_CUDA_OK (
             cudaMemsetAsync (shard->counters, 0, sizeof (SimCounters), s), error)
         && TRACK_CUDA_OK (cudaStreamSynchronize (s), error);
}

/* The agents' part of a step, with @params; the episodes that ended are in
 * "mask", the family of their new tracks in "family".  @fused: the step
 * kernel makes the producer's call too. */
static gboolean
enqueue_step (SimShard *shard, SimParams params, gboolean fused, GError **error)
{
  cudaStream_t s = shard->stream;

  return TRACK_CUDA_OK (cudaMemsetAsync (shard->any_done, 0, sizeof (gint32), s), error)
         && TRACK_CUDA_OK (
             fused ? sim_launch_step_fused (s, params, shard->progress, shard->mask,
                                            shard->any_done, shard->counters,
                                            shard->fused)
                   : sim_launch_step (s, params, tg_seed_state_get_seeds (shard->seeds),
                                      tg_seed_state_get_epochs (shard->seeds),
                                      shard->valid, shard->progress, shard->mask,
                                      shard->any_done, shard->counters),
             error)
         && TRACK_CUDA_OK (sim_launch_tally (s, params, shard->any_done,
                                             shard->counters, shard->family,
                                             fused ? &shard->fused : NULL),
                           error);
}

/* The track producer's part of a step, recorded into the step graph (@policy
 * RECORD) or run eagerly: on demand under any-done, which the host-driven
 * loop has read back; with lookahead on every step. */
static gboolean
regenerate (SimShard *shard, TgPolicy policy, GError **error)
{
  TgCondition when = shard->config.lookahead == 0 && policy == TG_POLICY_RECORD
                         ? tg_conditional (shard->any_done)
                         : tg_unconditional ();

  return tg_producer_run (shard->track, shard->stream, policy, when, error);
}

/* The example's own capture of one step with @params into @exec; TrackGen
 * records into it, unless @floor: then the step has no producer call. */
static gboolean
capture (SimShard *shard, SimParams params, gboolean floor, cudaGraphExec_t *exec,
         GError **error)
{
  cudaGraph_t graph = NULL;
  cudaError_t ended;
  gboolean ok;

  if (!TRACK_CUDA_OK (
          cudaStreamBeginCapture (shard->stream, cudaStreamCaptureModeThreadLocal),
          error))
    return FALSE;
  ok = enqueue_step (shard, params, !floor && shard->fuse, error)
       && (floor || shard->fuse || regenerate (shard, TG_POLICY_RECORD, error));
  /* End the capture whatever happened, so the stream is left usable. */
  ended = cudaStreamEndCapture (shard->stream, &graph);
  ok = TRACK_CUDA_OK (ended, ok ? error : NULL) && ok;
  ok = ok && TRACK_CUDA_OK (cudaGraphInstantiate (exec, graph, 0), error)
       && TRACK_CUDA_OK (cudaGraphUpload (*exec, shard->stream), error);
  if (graph != NULL)
    ok = TRACK_CUDA_OK (cudaGraphDestroy (graph), ok ? error : NULL) && ok;
  return ok;
}

gboolean
sim_shard_capture (SimShard *shard, GError **error)
{
  return capture (shard, shard->params, FALSE, &shard->step_graph, error);
}

gboolean
sim_shard_capture_floor (SimShard *shard, GError **error)
{
  SimParams params = shard->params;

  params.regenerate = 0;
  return capture (shard, params, TRUE, &shard->floor_graph, error);
}

/* With overlap, the host loop stays at most this many steps ahead of the
 * device: the refiller's poll reads what the steps that ran wrote, and a
 * loop far ahead (CUDA queues launches without blocking) would start each
 * refill that late. */
#define RUN_AHEAD 16

/* A step's host side beyond its launch: the step's event, when timed, and
 * with overlap the refiller's poll, after the step RUN_AHEAD back ran. */
static gboolean
after_step (SimShard *shard, guint t, GError **error)
{
  if (t < shard->n_events
      && !TRACK_CUDA_OK (cudaEventRecord (shard->events[t], shard->stream), error))
    return FALSE;
  if (shard->refiller == NULL)
    return TRUE;
  if (t >= RUN_AHEAD && t - RUN_AHEAD < shard->n_events
      && !TRACK_CUDA_OK (cudaEventSynchronize (shard->events[t - RUN_AHEAD]), error))
    return FALSE;
  return track_refiller_poll (shard->refiller, NULL, error);
}

/* The GPU time between the events of consecutive steps of the last replay
 * of @n_steps steps, and where each of those steps ended. */
static gboolean
read_step_times (SimShard *shard, guint n_steps, GError **error)
{
  shard->n_times = 0;
  for (guint t = 1; t < MIN (n_steps, shard->n_events); t++)
    {
      float ms = 0.f, end = 0.f;

      if (!TRACK_CUDA_OK (
              cudaEventElapsedTime (&ms, shard->events[t - 1], shard->events[t]), error)
          || !TRACK_CUDA_OK (
              cudaEventElapsedTime (&end, shard->events[0], shard->events[t]), error))
        return FALSE;
      shard->step_end_ms[shard->n_times] = end;
      shard->step_us[shard->n_times++] = ms * 1e3f;
    }
  return TRUE;
}

gboolean
sim_shard_steps_beside_refills (SimShard *shard, gboolean *beside, GError **error)
{
  guint n_spans = 0;
  const TrackRefillSpan *spans
      = shard->refiller != NULL ? track_refiller_get_spans (shard->refiller, &n_spans)
                                : NULL;

  memset (beside, 0, shard->n_times * sizeof *beside);
  for (guint i = 0; i < n_spans; i++)
    {
      float begin = 0.f, end = 0.f;

      /* Both ends from the first step's event: a refill spans a step when
       * it began before the step ended and ended after it began. */
      if (!TRACK_CUDA_OK (
              cudaEventElapsedTime (&begin, shard->events[0], spans[i].begin), error)
          || !TRACK_CUDA_OK (
              cudaEventElapsedTime (&end, shard->events[0], spans[i].end), error))
        return FALSE;
      for (guint t = 0; t < shard->n_times; t++)
        beside[t] = beside[t]
                    || (begin < shard->step_end_ms[t]
                        && end > shard->step_end_ms[t] - shard->step_us[t] * 1e-3f);
    }
  return TRUE;
}

static gboolean
replay (SimShard *shard, cudaGraphExec_t exec, guint n_steps, GError **error)
{
  /* The refills of this replay alone. */
  if (shard->refiller != NULL && shard->n_events > 0
      && !track_refiller_keep_spans (shard->refiller, TRUE, error))
    return FALSE;
  for (guint t = 0; t < n_steps; t++)
    if (!TRACK_CUDA_OK (cudaGraphLaunch (exec, shard->stream), error)
        || !after_step (shard, t, error))
      return FALSE;
  return TRACK_CUDA_OK (cudaStreamSynchronize (shard->stream), error)
         && read_step_times (shard, n_steps, error);
}

gboolean
sim_shard_run_graph (SimShard *shard, guint n_steps, GError **error)
{
  return replay (shard, shard->step_graph, n_steps, error);
}

gboolean
sim_shard_run_floor (SimShard *shard, guint n_steps, GError **error)
{
  return replay (shard, shard->floor_graph, n_steps, error);
}

gboolean
sim_shard_run_host (SimShard *shard, guint n_steps, GError **error)
{
  gboolean lookahead = shard->config.lookahead > 0;

  for (guint t = 0; t < n_steps; t++)
    {
      if (!enqueue_step (shard, shard->params, shard->fuse, error))
        return FALSE;
      if (shard->refiller != NULL
          && !track_refiller_poll (shard->refiller, NULL, error))
        return FALSE;
      if (shard->fuse) /* the step kernel made the producer's call */
        continue;
      /* On demand the host decides, from a readback of any-done. */
      if (!lookahead
          && (!TRACK_CUDA_OK (cudaMemcpyAsync (shard->any_done_host, shard->any_done,
                                               sizeof (gint32), cudaMemcpyDeviceToHost,
                                               shard->stream),
                              error)
              || !TRACK_CUDA_OK (cudaStreamSynchronize (shard->stream), error)))
        return FALSE;
      if ((lookahead || *shard->any_done_host != 0)
          && !regenerate (shard, TG_POLICY_EAGER, error))
        return FALSE;
    }
  return TRACK_CUDA_OK (cudaStreamSynchronize (shard->stream), error);
}

static gboolean
download (SimShard *shard, gpointer dst, gconstpointer src, gsize size, GError **error)
{
  return TRACK_CUDA_OK (
      cudaMemcpyAsync (dst, src, size, cudaMemcpyDeviceToHost, shard->stream), error);
}

gboolean
sim_shard_read (SimShard *shard, SimSnapshot *snap, SimCounters *counters,
                GError **error)
{
  guint e = shard->first_env, n = shard->n_envs,
        n_points = shard->config.shape.n_points;

  g_return_val_if_fail (snap->n_envs >= e + n && snap->n_points == n_points, FALSE);
  return download (shard, snap->points + (gsize)e * n_points, shard->points,
                   (gsize)n * n_points * sizeof (float2), error)
         && download (shard, snap->valid + e, shard->valid, n, error)
         && download (shard, snap->families + e, shard->families, n, error)
         && download (shard, snap->progress + e, shard->progress, n * sizeof (float),
                      error)
         && download (shard, counters, shard->counters, sizeof *counters, error)
         && tg_seed_state_read (shard->seeds, shard->stream, snap->seeds + e,
                                snap->epochs + e, error);
}

/* ------------------------------------------------------------------------ */
/* Sharded runs                                                              */

/* Lets the shards' loops start together, once every shard is ready. */
typedef struct
{
  GMutex lock;
  GCond cond;
  guint n, ready;
  gboolean failed;
} Gate;

/* Waits until every shard arrived; FALSE for all when one is not @ok. */
static gboolean
gate_pass (Gate *gate, gboolean ok)
{
  gboolean go;

  g_mutex_lock (&gate->lock);
  gate->failed |= !ok;
  if (++gate->ready == gate->n)
    g_cond_broadcast (&gate->cond);
  while (gate->ready < gate->n)
    g_cond_wait (&gate->cond, &gate->lock);
  go = !gate->failed;
  g_mutex_unlock (&gate->lock);
  return go;
}

typedef struct
{
  Gate *gate;
  const SimOptions *options;
  guint64 base_seed;
  guint n_steps;
  SimSnapshot *snap; /* shared: each shard writes its own envs */
  SimShardRun *run;
  gint64 start, end;
  GError *error;
} ShardJob;

static gpointer
shard_main (gpointer data)
{
  ShardJob *job = data;
  SimShardRun *run = job->run;
  SimShard *shard = sim_shard_new (run->device, run->first_env, run->n_envs,
                                   job->base_seed, job->options, &job->error);
  gboolean ready = shard != NULL && sim_shard_capture (shard, &job->error)
                   && sim_shard_reset (shard, &job->error);

  if (gate_pass (job->gate, ready))
    {
      job->start = g_get_monotonic_time ();
      if (sim_shard_run_graph (shard, job->n_steps, &job->error))
        {
          job->end = g_get_monotonic_time ();
          run->seconds = (job->end - job->start) / 1e6;
          sim_shard_read (shard, job->snap, &run->counters, &job->error);
        }
    }
  if (shard != NULL)
    sim_shard_free (shard);
  return NULL;
}

gboolean
sim_run_sharded (guint n_envs, guint64 base_seed, const SimOptions *options,
                 guint n_shards, const int *devices, guint n_steps, SimSnapshot *snap,
                 SimShardRun *runs, double *wall_seconds, GError **error)
{
  g_autofree ShardJob *jobs = g_new0 (ShardJob, n_shards);
  g_autofree GThread **threads = g_new (GThread *, n_shards);
  Gate gate = { .n = n_shards };
  gint64 start = G_MAXINT64, end = 0;
  GError *first = NULL;
  gboolean ok = TRUE;

  g_return_val_if_fail (n_shards >= 1 && n_envs >= n_shards, FALSE);
  g_mutex_init (&gate.lock);
  g_cond_init (&gate.cond);
  for (guint i = 0; i < n_shards; i++)
    {
      guint lo = (guint)((guint64)i * n_envs / n_shards);
      guint hi = (guint)((guint64)(i + 1) * n_envs / n_shards);

      runs[i]
          = (SimShardRun){ .device = devices[i], .first_env = lo, .n_envs = hi - lo };
      jobs[i] = (ShardJob){ .gate = &gate,
                            .options = options,
                            .base_seed = base_seed,
                            .n_steps = n_steps,
                            .snap = snap,
                            .run = &runs[i] };
      threads[i] = g_thread_new ("simloop-shard", shard_main, &jobs[i]);
    }
  for (guint i = 0; i < n_shards; i++)
    {
      g_thread_join (threads[i]);
      /* A shard that was ready and waited for one that failed ran nothing
       * and has nothing to say: the error is the failed one's. */
      ok = ok && jobs[i].error == NULL && jobs[i].end > 0;
      start = MIN (start, jobs[i].start);
      end = MAX (end, jobs[i].end);
      if (jobs[i].error != NULL && first == NULL)
        g_propagate_prefixed_error (&first, g_steal_pointer (&jobs[i].error),
                                    "device %d, envs %u to %u: ", runs[i].device,
                                    runs[i].first_env,
                                    runs[i].first_env + runs[i].n_envs - 1);
      g_clear_error (&jobs[i].error);
    }
  if (first != NULL)
    g_propagate_error (error, first);
  g_cond_clear (&gate.cond);
  g_mutex_clear (&gate.lock);
  *wall_seconds = ok ? (end - start) / 1e6 : 0;
  return ok;
}
