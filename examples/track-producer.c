/* SPDX-License-Identifier: Apache-2.0 */
/* track-producer.c: the track producer's configuration, its stages and
 * their buffers' allocation, on TrackGen's public API alone. */
#include "track-buffers.h"

#include <string.h>

/* What the stages share: the configuration, the seeds and the buffers made
 * at creation; released with the last stage, that is with the producer. */
typedef struct
{
  TrackConfig config; /* its svg_path and svg_labels point to the copies below */
  char *svg_path;
  GStrv svg_labels;
  TgSeedState *seeds;
  gpointer buffers[N_BUFFERS];
  guint n_blocks;        /* of the kernels over the list of envs a call regenerates */
  guint n_refill_blocks; /* of the lookahead's refill in the step graph */
  TrackTotals *totals;   /* with overlap: mapped, where the kernels leave them */
} TrackContext;

const char *
track_family_name (gint32 family)
{
  static const char *const names[] = {
    [TRACK_FAMILY_POLAR] = "polar",
    [TRACK_FAMILY_STADIUM] = "stadium",
    [TRACK_FAMILY_STAR] = "star",
  };
  G_STATIC_ASSERT (G_N_ELEMENTS (names) == TRACK_N_FAMILIES);

  return family >= 0 && family < TRACK_N_FAMILIES ? names[family] : "none";
}

void
track_config_init (TrackConfig *config, guint n_envs)
{
  g_return_if_fail (config != NULL);
  *config = (TrackConfig){ 0 };
  config->n_envs = n_envs;
  config->shape.n_points = 128;
  config->shape.n_control = 12;
  config->shape.radius = 100.f;
  config->shape.radius_jitter = 0.3f;
  config->shape.angle_jitter = 0.5f;
  config->shape.width = 12.f;
  config->shape.min_turn_radius = 20.f;
  config->max_iters = 32;
  config->refill_batch = 64;
  config->svg_tracks = 16;
}

TrackIters
track_config_iters (const TrackConfig *config)
{
  return (TrackIters){ .min = config->min_iters, .max = config->max_iters };
}

static gboolean
invalid (GError **error, const char *field, const char *rule)
{
  g_set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
               "track config: %s must be %s", field, rule);
  return FALSE;
}

gboolean
track_config_check (const TrackConfig *config, GError **error)
{
  const TrackShape *s;

  g_return_val_if_fail (config != NULL, FALSE);
  s = &config->shape;
  if (config->n_envs == 0)
    {
      g_set_error_literal (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_EMPTY,
                           "track config: n_envs is 0, a batch needs one env or more");
      return FALSE;
    }
  if (config->n_envs > G_MAXINT32)
    return invalid (error, "n_envs", "at most 2^31 - 1 (one block per env)");
  if (s->n_points < 32 || s->n_points > TRACK_MAX_POINTS || s->n_points % 32 != 0)
    return invalid (error, "n_points",
                    "a multiple of 32 in [32, " G_STRINGIFY (TRACK_MAX_POINTS) "]");
  if (s->n_control < 4 || s->n_control > TRACK_MAX_CONTROL)
    return invalid (error, "n_control", "in [4, " G_STRINGIFY (TRACK_MAX_CONTROL) "]");
  /* Negated comparisons also refuse NaN. */
  if (!(s->radius > 0.f))
    return invalid (error, "radius", "positive");
  if (!(s->radius_jitter >= 0.f && s->radius_jitter <= 0.9f))
    return invalid (error, "radius_jitter", "in [0, 0.9]");
  if (!(s->angle_jitter >= 0.f && s->angle_jitter <= 0.95f))
    return invalid (error, "angle_jitter", "in [0, 0.95]");
  if (!(s->width > 0.f))
    return invalid (error, "width", "positive");
  if (!(s->min_turn_radius > 0.f))
    return invalid (error, "min_turn_radius", "positive");
  if (config->max_iters == 0)
    return invalid (error, "max_iters", "at least 1");
  if (config->min_iters > config->max_iters)
    return invalid (error, "min_iters", "at most max_iters");
  if (config->min_iters > 0 && config->lookahead == 0)
    return invalid (error, "min_iters",
                    "0 on demand (it sets what a spare track costs: needs lookahead)");
  if (config->lookahead > TRACK_MAX_LOOKAHEAD)
    return invalid (error, "lookahead",
                    "at most " G_STRINGIFY (TRACK_MAX_LOOKAHEAD) " (0: on demand)");
  if (config->lookahead > 0 && !config->advance)
    return invalid (error, "advance",
                    "TRUE with lookahead: an env that ends moves on to its next epoch");
  if (config->lookahead > 0 && config->refill_batch == 0)
    return invalid (error, "refill_batch", "at least 1 with lookahead");
  if (config->overlap && config->lookahead == 0)
    return invalid (error, "overlap",
                    "FALSE on demand: the refill it overlaps makes spare tracks "
                    "(set lookahead)");
  if (config->svg_path != NULL && config->svg_tracks == 0)
    return invalid (error, "svg_tracks", "at least 1 when svg_path is set");
  return TRUE;
}


static void
context_clear (gpointer data)
{
  TrackContext *ctx = data;
  TrackDeviceScope saved;

  if (track_enter_device (tg_seed_state_get_device (ctx->seeds), &saved, NULL))
    {
      for (guint b = 0; b < N_BUFFERS; b++)
        {
          cudaError_t status
              = ctx->buffers[b] != NULL ? cudaFree (ctx->buffers[b]) : cudaSuccess;
          if (status != cudaSuccess)
            g_warning ("track producer: cudaFree of '%s' failed: %s", track_buffer_names[b],
                       cudaGetErrorName (status));
        }
      /* After the buffers: cudaFree waited for the kernels that write it. */
      if (ctx->totals != NULL)
        (void)cudaFreeHost (ctx->totals);
      track_leave_device (&saved);
    }
  tg_seed_state_unref (ctx->seeds);
  g_free (ctx->svg_path);
  g_strfreev (ctx->svg_labels);
}

static void
context_release (gpointer data)
{
  g_atomic_rc_box_release_full (data, context_clear);
}

static gpointer
context_acquire (TrackContext *ctx)
{
  return g_atomic_rc_box_acquire (ctx);
}

/* With overlap: the totals' mapped host memory, and the "overlap" binding
 * pointed at it, with the generator for a refiller to check, copied from
 * *@overlap on @stream (pageable: CUDA promises no staging before an
 * asynchronous copy returns, so *@overlap lives till @stream is
 * synchronized).  The producer owns the totals: a refiller (which may come
 * and go) reads them, the kernels in flight write them till the end. */
static gboolean
init_overlap (TrackContext *ctx, TrackOverlap *overlap, cudaStream_t stream,
              GError **error)
{
  *overlap = (TrackOverlap){ .shape = ctx->config.shape,
                             .iters = track_config_iters (&ctx->config) };
  if (!TRACK_CUDA_OK (cudaHostAlloc ((void **)&ctx->totals, sizeof *ctx->totals,
                                     cudaHostAllocMapped),
                      error))
    return FALSE;
  memset (ctx->totals, 0, sizeof *ctx->totals);
  return TRACK_CUDA_OK (cudaHostGetDevicePointer ((void **)&overlap->host, ctx->totals, 0),
                        error)
         && TRACK_CUDA_OK (cudaMemcpyAsync (ctx->buffers[BUF_OVERLAP], overlap,
                                            sizeof *overlap, cudaMemcpyHostToDevice,
                                            stream),
                           error);
}

/* The lookahead's refill blocks in the step graph, into *@n: a block per
 * env of a batch, up to as many as @n_sms SMs hold at once.  A refill
 * usually lists about refill_batch envs (fewer when an env ran out), whose
 * tracks are then made side by side, a refill taking about one track's
 * time (a block makes a track alone, latency-bound).  Every block of every
 * call takes part in the call's tally (its last block, or a fused call's
 * later kernel, decides), refill or not: a larger batch costs every step
 * its blocks' launch. */
static gboolean
refill_blocks (const TrackConfig *c, int n_sms, guint *n, GError **error)
{
  int per_sm = 1;

  if (c->lookahead > 0
      && !TRACK_CUDA_OK (track_lookahead_blocks_per_sm (c->shape, &per_sm), error))
    return FALSE;
  *n = MIN (MIN (c->n_envs, c->refill_batch), (guint)MAX (n_sms, 1) * (guint)MAX (per_sm, 1));
  return TRUE;
}

static gboolean
allocate (TrackContext *ctx, cudaStream_t stream, GError **error)
{
  TrackDeviceScope saved;
  TrackOverlap overlap; /* copied from till the synchronization below */
  int n_sms = 0;
  gboolean ok;

  if (!track_enter_device (tg_seed_state_get_device (ctx->seeds), &saved, error))
    return FALSE;
  /* A block per SM: up to that many envs regenerate side by side, and a
   * call that regenerates one env launches few blocks that have nothing to
   * do.  A larger grid would only help when most of the batch regenerates. */
  ok = TRACK_CUDA_OK (cudaDeviceGetAttribute (&n_sms, cudaDevAttrMultiProcessorCount,
                                              tg_seed_state_get_device (ctx->seeds)),
                      error);
  ctx->n_blocks = MIN (ctx->config.n_envs, (guint)MAX (n_sms, 1));
  ok = ok && refill_blocks (&ctx->config, n_sms, &ctx->n_refill_blocks, error);
  for (guint b = 0; ok && b < N_BUFFERS; b++)
    {
      gsize size = track_buffer_size (&ctx->config, b);

      if (size == 0)
        continue;
      ok = TRACK_CUDA_OK (cudaMalloc (&ctx->buffers[b], size), error)
           && TRACK_CUDA_OK (
               cudaMemsetAsync (ctx->buffers[b], b == BUF_MASK ? 1 : 0, size, stream),
               error);
    }
  ok = ok && (!ctx->config.overlap || init_overlap (ctx, &overlap, stream, error));
  /* Filled before any producer call, on whatever stream that is. */
  ok = ok && TRACK_CUDA_OK (cudaStreamSynchronize (stream), error);
  track_leave_device (&saved);
  return ok;
}


/* One case of the "generate" switch: the masked envs are listed and their
 * epochs advance (with config.advance) in one kernel, then another draws
 * family @family's control points and makes their centerlines and the
 * relaxation's flag. */
static gboolean
generate_family (const TgLaunch *launch, TrackContext *ctx, TrackFamily family,
                 GError **error)
{
  const TrackConfig *c = &ctx->config;
  cudaStream_t stream = tg_launch_get_stream (launch);
  const guint8 *mask = track_binding (launch, BUF_MASK);
  guint32 *ids = track_binding (launch, BUF_IDS);
  TrackList *list = track_binding (launch, BUF_LIST);

  return TRACK_CUDA_OK (track_launch_list (
                            stream, c->n_envs, mask,
                            c->advance ? tg_seed_state_get_epochs (ctx->seeds) : NULL,
                            ids, list),
                        error)
         && TRACK_CUDA_OK (
             track_launch_generate (
                 stream, family, c->shape, ctx->n_blocks, list, ids,
                 tg_seed_state_get_seeds (ctx->seeds),
                 tg_seed_state_get_epochs (ctx->seeds), track_binding (launch, BUF_CONTROL),
                 track_binding (launch, BUF_FAMILIES), track_binding (launch, BUF_POINTS),
                 track_binding (launch, BUF_SHARPNESS), track_binding (launch, BUF_FLAG),
                 track_binding (launch, BUF_GENERATED)),
             error);
}

static gboolean
generate_polar (const TgLaunch *launch, gpointer data, GError **error)
{
  return generate_family (launch, data, TRACK_FAMILY_POLAR, error);
}

static gboolean
generate_stadium (const TgLaunch *launch, gpointer data, GError **error)
{
  return generate_family (launch, data, TRACK_FAMILY_STADIUM, error);
}

static gboolean
generate_star (const TgLaunch *launch, gpointer data, GError **error)
{
  return generate_family (launch, data, TRACK_FAMILY_STAR, error);
}

static gboolean
relax_body (const TgLaunch *launch, gpointer data, GError **error)
{
  TrackContext *ctx = data;
  const TrackConfig *c = &ctx->config;

  /* The kernel that finds whether an env is still too sharp also ends the
   * iteration (tg_loop_next): the loop needs no kernel of TrackGen's. */
  return TRACK_CUDA_OK (
      track_launch_relax (tg_launch_get_stream (launch), c->shape, ctx->n_blocks,
                          track_binding (launch, BUF_LIST), track_binding (launch, BUF_IDS),
                          track_binding (launch, BUF_POINTS), track_binding (launch, BUF_SHARPNESS),
                          track_binding (launch, BUF_FLAG), tg_launch_get_loop (launch)),
      error);
}

static gboolean
validate_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  TrackContext *ctx = data;
  const TrackConfig *c = &ctx->config;

  return TRACK_CUDA_OK (
      track_launch_validate (tg_launch_get_stream (launch), c->shape, ctx->n_blocks,
                             track_binding (launch, BUF_LIST), track_binding (launch, BUF_IDS),
                             track_binding (launch, BUF_POINTS), track_binding (launch, BUF_VALID),
                             track_binding (launch, BUF_FLAG),
                             track_binding (launch, BUF_GENERATED)),
      error);
}


/* The lookahead's one kernel: the ended envs take their next spares, and
 * the spares a refill decided in the previous call are made (or, with an
 * overlapped refill, made by a TrackRefiller beside the calls). */
static gboolean
lookahead_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  TrackContext *ctx = data;
  const TrackConfig *c = &ctx->config;

  if (c->overlap)
    return TRACK_CUDA_OK (
        track_launch_switch_overlap (
            tg_launch_get_stream (launch), c->shape, track_config_iters (c),
            track_binding (launch, BUF_MASK), track_binding (launch, BUF_FAMILY),
            tg_seed_state_get_seeds (ctx->seeds), tg_seed_state_get_epochs (ctx->seeds),
            track_rows (launch, FALSE), track_overlap_spares (launch, c)),
        error);
  return TRACK_CUDA_OK (
      track_launch_lookahead (
          tg_launch_get_stream (launch), c->shape, ctx->n_refill_blocks,
          track_config_iters (c), track_binding (launch, BUF_MASK),
          track_binding (launch, BUF_FAMILY), tg_seed_state_get_seeds (ctx->seeds),
          tg_seed_state_get_epochs (ctx->seeds), track_rows (launch, FALSE),
          track_spares (launch, c)),
      error);
}

/* Not capture-safe: the copies wait for the device. */
static gboolean
svg_stage (TgHostOps *ops, gpointer data, GError **error)
{
  TrackContext *ctx = data;
  const TrackConfig *c = &ctx->config;
  guint n = MIN (c->svg_tracks, c->n_envs), n_points = c->shape.n_points;
  g_autofree float2 *points = g_new (float2, (gsize)n * n_points);
  g_autofree guint8 *valid = g_new (guint8, n);
  const TgLaunch *launch = tg_host_ops_get_launch (ops);

  return tg_host_ops_copy_to_host (ops, points, track_binding (launch, BUF_POINTS),
                                   (gsize)n * n_points * sizeof *points, error)
         && tg_host_ops_copy_to_host (ops, valid, track_binding (launch, BUF_VALID), n, error)
         && track_svg_write (ctx->svg_path, points, valid, n, n_points, c->shape.width,
                             (const char *const *)ctx->svg_labels, error);
}

/* On demand: a SWITCH on the family (list the masked envs, advance their
 * epochs, generate), the relaxation loop, the validation. */
static void
add_on_demand_stages (TgProducer *p, TrackContext *ctx)
{
  static const TgDeviceFunc family_cases[] = {
    [TRACK_FAMILY_POLAR] = generate_polar,
    [TRACK_FAMILY_STADIUM] = generate_stadium,
    [TRACK_FAMILY_STAR] = generate_star,
  };
  G_STATIC_ASSERT (G_N_ELEMENTS (family_cases) == TRACK_N_FAMILIES);
  const TrackConfig *config = &ctx->config;
  /* The flag, set by the generation, is read at entry (0: nothing to relax,
   * the loop is skipped); after that the body decides. */
  const TgLoopSpec relax = { .flag_binding = track_buffer_names[BUF_FLAG],
                             .status_binding = track_buffer_names[BUF_STATUS],
                             .max_iters = config->max_iters,
                             .set_by_body = TRUE };
  const TgSwitchSpec sw = { .index_binding = track_buffer_names[BUF_FAMILY],
                            .n_cases = G_N_ELEMENTS (family_cases),
                            .cases = family_cases };
  guint stage;

  stage = tg_producer_add_switch_stage (p, "generate", TG_STAGE_CAPTURE_SAFE, &sw,
                                        context_acquire (ctx), context_release, NULL);
  track_declare (p, stage, config,
           TRACK_BIT (BUF_MASK) | TRACK_BIT (BUF_IDS) | TRACK_BIT (BUF_LIST) | TRACK_BIT (BUF_CONTROL)
               | TRACK_BIT (BUF_POINTS) | TRACK_BIT (BUF_FAMILIES) | TRACK_BIT (BUF_SHARPNESS)
               | TRACK_BIT (BUF_FLAG) | TRACK_BIT (BUF_GENERATED));
  /* The loop declares its flag and status itself. */
  stage = tg_producer_add_loop_stage (p, "relax", TG_STAGE_CAPTURE_SAFE, &relax,
                                      relax_body, context_acquire (ctx),
                                      context_release, NULL);
  track_declare (p, stage, config,
           TRACK_BIT (BUF_IDS) | TRACK_BIT (BUF_LIST) | TRACK_BIT (BUF_POINTS) | TRACK_BIT (BUF_SHARPNESS));
  /* Only after a case ran: a call that generated nothing changes nothing.
   * The kernel reads "generated" itself: a stage condition would put a
   * conditional node, and its GPU time, around every validation. */
  stage = tg_producer_add_device_stage (p, "validate", TG_STAGE_CAPTURE_SAFE,
                                        validate_stage, context_acquire (ctx),
                                        context_release, NULL);
  track_declare (p, stage, config,
           TRACK_BIT (BUF_IDS) | TRACK_BIT (BUF_LIST) | TRACK_BIT (BUF_POINTS) | TRACK_BIT (BUF_VALID)
               | TRACK_BIT (BUF_FLAG) | TRACK_BIT (BUF_GENERATED));
}

/* With lookahead: one stage, one kernel. */
static void
add_lookahead_stages (TgProducer *p, TrackContext *ctx)
{
  guint stage = tg_producer_add_device_stage (p, "lookahead", TG_STAGE_CAPTURE_SAFE,
                                              lookahead_stage, context_acquire (ctx),
                                              context_release, NULL);

  track_declare (p, stage, &ctx->config,
           TRACK_BIT (BUF_MASK) | TRACK_BIT (BUF_FAMILY) | TRACK_BIT (BUF_CONTROL) | TRACK_BIT (BUF_POINTS)
               | TRACK_BIT (BUF_FAMILIES) | TRACK_BIT (BUF_VALID) | TRACK_BIT (BUF_SHARPNESS)
               | TRACK_SPARE_BUFFERS
               | TRACK_BIT (BUF_REFILL_IDS)
               | (ctx->config.overlap ? TRACK_BIT (BUF_SLOT_STATES) | TRACK_BIT (BUF_OVERLAP)
                                      : TRACK_BIT (BUF_REFILL) | TRACK_BIT (BUF_CLAIMS)));
}

TgProducer *
track_producer_new (const TrackConfig *config, TgSeedState *seeds, cudaStream_t stream,
                    GError **error)
{
  g_autoptr (TgProducer) p = NULL;
  TrackContext *ctx;
  guint stage;
  gboolean ok;

  g_return_val_if_fail (config != NULL && seeds != NULL, NULL);
  if (!track_config_check (config, error))
    return NULL;
  if (tg_seed_state_get_n_envs (seeds) != config->n_envs)
    {
      g_set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                   "the seed state holds %u envs, the track config %u",
                   tg_seed_state_get_n_envs (seeds), config->n_envs);
      return NULL;
    }

  ctx = g_atomic_rc_box_new0 (TrackContext);
  ctx->config = *config;
  ctx->svg_path = g_strdup (config->svg_path);
  ctx->svg_labels = g_strdupv ((char **)config->svg_labels);
  ctx->config.svg_path = ctx->svg_path;
  ctx->config.svg_labels = (const char *const *)ctx->svg_labels;
  ctx->seeds = tg_seed_state_ref (seeds);
  ok = allocate (ctx, stream, error);

  if (ok)
    {
      p = tg_producer_new ("track", tg_seed_state_get_device (seeds));
      if (config->lookahead > 0)
        add_lookahead_stages (p, ctx);
      else
        add_on_demand_stages (p, ctx);
      if (ctx->svg_path != NULL)
        {
          stage = tg_producer_add_host_stage (p, "svg", TG_STAGE_NONE, svg_stage,
                                              context_acquire (ctx), context_release,
                                              NULL);
          track_declare (p, stage, config, TRACK_BIT (BUF_POINTS) | TRACK_BIT (BUF_VALID));
        }
      for (guint b = 0; ok && b < N_BUFFERS; b++)
        ok = ctx->buffers[b] == NULL
             || tg_producer_bind (p, track_buffer_names[b], ctx->buffers[b],
                                  track_buffer_size (config, b), error);
    }
  context_release (ctx);
  return ok ? g_steal_pointer (&p) : NULL;
}

static gpointer
producer_find (gconstpointer producer, TrackBuffer b)
{
  return tg_producer_get_binding ((TgProducer *)producer, track_buffer_names[b], NULL);
}

gboolean
track_fused_init (TrackFused *fused, TgProducer *producer, const TrackConfig *config,
                  TgSeedState *seeds, GError **error)
{
  TrackDeviceScope saved;
  int n_sms = 0;
  gboolean ok;

  g_return_val_if_fail (fused != NULL && producer != NULL && config != NULL
                            && seeds != NULL,
                        FALSE);
  if (!track_config_check (config, error))
    return FALSE;
  if (config->lookahead == 0)
    return invalid (error, "lookahead",
                    "above 0 for a fused call: it switches ended envs to their "
                    "spares in the simulator's step kernel");
  if (tg_seed_state_get_n_envs (seeds) != config->n_envs)
    return invalid (error, "n_envs", "the seed state's number of envs");
  /* Each binding as the config sizes it: the producer was made with it. */
  for (guint b = 0; b < N_BUFFERS; b++)
    {
      gsize want = track_buffer_size (config, b), bound = 0;

      (void)tg_producer_get_binding (producer, track_buffer_names[b], &bound);
      if (want != 0 && bound != want)
        {
          g_set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                       "track_fused_init: the producer's binding '%s' holds %" G_GSIZE_FORMAT
                       " bytes, the config's %" G_GSIZE_FORMAT
                       ": pass the config the producer was made with",
                       track_buffer_names[b], bound, want);
          return FALSE;
        }
    }
  if (!track_enter_device (tg_seed_state_get_device (seeds), &saved, error))
    return FALSE;
  *fused = (TrackFused){ 0 };
  ok = config->overlap /* no refill blocks: the refill runs beside */
       || (TRACK_CUDA_OK (cudaDeviceGetAttribute (&n_sms, cudaDevAttrMultiProcessorCount,
                                                  tg_seed_state_get_device (seeds)),
                          error)
           && refill_blocks (config, n_sms, &fused->n_refill_blocks, error));
  track_leave_device (&saved);
  if (!ok)
    return FALSE;
  fused->shape = config->shape;
  fused->iters = track_config_iters (config);
  fused->seeds = tg_seed_state_get_seeds (seeds);
  fused->epochs = tg_seed_state_get_epochs (seeds);
  fused->current = track_rows_found (producer_find, producer, FALSE);
  fused->overlap = config->overlap;
  if (config->overlap)
    fused->overlap_spares = track_overlap_spares_found (producer_find, producer, config);
  else
    fused->spares = track_spares_found (producer_find, producer, config);
  return TRUE;
}

gboolean
track_producer_reset (TgProducer *producer, cudaStream_t stream, GError **error)
{
  static const TrackBuffer rings[] = { BUF_SLOTS, BUF_REFILL, BUF_SLOT_STATES };

  g_return_val_if_fail (producer != NULL, FALSE);
  for (guint i = 0; i < G_N_ELEMENTS (rings); i++)
    {
      gsize size = 0;
      gpointer ptr = tg_producer_get_binding (producer, track_buffer_names[rings[i]], &size);

      if (ptr != NULL && !TRACK_CUDA_OK (cudaMemsetAsync (ptr, 0, size, stream), error))
        return FALSE;
    }
  return TRUE;
}

TgSeedState *
track_seed_state_new_at (int device, cudaStream_t stream, guint n, const guint64 *seeds,
                         const guint32 *epochs, GError **error)
{
  g_autoptr (TgSeedState) state = NULL;
  TrackDeviceScope saved;
  gboolean ok;

  g_return_val_if_fail (seeds != NULL && epochs != NULL, NULL);
  state = tg_seed_state_new_from_array (device, n, seeds, error);
  if (state == NULL || !track_enter_device (device, &saved, error))
    return NULL;
  /* The epochs are device memory of the state, which kernels (and so
   * copies) may write; from pageable memory, hence the synchronization. */
  ok = TRACK_CUDA_OK (cudaMemcpyAsync (tg_seed_state_get_epochs (state), epochs,
                                       n * sizeof *epochs, cudaMemcpyHostToDevice,
                                       stream),
                      error)
       && TRACK_CUDA_OK (cudaStreamSynchronize (stream), error);
  track_leave_device (&saved);
  return ok ? g_steal_pointer (&state) : NULL;
}
