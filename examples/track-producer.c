/* track-producer.c: the track producer's stages, buffers and SVG writer, on
 * TrackGen's public API alone. */
#include "track-producer.h"
#include "track-kernels.h"

#include <string.h>

typedef enum
{
  BUF_MASK,
  BUF_FAMILY,
  BUF_CONTROL,
  BUF_POINTS,
  BUF_FAMILIES,
  BUF_VALID,
  BUF_SHARPNESS,
  BUF_FLAG,
  BUF_GENERATED,
  BUF_STATUS,
  N_BUFFERS
} Buffer;

static const char *const buffer_names[] = {
  "mask",  "family",    "control", "points",    "families",
  "valid", "sharpness", "flag",    "generated", "loop_status",
};
G_STATIC_ASSERT (G_N_ELEMENTS (buffer_names) == N_BUFFERS);

/* What the stages share: the configuration, the seeds and the buffers made
 * at creation; released with the last stage, that is with the producer. */
typedef struct
{
  TrackConfig config; /* its svg_path and svg_labels point to the copies below */
  char *svg_path;
  GStrv svg_labels;
  TgSeedState *seeds;
  gpointer buffers[N_BUFFERS];
} TrackContext;

gboolean
track_cuda_ok (cudaError_t status, const char *call, GError **error)
{
  if (status == cudaSuccess)
    return TRUE;
  /* A launch error is reported once, here; one pending from another call is
   * left to whoever made it. */
  if (cudaPeekAtLastError () == status)
    (void)cudaGetLastError ();
  g_set_error (error, TG_CUDA_ERROR, status, "%s failed: %s (%s)", call,
               cudaGetErrorName (status), cudaGetErrorString (status));
  return FALSE;
}

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
  config->svg_tracks = 16;
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
  if (config->svg_path != NULL && config->svg_tracks == 0)
    return invalid (error, "svg_tracks", "at least 1 when svg_path is set");
  return TRUE;
}

static gsize
buffer_size (const TrackConfig *c, Buffer b)
{
  switch (b)
    {
    case BUF_MASK:
    case BUF_FAMILIES:
    case BUF_VALID:
      return c->n_envs;
    case BUF_CONTROL:
      return (gsize)c->n_envs * c->shape.n_control * sizeof (float2);
    case BUF_POINTS:
      return (gsize)c->n_envs * c->shape.n_points * sizeof (float2);
    case BUF_SHARPNESS:
      return c->n_envs * sizeof (float);
    case BUF_FAMILY:
    case BUF_FLAG:
    case BUF_GENERATED:
      return sizeof (gint32);
    case BUF_STATUS:
    default:
      return sizeof (TgLoopStatus);
    }
}

static gboolean
enter_device (int device, int *saved, GError **error)
{
  return TRACK_CUDA_OK (cudaGetDevice (saved), error)
         && TRACK_CUDA_OK (cudaSetDevice (device), error);
}

static void
leave_device (int saved)
{
  cudaError_t status = cudaSetDevice (saved);

  if (status != cudaSuccess)
    g_warning ("track producer: cannot restore device %d: %s", saved,
               cudaGetErrorName (status));
}

static void
context_clear (gpointer data)
{
  TrackContext *ctx = data;
  int saved;

  if (enter_device (tg_seed_state_get_device (ctx->seeds), &saved, NULL))
    {
      for (guint b = 0; b < N_BUFFERS; b++)
        {
          cudaError_t status
              = ctx->buffers[b] != NULL ? cudaFree (ctx->buffers[b]) : cudaSuccess;
          if (status != cudaSuccess)
            g_warning ("track producer: cudaFree of '%s' failed: %s", buffer_names[b],
                       cudaGetErrorName (status));
        }
      leave_device (saved);
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

static gboolean
allocate (TrackContext *ctx, cudaStream_t stream, GError **error)
{
  int saved;
  gboolean ok;

  if (!enter_device (tg_seed_state_get_device (ctx->seeds), &saved, error))
    return FALSE;
  ok = TRUE;
  for (guint b = 0; ok && b < N_BUFFERS; b++)
    {
      gsize size = buffer_size (&ctx->config, b);
      ok = TRACK_CUDA_OK (cudaMalloc (&ctx->buffers[b], size), error)
           && TRACK_CUDA_OK (
               cudaMemsetAsync (ctx->buffers[b], b == BUF_MASK ? 1 : 0, size, stream),
               error);
    }
  /* Filled before any producer call, on whatever stream that is. */
  ok = ok && TRACK_CUDA_OK (cudaStreamSynchronize (stream), error);
  leave_device (saved);
  return ok;
}

/* The buffer bound as @b: declared by the running stage, so TrackGen has
 * checked it is bound and large enough. */
static gpointer
binding (const TgLaunch *launch, Buffer b)
{
  return tg_launch_get_binding (launch, buffer_names[b]);
}

#define BIT(b) (1u << (b))

/* Declares the buffers in @set (BIT()s of Buffer) for @stage. */
static void
declare (TgProducer *p, guint stage, const TrackConfig *config, guint set)
{
  for (guint b = 0; b < N_BUFFERS; b++)
    if (set & BIT (b))
      tg_producer_declare_binding (p, stage, buffer_names[b], buffer_size (config, b),
                                   NULL);
}

/* One case of the "generate" switch: the masked envs' epochs advance (with
 * config.advance), then family @family draws their control points, and the
 * shared kernels make their centerlines and the relaxation's flag. */
static gboolean
generate_family (const TgLaunch *launch, TrackContext *ctx, TrackFamily family,
                 GError **error)
{
  const TrackConfig *c = &ctx->config;
  cudaStream_t stream = tg_launch_get_stream (launch);
  const guint8 *mask = binding (launch, BUF_MASK);
  float2 *control = binding (launch, BUF_CONTROL);
  float *sharpness = binding (launch, BUF_SHARPNESS);

  return (!c->advance
          || tg_seed_state_advance (ctx->seeds, stream, mask, c->n_envs, error))
         && TRACK_CUDA_OK (track_launch_control (stream, family, c->shape, c->n_envs,
                                                 tg_seed_state_get_seeds (ctx->seeds),
                                                 tg_seed_state_get_epochs (ctx->seeds),
                                                 mask, control,
                                                 binding (launch, BUF_FAMILIES)),
                           error)
         && TRACK_CUDA_OK (
             track_launch_centerline (stream, c->shape, c->n_envs, mask, control,
                                      binding (launch, BUF_POINTS), sharpness,
                                      binding (launch, BUF_GENERATED)),
             error)
         && TRACK_CUDA_OK (track_launch_reduce_flag (stream, c->n_envs, mask, sharpness,
                                                     binding (launch, BUF_FLAG)),
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
  cudaStream_t stream = tg_launch_get_stream (launch);
  const guint8 *mask = binding (launch, BUF_MASK);
  float *sharpness = binding (launch, BUF_SHARPNESS);

  /* The reduction that finds whether an env is still too sharp also ends the
   * iteration (tg_loop_next): the loop needs no kernel of TrackGen's. */
  return TRACK_CUDA_OK (track_launch_relax (stream, c->shape, c->n_envs, mask,
                                            binding (launch, BUF_POINTS), sharpness),
                        error)
         && TRACK_CUDA_OK (track_launch_reduce_next (stream, c->n_envs, mask, sharpness,
                                                     binding (launch, BUF_FLAG),
                                                     tg_launch_get_loop (launch)),
                           error);
}

static gboolean
validate_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  TrackContext *ctx = data;
  const TrackConfig *c = &ctx->config;

  return TRACK_CUDA_OK (
      track_launch_validate (tg_launch_get_stream (launch), c->shape, c->n_envs,
                             binding (launch, BUF_MASK), binding (launch, BUF_POINTS),
                             binding (launch, BUF_VALID), binding (launch, BUF_FLAG),
                             binding (launch, BUF_GENERATED)),
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

  return tg_host_ops_copy_to_host (ops, points, binding (launch, BUF_POINTS),
                                   (gsize)n * n_points * sizeof *points, error)
         && tg_host_ops_copy_to_host (ops, valid, binding (launch, BUF_VALID), n, error)
         && track_svg_write (ctx->svg_path, points, valid, n, n_points, c->shape.width,
                             (const char *const *)ctx->svg_labels, error);
}

TgProducer *
track_producer_new (const TrackConfig *config, TgSeedState *seeds, cudaStream_t stream,
                    GError **error)
{
  static const TgDeviceFunc family_cases[] = {
    [TRACK_FAMILY_POLAR] = generate_polar,
    [TRACK_FAMILY_STADIUM] = generate_stadium,
    [TRACK_FAMILY_STAR] = generate_star,
  };
  G_STATIC_ASSERT (G_N_ELEMENTS (family_cases) == TRACK_N_FAMILIES);
  g_autoptr (TgProducer) p = NULL;
  TgLoopSpec relax;
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
      /* The flag, set by the generation, is read at entry (0: nothing to
       * relax, the loop is skipped); after that the body decides. */
      relax = (TgLoopSpec){ .flag_binding = buffer_names[BUF_FLAG],
                            .status_binding = buffer_names[BUF_STATUS],
                            .max_iters = config->max_iters,
                            .set_by_body = TRUE };
      p = tg_producer_new ("track", tg_seed_state_get_device (seeds));
      TgSwitchSpec sw = { .index_binding = buffer_names[BUF_FAMILY],
                          .n_cases = G_N_ELEMENTS (family_cases),
                          .cases = family_cases };
      stage
          = tg_producer_add_switch_stage (p, "generate", TG_STAGE_CAPTURE_SAFE, &sw,
                                          context_acquire (ctx), context_release, NULL);
      declare (p, stage, config,
               BIT (BUF_MASK) | BIT (BUF_CONTROL) | BIT (BUF_POINTS)
                   | BIT (BUF_FAMILIES) | BIT (BUF_SHARPNESS) | BIT (BUF_FLAG)
                   | BIT (BUF_GENERATED));
      /* The loop declares its flag and status itself. */
      stage = tg_producer_add_loop_stage (p, "relax", TG_STAGE_CAPTURE_SAFE, &relax,
                                          relax_body, context_acquire (ctx),
                                          context_release, NULL);
      declare (p, stage, config,
               BIT (BUF_MASK) | BIT (BUF_POINTS) | BIT (BUF_SHARPNESS));
      /* Only after a case ran: a call that generated nothing changes nothing.
       * The condition declares "generated". */
      stage = tg_producer_add_device_stage (p, "validate", TG_STAGE_CAPTURE_SAFE,
                                            validate_stage, context_acquire (ctx),
                                            context_release, NULL);
      tg_producer_set_stage_condition (p, stage, buffer_names[BUF_GENERATED], NULL);
      declare (p, stage, config,
               BIT (BUF_MASK) | BIT (BUF_POINTS) | BIT (BUF_VALID) | BIT (BUF_FLAG));
      if (ctx->svg_path != NULL)
        {
          stage = tg_producer_add_host_stage (p, "svg", TG_STAGE_NONE, svg_stage,
                                              context_acquire (ctx), context_release,
                                              NULL);
          declare (p, stage, config, BIT (BUF_POINTS) | BIT (BUF_VALID));
        }
      for (guint b = 0; ok && b < N_BUFFERS; b++)
        ok = tg_producer_bind (p, buffer_names[b], ctx->buffers[b],
                               buffer_size (config, b), error);
    }
  context_release (ctx);
  return ok ? g_steal_pointer (&p) : NULL;
}

TgSeedState *
track_seed_state_new_at (int device, cudaStream_t stream, guint n, const guint64 *seeds,
                         const guint32 *epochs, GError **error)
{
  g_autoptr (TgSeedState) state = NULL;
  int saved;
  gboolean ok;

  g_return_val_if_fail (seeds != NULL && epochs != NULL, NULL);
  state = tg_seed_state_new_from_array (device, n, seeds, error);
  if (state == NULL || !enter_device (device, &saved, error))
    return NULL;
  /* The epochs are device memory of the state, which kernels (and so
   * copies) may write; from pageable memory, hence the synchronization. */
  ok = TRACK_CUDA_OK (cudaMemcpyAsync (tg_seed_state_get_epochs (state), epochs,
                                       n * sizeof *epochs, cudaMemcpyHostToDevice,
                                       stream),
                      error)
       && TRACK_CUDA_OK (cudaStreamSynchronize (stream), error);
  leave_device (saved);
  return ok ? g_steal_pointer (&state) : NULL;
}

/* ------------------------------------------------------------------------ */
/* SVG                                                                       */

#define SVG_CELL 280.0 /* px per track, square */
#define SVG_PAD 16.0
#define SVG_LABEL 20.0
#define SVG_TITLE 34.0

/* Locale-independent numbers: SVG wants a '.' whatever LC_NUMERIC says. */
static void
append_num (GString *s, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%.1f", v));
}

static void
append_attr (GString *s, const char *name, double v)
{
  g_string_append_printf (s, " %s=\"", name);
  append_num (s, v);
  g_string_append_c (s, '"');
}

/* One track in the cell at (@x0, @y0): kerbs, asphalt, dashed centerline,
 * start point and label. */
static void
append_track (GString *s, const float2 *p, guint n, gboolean valid, float width,
              const char *label, double x0, double y0)
{
  static const struct
  {
    const char *stroke;
    double extra; /* px added to the scaled width; < 0: a fixed line width */
    const char *dash;
  } strokes[] = {
    { "#c0392b", 4.0, NULL },   /* kerbs */
    { "#5d6063", 0.0, NULL },   /* asphalt */
    { "#ffffff", -1.2, "6 5" }, /* centerline */
  };
  double min_x = p[0].x, max_x = p[0].x, min_y = p[0].y, max_y = p[0].y;
  double side = SVG_CELL - 2 * SVG_PAD, avail = side - SVG_LABEL, scale, ext, ox, oy;
  g_autofree char *text = g_markup_escape_text (label, -1);
  g_autoptr (GString) d = g_string_new ("M");

  for (guint i = 1; i < n; i++)
    {
      min_x = MIN (min_x, p[i].x);
      max_x = MAX (max_x, p[i].x);
      min_y = MIN (min_y, p[i].y);
      max_y = MAX (max_y, p[i].y);
    }
  ext = MAX (max_x - min_x, max_y - min_y) + width;
  scale = ext > 0 ? avail / ext : 1.0;
  /* Centre the track below the label; SVG's y axis points down. */
  ox = x0 + SVG_PAD + (side - scale * (max_x - min_x)) / 2 - scale * min_x;
  oy = y0 + SVG_PAD + SVG_LABEL + (avail - scale * (max_y - min_y)) / 2 + scale * max_y;
  for (guint i = 0; i < n; i++)
    {
      g_string_append_c (d, i == 0 ? ' ' : 'L');
      append_num (d, ox + scale * p[i].x);
      g_string_append_c (d, ' ');
      append_num (d, oy - scale * p[i].y);
    }
  g_string_append (d, " Z");

  for (guint k = 0; k < G_N_ELEMENTS (strokes); k++)
    {
      double w
          = strokes[k].extra < 0 ? -strokes[k].extra : scale * width + strokes[k].extra;

      g_string_append_printf (s,
                              "<path d=\"%s\" fill=\"none\" stroke=\"%s\" "
                              "stroke-linejoin=\"round\"",
                              d->str, strokes[k].stroke);
      append_attr (s, "stroke-width", w);
      if (strokes[k].dash != NULL)
        g_string_append_printf (s, " stroke-dasharray=\"%s\"", strokes[k].dash);
      g_string_append (s, "/>\n");
    }
  g_string_append (s, "<circle r=\"4\" fill=\"#2e86de\" stroke=\"#fff\"");
  append_attr (s, "cx", ox + scale * p[0].x);
  append_attr (s, "cy", oy - scale * p[0].y);
  g_string_append (s, "/>\n<text font-family=\"sans-serif\" font-size=\"13\"");
  append_attr (s, "x", x0 + SVG_PAD);
  append_attr (s, "y", y0 + SVG_PAD + 10);
  g_string_append_printf (s, " fill=\"%s\">%s%s</text>\n", valid ? "#222" : "#c0392b",
                          text, valid ? "" : " (invalid)");
}

gboolean
track_svg_write (const char *path, const float2 *points, const guint8 *valid,
                 guint n_tracks, guint n_points, float width, const char *const *labels,
                 GError **error)
{
  g_autoptr (GString) s = g_string_new (NULL);
  gboolean have_labels = labels != NULL;
  guint cols = 1, rows;
  double w, h;

  g_return_val_if_fail (path != NULL && points != NULL && valid != NULL, FALSE);
  g_return_val_if_fail (n_tracks > 0 && n_points >= 3, FALSE);
  while (cols * cols < n_tracks)
    cols++;
  rows = (n_tracks + cols - 1) / cols;
  w = cols * SVG_CELL;
  h = rows * SVG_CELL + SVG_TITLE;

  g_string_append (s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<svg xmlns=\"http://www.w3.org/2000/svg\"");
  append_attr (s, "width", w);
  append_attr (s, "height", h);
  g_string_append (s, " viewBox=\"0 0 ");
  append_num (s, w);
  g_string_append_c (s, ' ');
  append_num (s, h);
  g_string_append (s,
                   "\">\n<rect width=\"100%\" height=\"100%\" fill=\"#f4f1ea\"/>\n"
                   "<text font-family=\"sans-serif\" font-size=\"17\" fill=\"#222\"");
  append_attr (s, "x", SVG_PAD);
  append_attr (s, "y", 23);
  g_string_append_printf (s, ">TrackGen: %u tracks of %u points, drawn ", n_tracks,
                          n_points);
  append_num (s, width);
  g_string_append (s, " m wide (dot: start)</text>\n");
  for (guint i = 0; i < n_tracks; i++)
    {
      double x0 = (i % cols) * SVG_CELL, y0 = SVG_TITLE + (i / cols) * SVG_CELL;
      g_autofree char *fallback = g_strdup_printf ("track %u", i);
      const char *label = fallback;

      if (have_labels && labels[i] != NULL)
        label = labels[i];
      else
        have_labels = FALSE; /* a NULL-terminated list may be shorter */
      g_string_append (s, "<rect rx=\"10\" fill=\"#dde8cf\"");
      append_attr (s, "x", x0 + 4);
      append_attr (s, "y", y0 + 4);
      append_attr (s, "width", SVG_CELL - 8);
      append_attr (s, "height", SVG_CELL - 8);
      g_string_append (s, "/>\n");
      append_track (s, points + (gsize)i * n_points, n_points, valid[i] != 0, width,
                    label, x0, y0);
    }
  g_string_append (s, "</svg>\n");
  return g_file_set_contents (path, s->str, s->len, error);
}
