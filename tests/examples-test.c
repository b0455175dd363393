/* SPDX-License-Identifier: Apache-2.0 */
/* examples-test.c: the example track producer, as its users rely on it:
 * bit-identical tracks under EAGER, REPLAY and RECORD, for every shape
 * family the switch picks (and none out of range), masked-off envs left
 * alone, sound tracks, a relaxation that ran, tracks reproducible from
 * (seed, epoch, family) alone, bindings checked against what the stages
 * declared, and its SVG; and the simulator loop, sharded or not. */
#include "config.h"
#include "examples-test.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

TgProducer *
track_new (TgSeedState *seeds, cudaStream_t s, guint n_envs, gboolean advance,
           const char *svg_path)
{
  TrackConfig config;

  track_config_init (&config, n_envs);
  config.advance = advance;
  config.svg_path = svg_path;
  config.svg_tracks = 4;
  return track_new_with (seeds, s, &config);
}

TgProducer *
track_new_with (TgSeedState *seeds, cudaStream_t s, const TrackConfig *config)
{
  g_autoptr (GError) error = NULL;
  TgProducer *p = track_producer_new (config, seeds, s, &error);

  g_assert_no_error (error);
  g_assert_nonnull (p);
  return p;
}

gsize
points_size (guint n_envs)
{
  TrackConfig config;

  track_config_init (&config, n_envs);
  return (gsize)n_envs * config.shape.n_points * sizeof (float2);
}

void
download (gpointer dst, TgProducer *p, const char *name, gsize size, cudaStream_t s)
{
  TG_TEST_CUDA (cudaMemcpyAsync (dst, tg_producer_get_binding (p, name, NULL), size,
                                 cudaMemcpyDeviceToHost, s));
  TG_TEST_CUDA (cudaStreamSynchronize (s));
}

void
upload (TgProducer *p, const char *name, gconstpointer src, gsize size, cudaStream_t s)
{
  TG_TEST_CUDA (cudaMemcpyAsync (tg_producer_get_binding (p, name, NULL), src, size,
                                 cudaMemcpyHostToDevice, s));
  TG_TEST_CUDA (cudaStreamSynchronize (s));
}

void
fill (TgProducer *p, const char *name, int byte, cudaStream_t s)
{
  gsize size = 0;
  gpointer ptr = tg_producer_get_binding (p, name, &size);

  TG_TEST_CUDA (cudaMemsetAsync (ptr, byte, size, s));
  TG_TEST_CUDA (cudaStreamSynchronize (s));
}

void
set_family (TgProducer *p, gint32 family, cudaStream_t s)
{
  upload (p, "family", &family, sizeof family, s);
}

void
run_ok (TgProducer *p, cudaStream_t s, TgPolicy policy)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (tg_producer_run (p, s, policy, tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (s));
}

/* Records @p into a capture of the test's own on @s, as a simulator would. */
cudaGraphExec_t
record (TgProducer *p, cudaStream_t s, TgCondition condition)
{
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  gboolean ok;

  TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeThreadLocal));
  ok = tg_producer_run (p, s, TG_POLICY_RECORD, condition, &error);
  TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
  g_assert_no_error (error);
  g_assert_true (ok);
  tg_test_assert_not_capturing (s);
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  return exec;
}

void
launch (cudaGraphExec_t exec, cudaStream_t s)
{
  TG_TEST_CUDA (cudaGraphLaunch (exec, s));
  TG_TEST_CUDA (cudaStreamSynchronize (s));
}

void
assert_relaxed (TgProducer *p, cudaStream_t s)
{
  TgLoopStatus status;

  download (&status, p, "loop_status", sizeof status, s);
  g_assert_cmpint (status.end, !=, TG_LOOP_END_NONE);
  g_assert_cmpint (status.end, !=, TG_LOOP_END_SKIPPED);
  g_assert_cmpint (status.iterations, >=, 1);
  g_assert_cmpint (status.iterations, <=, 32);
}

static double
dist2 (float2 a, float2 b)
{
  return ((double)a.x - b.x) * ((double)a.x - b.x)
         + ((double)a.y - b.y) * ((double)a.y - b.y);
}

/* Finite points, a closing segment no longer than the track's others (so
 * the polyline is a closed loop), and most tracks valid. */
void
assert_sound (const float2 *points, const guint8 *valid, guint n_envs, guint n_points)
{
  guint n_valid = 0;

  for (guint e = 0; e < n_envs; e++)
    {
      const float2 *p = points + (gsize)e * n_points;
      double longest = 0;

      for (guint i = 0; i < n_points; i++)
        g_assert_true (isfinite (p[i].x) && isfinite (p[i].y));
      for (guint i = 0; i + 1 < n_points; i++)
        longest = MAX (longest, dist2 (p[i], p[i + 1]));
      g_assert_cmpfloat (longest, >, 0);
      g_assert_cmpfloat (dist2 (p[n_points - 1], p[0]), <=, 4 * longest);
      g_assert_cmpuint (valid[e], <=, 1);
      n_valid += valid[e];
    }
  g_assert_cmpuint (n_valid, >=, n_envs * 9 / 10);
}

static void
test_config (void)
{
  g_autoptr (GError) error = NULL;
  TrackConfig config;

  track_config_init (&config, N_ENVS);
  g_assert_true (track_config_check (&config, &error));
  g_assert_no_error (error);

  config.shape.n_points = 100;
  g_assert_false (track_config_check (&config, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "n_points"));
  g_clear_error (&error);

  track_config_init (&config, N_ENVS);
  config.shape.radius = NAN;
  g_assert_false (track_config_check (&config, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_clear_error (&error);

  track_config_init (&config, 0);
  g_assert_false (track_config_check (&config, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_EMPTY);
}

/* Each option's bounds as doc/tracks.md gives them: a value just outside is
 * refused with an error naming the option, the bound itself taken (an open
 * bound: the least value past it).  Host code: runs everywhere. */
#define OFFSET(field) G_STRUCT_OFFSET (TrackConfig, field)
static void
test_config_bounds (void)
{
  const float past_zero = nextafterf (0.f, 1.f);
  const float past_radius = nextafterf (0.9f, 1.f),
              past_angle = nextafterf (0.95f, 1.f);
  const struct
  {
    const char *option;
    gsize offset;
    gboolean is_float;
    float value; /* a count when !is_float */
    gboolean taken;
  } cases[] = {
    { "n_points", OFFSET (shape.n_points), FALSE, 0, FALSE },
    { "n_points", OFFSET (shape.n_points), FALSE, 16, FALSE },
    { "n_points", OFFSET (shape.n_points), FALSE, TRACK_MAX_POINTS + 32, FALSE },
    { "n_points", OFFSET (shape.n_points), FALSE, 32, TRUE },
    { "n_points", OFFSET (shape.n_points), FALSE, TRACK_MAX_POINTS, TRUE },
    { "n_control", OFFSET (shape.n_control), FALSE, 3, FALSE },
    { "n_control", OFFSET (shape.n_control), FALSE, TRACK_MAX_CONTROL + 1, FALSE },
    { "n_control", OFFSET (shape.n_control), FALSE, 4, TRUE },
    { "n_control", OFFSET (shape.n_control), FALSE, TRACK_MAX_CONTROL, TRUE },
    { "radius", OFFSET (shape.radius), TRUE, 0.f, FALSE },
    { "radius", OFFSET (shape.radius), TRUE, past_zero, TRUE },
    { "radius_jitter", OFFSET (shape.radius_jitter), TRUE, -past_zero, FALSE },
    { "radius_jitter", OFFSET (shape.radius_jitter), TRUE, past_radius, FALSE },
    { "radius_jitter", OFFSET (shape.radius_jitter), TRUE, NAN, FALSE },
    { "radius_jitter", OFFSET (shape.radius_jitter), TRUE, 0.f, TRUE },
    { "radius_jitter", OFFSET (shape.radius_jitter), TRUE, 0.9f, TRUE },
    { "angle_jitter", OFFSET (shape.angle_jitter), TRUE, -past_zero, FALSE },
    { "angle_jitter", OFFSET (shape.angle_jitter), TRUE, past_angle, FALSE },
    { "angle_jitter", OFFSET (shape.angle_jitter), TRUE, NAN, FALSE },
    { "angle_jitter", OFFSET (shape.angle_jitter), TRUE, 0.f, TRUE },
    { "angle_jitter", OFFSET (shape.angle_jitter), TRUE, 0.95f, TRUE },
    { "width", OFFSET (shape.width), TRUE, 0.f, FALSE },
    { "width", OFFSET (shape.width), TRUE, -1.f, FALSE },
    { "width", OFFSET (shape.width), TRUE, NAN, FALSE },
    { "width", OFFSET (shape.width), TRUE, past_zero, TRUE },
    { "min_turn_radius", OFFSET (shape.min_turn_radius), TRUE, 0.f, FALSE },
    { "min_turn_radius", OFFSET (shape.min_turn_radius), TRUE, -1.f, FALSE },
    { "min_turn_radius", OFFSET (shape.min_turn_radius), TRUE, NAN, FALSE },
    { "min_turn_radius", OFFSET (shape.min_turn_radius), TRUE, past_zero, TRUE },
    { "max_iters", OFFSET (max_iters), FALSE, 0, FALSE },
    { "max_iters", OFFSET (max_iters), FALSE, 1, TRUE },
    /* On demand (the default), and past max_iters (32). */
    { "min_iters", OFFSET (min_iters), FALSE, 1, FALSE },
    { "min_iters", OFFSET (min_iters), FALSE, 33, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *option = cases[i].option;
      g_autofree char *named = NULL;
      g_autoptr (GError) error = NULL;
      TrackConfig config;

      track_config_init (&config, N_ENVS);
      if (cases[i].is_float)
        G_STRUCT_MEMBER (float, &config, cases[i].offset) = cases[i].value;
      else
        G_STRUCT_MEMBER (guint32, &config, cases[i].offset) = (guint32)cases[i].value;
      g_test_message ("%s = %.9g", option, cases[i].value);
      if (cases[i].taken)
        {
          g_assert_true (track_config_check (&config, &error));
          g_assert_no_error (error);
          continue;
        }
      g_assert_false (track_config_check (&config, &error));
      g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
      named = g_strdup_printf ("track config: %s must be ", option);
      g_assert_true (g_str_has_prefix (error->message, named));
    }

  /* With lookahead, min_iters up to max_iters is taken. */
  {
    g_autoptr (GError) error = NULL;
    TrackConfig config;

    track_config_init (&config, N_ENVS);
    config.advance = TRUE;
    config.lookahead = 2;
    config.min_iters = config.max_iters;
    g_assert_true (track_config_check (&config, &error));
    g_assert_no_error (error);
    config.min_iters++;
    g_assert_false (track_config_check (&config, &error));
    g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
    g_assert_true (
        g_str_has_prefix (error->message, "track config: min_iters must be "));
  }
}
#undef OFFSET

static guint
count (const char *haystack, const char *needle)
{
  guint n = 0;

  for (const char *at = strstr (haystack, needle); at != NULL;
       at = strstr (at + 1, needle))
    n++;
  return n;
}

/* The writer alone, on host data: a grid of closed, labelled paths. */
static void
test_svg_writer (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("examples-test-XXXXXX", &error);
  g_autofree char *path = NULL, *svg = NULL;
  const char *labels[] = { "a<b", NULL };
  guint8 valid[5] = { 1, 0, 1, 1, 1 };
  float2 points[5 * 4];

  g_assert_no_error (error);
  path = g_build_filename (dir, "tracks.svg", NULL);
  for (guint t = 0; t < 5; t++)
    for (guint i = 0; i < 4; i++)
      points[t * 4 + i]
          = (float2){ (i == 1 || i == 2) ? 10.f + t : 0.f, i >= 2 ? 10.f : 0.f };
  g_assert_true (track_svg_write (path, points, valid, 5, 4, 2.f, labels, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &svg, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (svg, "<?xml"));
  g_assert_nonnull (strstr (svg, "</svg>"));
  g_assert_cmpuint (count (svg, "<circle"), ==, 5);  /* a start point per track */
  g_assert_cmpuint (count (svg, " Z\""), ==, 3 * 5); /* closed paths, 3 strokes each */
  g_assert_nonnull (strstr (svg, ">a&lt;b<"));       /* escaped label */
  g_assert_nonnull (strstr (svg, ">track 4<"));      /* the list was shorter */
  g_assert_cmpuint (count (svg, "(invalid)"), ==, 1);
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* The central property: the same tracks, bit for bit, under every policy. */
static void
test_policies (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  TgSeedState *seeds;
  TgProducer *p;
  cudaStream_t s = gpu->stream;
  cudaGraphExec_t exec;
  gsize size = points_size (N_ENVS);
  g_autofree float2 *eager = g_malloc (size), *replay = g_malloc (size),
                    *recorded = g_malloc (size);
  guint8 valid[N_ENVS];

  TG_TEST_REQUIRE_GPU ();
  seeds = tg_seed_state_new (0, N_ENVS, 1234, &error);
  g_assert_no_error (error);
  p = track_new (seeds, s, N_ENVS, FALSE, NULL);

  run_ok (p, s, TG_POLICY_EAGER);
  download (eager, p, "points", size, s);
  download (valid, p, "valid", sizeof valid, s);
  assert_relaxed (p, s);
  assert_sound (eager, valid, N_ENVS, size / N_ENVS / sizeof (float2));

  fill (p, "points", 0, s);
  fill (p, "loop_status", 0, s);
  run_ok (p, s, TG_POLICY_REPLAY);
  download (replay, p, "points", size, s);
  assert_relaxed (p, s);
  g_assert_cmpmem (replay, size, eager, size);

  fill (p, "points", 0, s);
  fill (p, "loop_status", 0, s);
  exec = record (p, s, tg_unconditional ());
  launch (exec, s);
  download (recorded, p, "points", size, s);
  assert_relaxed (p, s);
  g_assert_cmpmem (recorded, size, eager, size);

  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  tg_producer_unref (p);
  tg_seed_state_unref (seeds);
}

/* Recorded under tg_conditional() (an IF node holding the relaxation's
 * WHILE node): skipped on the device when the flag is 0, the same tracks
 * when it is 1. */
static void
test_conditional_record (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  TgSeedState *seeds;
  TgProducer *p;
  cudaStream_t s = gpu->stream;
  cudaGraphExec_t exec;
  gint32 *flag = NULL, on = 1;
  TgLoopStatus status;
  gsize size = points_size (N_ENVS);
  g_autofree float2 *eager = g_malloc (size), *got = g_malloc (size),
                    *zero = g_malloc0 (size);

  TG_TEST_REQUIRE_GPU ();
  seeds = tg_seed_state_new (0, N_ENVS, 99, &error);
  g_assert_no_error (error);
  p = track_new (seeds, s, N_ENVS, FALSE, NULL);
  run_ok (p, s, TG_POLICY_EAGER);
  download (eager, p, "points", size, s);

  TG_TEST_CUDA (cudaMalloc ((void **)&flag, sizeof *flag));
  exec = record (p, s, tg_conditional (flag));
  TG_TEST_CUDA (cudaMemsetAsync (flag, 0, sizeof *flag, s));
  fill (p, "points", 0, s);
  fill (p, "loop_status", 0, s);
  launch (exec, s);
  download (got, p, "points", size, s);
  download (&status, p, "loop_status", sizeof status, s);
  g_assert_cmpmem (got, size, zero, size);
  g_assert_cmpint (status.end, ==,
                   TG_LOOP_END_NONE); /* the loop sat in the skipped IF */

  TG_TEST_CUDA (cudaMemcpyAsync (flag, &on, sizeof on, cudaMemcpyHostToDevice, s));
  launch (exec, s);
  download (got, p, "points", size, s);
  g_assert_cmpmem (got, size, eager, size);
  assert_relaxed (p, s);

  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaFree (flag));
  tg_producer_unref (p);
  tg_seed_state_unref (seeds);
}

/* Envs whose mask byte is 0 keep their track, validity, family and epoch. */
static void
test_mask (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  TgSeedState *seeds;
  TgProducer *p;
  cudaStream_t s = gpu->stream;
  gsize size = points_size (N_ENVS), per_env = size / N_ENVS;
  g_autofree float2 *points = g_malloc (size);
  g_autofree guint8 *untouched = g_malloc (per_env);
  guint8 mask[N_ENVS], valid[N_ENVS], families[N_ENVS];
  guint32 epochs[N_ENVS];

  TG_TEST_REQUIRE_GPU ();
  seeds = tg_seed_state_new (0, N_ENVS, 5, &error);
  g_assert_no_error (error);
  p = track_new (seeds, s, N_ENVS, TRUE, NULL);

  for (guint e = 0; e < N_ENVS; e++)
    mask[e] = e % 2 == 0;
  upload (p, "mask", mask, sizeof mask, s);
  fill (p, "points", 0xFF, s);
  fill (p, "valid", 0xAB, s);
  fill (p, "families", 0xCD, s);
  memset (untouched, 0xFF, per_env);
  set_family (p, TRACK_FAMILY_STAR, s);
  run_ok (p, s, TG_POLICY_AUTO);
  download (points, p, "points", size, s);
  download (valid, p, "valid", sizeof valid, s);
  download (families, p, "families", sizeof families, s);
  g_assert_true (tg_seed_state_read (seeds, s, NULL, epochs, &error));
  g_assert_no_error (error);

  for (guint e = 0; e < N_ENVS; e++)
    {
      const float2 *env = points + e * (per_env / sizeof (float2));
      if (mask[e])
        {
          g_assert_cmpuint (epochs[e], ==, 1);
          g_assert_cmpuint (valid[e], <=, 1);
          g_assert_cmpuint (families[e], ==, TRACK_FAMILY_STAR);
          g_assert_true (isfinite (env[0].x) && isfinite (env[0].y));
        }
      else
        {
          g_assert_cmpuint (epochs[e], ==, 0);
          g_assert_cmpuint (valid[e], ==, 0xAB);
          g_assert_cmpuint (families[e], ==, 0xCD);
          g_assert_cmpmem (env, per_env, untouched, per_env);
        }
    }

  tg_producer_unref (p);
  tg_seed_state_unref (seeds);
}

/* A track regenerated from its (seed, epoch, family) in a batch of its own
 * is the one the large batch made: the relaxation of an env never depends on
 * the others. */
static void
test_reproducible (TgTestGpu *gpu, gconstpointer data)
{
  static const guint picked[] = { 0, 1, 3, 62 };
  g_autoptr (GError) error = NULL;
  TgSeedState *seeds, *alone_seeds;
  TgProducer *p, *alone;
  cudaStream_t s = gpu->stream;
  gsize size = points_size (N_ENVS), per_env = size / N_ENVS;
  g_autofree float2 *points = g_malloc (size), *mine = g_malloc (4 * per_env);
  guint8 mask[N_ENVS], families[N_ENVS], pick_mask[4];
  guint64 all_seeds[N_ENVS], pick_seeds[4];
  guint32 all_epochs[N_ENVS], pick_epochs[4];

  TG_TEST_REQUIRE_GPU ();
  seeds = tg_seed_state_new (0, N_ENVS, 77, &error);
  g_assert_no_error (error);
  p = track_new (seeds, s, N_ENVS, TRUE, NULL);
  run_ok (p, s, TG_POLICY_EAGER); /* every env at epoch 1, polar */
  for (guint e = 0; e < N_ENVS; e++)
    mask[e] = e % 3 == 0;
  upload (p, "mask", mask, sizeof mask, s);
  set_family (p, TRACK_FAMILY_STADIUM, s);
  run_ok (p, s, TG_POLICY_AUTO); /* every third env at epoch 2, a stadium */
  download (points, p, "points", size, s);
  download (families, p, "families", sizeof families, s);
  g_assert_true (tg_seed_state_read (seeds, s, all_seeds, all_epochs, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (all_epochs[0], ==, 2);
  g_assert_cmpuint (families[0], ==, TRACK_FAMILY_STADIUM);
  g_assert_cmpuint (all_epochs[1], ==, 1);
  g_assert_cmpuint (families[1], ==, TRACK_FAMILY_POLAR);

  for (guint i = 0; i < G_N_ELEMENTS (picked); i++)
    {
      pick_seeds[i] = all_seeds[picked[i]];
      pick_epochs[i] = all_epochs[picked[i]];
    }
  alone_seeds = track_seed_state_new_at (0, s, 4, pick_seeds, pick_epochs, &error);
  g_assert_no_error (error);
  alone = track_new (alone_seeds, s, 4, FALSE, NULL);
  /* One call per family, each masked to the envs of that family. */
  for (gint32 f = 0; f < TRACK_N_FAMILIES; f++)
    {
      for (guint i = 0; i < G_N_ELEMENTS (picked); i++)
        pick_mask[i] = families[picked[i]] == f;
      upload (alone, "mask", pick_mask, sizeof pick_mask, s);
      set_family (alone, f, s);
      run_ok (alone, s, TG_POLICY_EAGER);
    }
  download (mine, alone, "points", 4 * per_env, s);
  for (guint i = 0; i < G_N_ELEMENTS (picked); i++)
    g_assert_cmpmem ((guint8 *)mine + i * per_env, per_env,
                     (guint8 *)points + picked[i] * per_env, per_env);

  tg_producer_unref (alone);
  tg_producer_unref (p);
  tg_seed_state_unref (alone_seeds);
  tg_seed_state_unref (seeds);
}

/* The stages declare what they read and write, with its size: a binding
 * rebound too small, or unbound, is refused before anything runs. */
static void
test_declared_bindings (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  TgSeedState *seeds;
  TgProducer *p;
  cudaStream_t s = gpu->stream;
  gsize size = points_size (N_ENVS);
  gpointer points, small;

  TG_TEST_REQUIRE_GPU ();
  seeds = tg_seed_state_new (0, N_ENVS, 8, &error);
  g_assert_no_error (error);
  p = track_new (seeds, s, N_ENVS, FALSE, NULL);
  points = tg_producer_get_binding (p, "points", NULL);
  small = tg_test_device_alloc (size / 2);

  g_assert_true (tg_producer_bind (p, "points", small, size / 2, &error));
  g_assert_no_error (error);
  g_assert_false (tg_producer_run (p, s, TG_POLICY_EAGER, tg_unconditional (), &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_UNBOUND);
  g_assert_nonnull (strstr (error->message, "points"));
  g_clear_error (&error);

  g_assert_true (tg_producer_bind (p, "points", NULL, 0, &error));
  g_assert_no_error (error);
  g_assert_false (tg_producer_run (p, s, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_UNBOUND);
  g_clear_error (&error);

  g_assert_true (tg_producer_bind (p, "points", points, size, &error));
  g_assert_no_error (error);
  run_ok (p, s, TG_POLICY_AUTO);

  tg_test_device_free (small);
  tg_producer_unref (p);
  tg_seed_state_unref (seeds);
}

/* The SVG HOST stage: runs standalone, and is refused under a capture
 * before anything is recorded. */
static void
test_svg_stage (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = NULL, *path = NULL, *svg = NULL;
  TgSeedState *seeds;
  TgProducer *p;
  cudaStream_t s = gpu->stream;
  cudaGraph_t graph = NULL;

  TG_TEST_REQUIRE_GPU ();
  dir = g_dir_make_tmp ("examples-test-XXXXXX", &error);
  g_assert_no_error (error);
  path = g_build_filename (dir, "tracks.svg", NULL);
  seeds = tg_seed_state_new (0, 8, 3, &error);
  g_assert_no_error (error);
  p = track_new (seeds, s, 8, FALSE, path);

  TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeThreadLocal));
  g_assert_false (tg_producer_run (p, s, TG_POLICY_AUTO, tg_unconditional (), &error));
  TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, 0);
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  g_clear_error (&error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));

  run_ok (p, s, TG_POLICY_AUTO);
  g_assert_true (g_file_get_contents (path, &svg, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count (svg, "<circle"), ==, 4);

  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
  tg_producer_unref (p);
  tg_seed_state_unref (seeds);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  g_test_add_func ("/examples/track/config", test_config);
  g_test_add_func ("/examples/track/config-bounds", test_config_bounds);
  g_test_add_func ("/examples/track/svg-writer", test_svg_writer);
  TG_TEST_ADD_GPU ("/examples/track/policies-bit-identical", test_policies);
  TG_TEST_ADD_GPU ("/examples/track/conditional-record", test_conditional_record);
  examples_test_add_families ();
  TG_TEST_ADD_GPU ("/examples/track/mask-keeps-unmasked-envs", test_mask);
  TG_TEST_ADD_GPU ("/examples/track/reproducible-from-seed-epoch-and-family",
                   test_reproducible);
  TG_TEST_ADD_GPU ("/examples/track/declared-bindings-checked", test_declared_bindings);
  TG_TEST_ADD_GPU ("/examples/track/svg-stage", test_svg_stage);
  examples_test_add_validate ();
  examples_test_add_list ();
  examples_test_add_sim ();
  examples_test_add_fused ();
  examples_test_add_lookahead ();
  examples_test_add_overlap ();
  return g_test_run ();
}
