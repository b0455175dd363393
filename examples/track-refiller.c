/* SPDX-License-Identifier: Apache-2.0 */
/* track-refiller.c: the overlapped refill's host side (track-producer.h):
 * a producer of its own over the track producer's spares, replayed on a
 * low-priority stream when the totals the steps' kernels leave in mapped
 * host memory say a refill is due. */
#include "track-buffers.h"

#include <string.h>

/* The buffers a refill reads and writes, bound to the track producer's. */
#define REFILL_BUFFERS                                                                 \
  (TRACK_SPARE_BUFFERS | TRACK_BIT (BUF_REFILL_IDS) | TRACK_BIT (BUF_SLOT_STATES)      \
   | TRACK_BIT (BUF_OVERLAP))

/* What the refill stage needs: the config, and the track producer, whose
 * buffers it binds (kept alive with it). */
typedef struct
{
  TrackConfig config;
  TgProducer *track;
  guint n_blocks;
} RefillStage;

struct _TrackRefiller
{
  TgProducer *refill;
  volatile TrackTotals *host; /* the track producer's, mapped: its kernels write it */
  cudaStream_t stream;
  int device;
  guint batch;
  guint n_blocks; /* of a refill: one an SM */
  guint32 freed_at, urgent_at; /* the totals when the last refill started */
  guint32 started;             /* refills started; host->refills: done */
  guint64 busy_at;             /* host->busy_ns after the first refill */
  /* Around the last refill started (own, or the last kept span's), and
   * the GPU time of those done. */
  cudaEvent_t begin, end;
  cudaEvent_t own[2];
  gboolean timed; /* the last refill's time is in gpu_ms */
  double gpu_ms;
  GArray *spans; /* TrackRefillSpan, while kept: each refill's own events */
};

static void
refill_stage_free (gpointer data)
{
  RefillStage *stage = data;

  tg_producer_unref (stage->track);
  g_free (stage);
}

static gboolean
refill_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  RefillStage *stage = data;
  const TrackConfig *c = &stage->config;

  return TRACK_CUDA_OK (track_launch_refill_overlap (
                            tg_launch_get_stream (launch), c->shape, stage->n_blocks,
                            track_config_iters (c), track_overlap_spares (launch, c)),
                        error);
}

/* The refill producer over @track's buffers, which must be those @config
 * makes with overlap. */
static TgProducer *
refill_producer_new (TgProducer *track, const TrackConfig *config, guint n_blocks,
                     GError **error)
{
  g_autoptr (TgProducer) p
      = tg_producer_new ("track-refill", tg_producer_get_device (track));
  RefillStage *data = g_new0 (RefillStage, 1);
  guint stage;

  data->config = *config;
  data->config.svg_path = NULL;
  data->config.svg_labels = NULL;
  data->track = tg_producer_ref (track);
  data->n_blocks = n_blocks;
  stage = tg_producer_add_device_stage (p, "refill", TG_STAGE_CAPTURE_SAFE,
                                        refill_stage, data, refill_stage_free, error);
  if (stage == G_MAXUINT)
    {
      refill_stage_free (data);
      return NULL;
    }
  track_declare (p, stage, config, REFILL_BUFFERS);
  for (guint b = 0; b < N_BUFFERS; b++)
    {
      gsize want = track_buffer_size (config, b), size = 0;
      gpointer ptr;

      if (!(REFILL_BUFFERS & TRACK_BIT (b)))
        continue;
      ptr = tg_producer_get_binding (track, track_buffer_names[b], &size);
      if (ptr == NULL || size != want)
        {
          g_set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                       "track refiller: the producer's '%s' is not the one this config "
                       "makes with overlap (make the producer with this config, "
                       "overlap set)",
                       track_buffer_names[b]);
          return NULL;
        }
      if (!tg_producer_bind (p, track_buffer_names[b], ptr, size, error))
        return NULL;
    }
  return g_steal_pointer (&p);
}

/* Checks that @config makes the tracks @track makes (a refill's would
 * differ from those a step makes at once), and finds the host's address of
 * the totals its kernels write: its "overlap" binding (whose size
 * refill_producer_new() checked) holds theirs and its generator. */
static gboolean
find_host (TrackRefiller *r, TgProducer *track, const TrackConfig *config,
           GError **error)
{
  struct cudaPointerAttributes attr;
  TrackOverlap overlap;

  if (!TRACK_CUDA_OK (
          cudaMemcpyAsync (&overlap,
                           tg_producer_get_binding (track, track_buffer_names[BUF_OVERLAP],
                                                    NULL),
                           sizeof overlap, cudaMemcpyDeviceToHost, r->stream),
          error)
      || !TRACK_CUDA_OK (cudaStreamSynchronize (r->stream), error))
    return FALSE;
  if (memcmp (&overlap.shape, &config->shape, sizeof overlap.shape) != 0
      || overlap.iters.min != config->min_iters
      || overlap.iters.max != config->max_iters)
    {
      g_set_error_literal (
          error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
          "track refiller: the config's shape, max_iters or min_iters differ "
          "from the producer's, whose tracks its refills would not "
          "make (give it the producer's config)");
      return FALSE;
    }
  if (!TRACK_CUDA_OK (cudaPointerGetAttributes (&attr, overlap.host), error))
    return FALSE;
  /* Mapped host memory has a host address (the same, with unified
   * addressing); anything else is refused, not read at the first poll. */
  if (attr.type != cudaMemoryTypeHost || attr.hostPointer == NULL)
    {
      g_set_error_literal (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                           "track refiller: the producer's totals are not in mapped "
                           "host memory (was its \"overlap\" binding overwritten?)");
      return FALSE;
    }
  r->host = attr.hostPointer;
  return TRUE;
}

static gboolean
refiller_init (TrackRefiller *r, TgProducer *track, const TrackConfig *config,
               GError **error)
{
  int least = 0, greatest = 0, n_sms = 0;

  if (!TRACK_CUDA_OK (cudaDeviceGetStreamPriorityRange (&least, &greatest), error)
      || !TRACK_CUDA_OK (
          cudaStreamCreateWithPriority (&r->stream, cudaStreamNonBlocking, least),
          error)
      || !TRACK_CUDA_OK (
          cudaDeviceGetAttribute (&n_sms, cudaDevAttrMultiProcessorCount, r->device),
          error)
      || !TRACK_CUDA_OK (cudaEventCreate (&r->own[0]), error)
      || !TRACK_CUDA_OK (cudaEventCreate (&r->own[1]), error))
    return FALSE;
  r->begin = r->own[0];
  r->end = r->own[1];
  r->n_blocks = (guint)MAX (n_sms, 1);
  r->refill = refill_producer_new (track, config, r->n_blocks, error);
  if (r->refill == NULL || !find_host (r, track, config, error))
    return FALSE;
  /* A first refill now: the producer records its graph here, not in the
   * loop's first poll.  The totals go on from the producer's earlier calls
   * and refillers: its count of refills done is where this one's start,
   * and the ends and urgent calls so far are the first refill's to make
   * (read before it lists them: one counted twice only brings the next
   * refill sooner), not a refill due at the first poll. */
  r->freed_at = r->host->freed;
  r->urgent_at = r->host->urgent;
  r->timed = TRUE;
  if (!tg_producer_run (r->refill, r->stream, TG_POLICY_REPLAY, tg_unconditional (),
                        error)
      || !TRACK_CUDA_OK (cudaStreamSynchronize (r->stream), error))
    return FALSE;
  r->started = r->host->refills;
  r->busy_at = r->host->busy_ns;
  return TRUE;
}

TrackRefiller *
track_refiller_new (TgProducer *track, const TrackConfig *config, TgSeedState *seeds,
                    GError **error)
{
  g_autoptr (TrackRefiller) r = NULL;
  TrackDeviceScope saved;
  gboolean ok;

  g_return_val_if_fail (track != NULL && config != NULL && seeds != NULL, NULL);
  if (!track_config_check (config, error))
    return NULL;
  if (!config->overlap)
    {
      g_set_error_literal (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                           "track refiller: the config's overlap is FALSE: its "
                           "producer refills in its own calls, no refiller needed");
      return NULL;
    }
  if (tg_producer_get_device (track) != tg_seed_state_get_device (seeds))
    {
      g_set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                   "track refiller: the producer is on device %d, the seeds on %d",
                   tg_producer_get_device (track), tg_seed_state_get_device (seeds));
      return NULL;
    }
  r = g_new0 (TrackRefiller, 1);
  r->device = tg_producer_get_device (track);
  r->batch = config->refill_batch;
  if (!track_enter_device (r->device, &saved, error))
    return NULL;
  ok = refiller_init (r, track, config, error);
  track_leave_device (&saved);
  return ok ? g_steal_pointer (&r) : NULL;
}

/* Adds the last refill's GPU time, once it is done; r->timed stays FALSE
 * while its end event is pending. */
static gboolean
time_last (TrackRefiller *r, GError **error)
{
  float ms = 0.f;
  cudaError_t status;

  if (r->timed)
    return TRUE;
  /* Its last block counts it done in host memory before its kernel, and so
   * its end event, completes: a poll in between would find the elapsed time
   * NotReady (CUDA says to poll with cudaEventQuery()). */
  status = cudaEventQuery (r->end);
  if (status == cudaErrorNotReady)
    {
      /* No error: cleared, where the runtime kept it as the last one. */
      (void)track_cuda_ok (status, "cudaEventQuery", NULL);
      return TRUE;
    }
  if (!track_cuda_ok (status, "cudaEventQuery (r->end)", error)
      || !TRACK_CUDA_OK (cudaEventElapsedTime (&ms, r->begin, r->end), error))
    return FALSE;
  r->gpu_ms += ms;
  r->timed = TRUE;
  return TRUE;
}

/* While spans are kept, the refill about to start gets events of its own. */
static gboolean
span_new (TrackRefiller *r, GError **error)
{
  TrackRefillSpan span = { NULL, NULL };

  if (r->spans == NULL)
    return TRUE;
  if (!TRACK_CUDA_OK (cudaEventCreate (&span.begin), error))
    return FALSE;
  if (!TRACK_CUDA_OK (cudaEventCreate (&span.end), error))
    {
      (void)cudaEventDestroy (span.begin);
      return FALSE;
    }
  g_array_append_val (r->spans, span);
  r->begin = span.begin;
  r->end = span.end;
  return TRUE;
}

/* Starts a refill, events around it, when the last one has ended. */
static gboolean
start_refill (TrackRefiller *r, guint32 freed, guint32 urgent, gboolean *started,
              GError **error)
{
  if (!time_last (r, error))
    return FALSE;
  if (!r->timed) /* the last one is still ending: the next poll starts this one */
    return TRUE;
  if (!span_new (r, error))
    return FALSE;
  if (!TRACK_CUDA_OK (cudaEventRecord (r->begin, r->stream), error)
      || !tg_producer_run (r->refill, r->stream, TG_POLICY_REPLAY, tg_unconditional (),
                           error))
    return FALSE;
  /* It runs (its count of refills done moves on), timed or not. */
  r->freed_at = freed;
  r->urgent_at = urgent;
  r->started++;
  if (started != NULL)
    *started = TRUE;
  if (!TRACK_CUDA_OK (cudaEventRecord (r->end, r->stream), error))
    return FALSE;
  r->timed = FALSE;
  return TRUE;
}

gboolean
track_refiller_poll (TrackRefiller *r, gboolean *started, GError **error)
{
  TrackDeviceScope saved;
  guint32 freed, urgent;
  gboolean ok;

  g_return_val_if_fail (r != NULL, FALSE);
  if (started != NULL)
    *started = FALSE;
  if (r->host->refills != r->started) /* one is running */
    return TRUE;
  freed = r->host->freed;
  urgent = r->host->urgent;
  if (freed - r->freed_at < r->batch && urgent == r->urgent_at)
    return TRUE;
  if (!track_enter_device (r->device, &saved, error))
    return FALSE;
  ok = start_refill (r, freed, urgent, started, error);
  track_leave_device (&saved);
  return ok;
}

gboolean
track_refiller_wait (TrackRefiller *r, GError **error)
{
  TrackDeviceScope saved;
  gboolean ok;

  g_return_val_if_fail (r != NULL, FALSE);
  if (!track_enter_device (r->device, &saved, error))
    return FALSE;
  ok = TRACK_CUDA_OK (cudaStreamSynchronize (r->stream), error) && time_last (r, error);
  track_leave_device (&saved);
  return ok;
}

static void
span_clear (gpointer data)
{
  TrackRefillSpan *span = data;

  (void)cudaEventDestroy (span->begin);
  (void)cudaEventDestroy (span->end);
}

gboolean
track_refiller_keep_spans (TrackRefiller *r, gboolean keep, GError **error)
{
  g_return_val_if_fail (r != NULL, FALSE);
  /* The running refill's time is taken from its events before they go. */
  if (!track_refiller_wait (r, error))
    return FALSE;
  r->begin = r->own[0];
  r->end = r->own[1];
  g_clear_pointer (&r->spans, g_array_unref);
  if (keep)
    {
      r->spans = g_array_new (FALSE, FALSE, sizeof (TrackRefillSpan));
      g_array_set_clear_func (r->spans, span_clear);
    }
  return TRUE;
}

const TrackRefillSpan *
track_refiller_get_spans (TrackRefiller *r, guint *n)
{
  g_return_val_if_fail (r != NULL && n != NULL, NULL);
  *n = r->spans != NULL ? r->spans->len : 0;
  return r->spans != NULL ? (const TrackRefillSpan *)r->spans->data : NULL;
}

void
track_refiller_get_stats (TrackRefiller *r, TrackRefillerStats *stats)
{
  g_return_if_fail (r != NULL && stats != NULL);
  stats->totals.freed = r->host->freed;
  stats->totals.misses = r->host->misses;
  stats->totals.urgent = r->host->urgent;
  stats->totals.made = r->host->made;
  stats->totals.refills = r->host->refills;
  stats->totals.unused = 0;
  stats->totals.busy_ns = r->host->busy_ns - r->busy_at;
  stats->started = r->started;
  stats->gpu_ms = r->gpu_ms;
  stats->blocks = r->n_blocks;
}

cudaStream_t
track_refiller_get_stream (TrackRefiller *r)
{
  g_return_val_if_fail (r != NULL, NULL);
  return r->stream;
}

void
track_refiller_free (TrackRefiller *r)
{
  g_autoptr (GError) error = NULL;
  TrackDeviceScope saved;

  if (r == NULL)
    return;
  if (track_enter_device (r->device, &saved, &error))
    {
      /* Its own stream only: a device synchronization would break another
       * thread's capture even relaxed; the totals are the producer's. */
      if (r->stream != NULL
          && !TRACK_CUDA_OK (cudaStreamSynchronize (r->stream), &error))
        g_warning ("track refiller: %s", error->message);
      g_clear_pointer (&r->spans, g_array_unref);
      for (guint i = 0; i < G_N_ELEMENTS (r->own); i++)
        if (r->own[i] != NULL)
          (void)cudaEventDestroy (r->own[i]);
      if (r->stream != NULL)
        (void)cudaStreamDestroy (r->stream);
      track_leave_device (&saved);
    }
  else
    g_warning ("track refiller: %s", error->message);
  g_clear_pointer (&r->refill, tg_producer_unref);
  g_free (r);
}
