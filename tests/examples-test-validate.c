/* SPDX-License-Identifier: Apache-2.0 */
/* examples-test-validate.c: the track producer's validity test against a
 * host model of its definition: a track is invalid when two centerline
 * points closer than the track's width are more than half a turn of that
 * width apart along it, or when two segments that share no point cross.
 * The model walks the pairs i < j, the order the definition reads in; the
 * kernel shares the pairs out differently, and must agree on every env.
 * Widths from narrow to wider than the tracks make valid and invalid
 * tracks of every family. */
#include "config.h"
#include "examples-test.h"

#include <math.h>

#define VALIDATE_ENVS 256

/* The sign of the cross product u x v, in double; *close is set when it is
 * so small beside |u| |v| that the device's floats could give another. */
static int
cross_sign (double ux, double uy, double vx, double vy, gboolean *close)
{
  double c = ux * vy - uy * vx;

  *close |= fabs (c) <= 1e-5 * hypot (ux, uy) * hypot (vx, vy);
  return c > 0 ? 1 : c < 0 ? -1 : 0;
}

/* Segments ab and cd cross at a point inside both. */
static gboolean
segments_cross (const float2 *a, const float2 *b, const float2 *c, const float2 *d,
                gboolean *close)
{
  int s1 = cross_sign (b->x - a->x, b->y - a->y, c->x - a->x, c->y - a->y, close);
  int s2 = cross_sign (b->x - a->x, b->y - a->y, d->x - a->x, d->y - a->y, close);
  int s3 = cross_sign (d->x - c->x, d->y - c->y, a->x - c->x, a->y - c->y, close);
  int s4 = cross_sign (d->x - c->x, d->y - c->y, b->x - c->x, b->y - c->y, close);

  return s1 * s2 < 0 && s3 * s4 < 0;
}

/* 1 valid, 0 invalid, -1 too close to call: no pair is surely bad, and
 * some pair would be bad with a value on the other side of a threshold it
 * lies near (within 0.1 %, far more than the device's rounding). */
static int
host_valid (const float2 *pts, guint n, float width)
{
  const double m = 1e-3, w = width, near = 0.5 * G_PI * w;
  g_autofree double *up_to = g_new (double, n + 1); /* length up to point k */
  gboolean maybe = FALSE;
  double total;

  up_to[0] = 0;
  for (guint k = 0; k < n; k++)
    up_to[k + 1] = up_to[k] + hypot (pts[(k + 1) % n].x - pts[k].x,
                                     pts[(k + 1) % n].y - pts[k].y);
  total = up_to[n];
  for (guint i = 0; i < n; i++)
    for (guint j = i + 1; j < n; j++)
      {
        double along = fabs (up_to[j] - up_to[i]);
        double dist = hypot (pts[j].x - pts[i].x, pts[j].y - pts[i].y);
        gboolean close = FALSE;

        along = MIN (along, total - along);
        if (along > near * (1 + m) && dist < w * (1 - m))
          return 0;
        maybe |= along > near * (1 - m) && dist < w * (1 + m);
        if (j >= i + 2 && !(i == 0 && j == n - 1))
          {
            if (segments_cross (&pts[i], &pts[(i + 1) % n], &pts[j], &pts[(j + 1) % n],
                                &close)
                && !close)
              return 0;
            maybe |= close;
          }
      }
  return maybe ? -1 : 1;
}

static void
test_validate_matches_model (TgTestGpu *gpu, gconstpointer data)
{
  static const float widths[] = { 12.f, 50.f, 90.f, 130.f };
  g_autoptr (GError) error = NULL;
  cudaStream_t s = gpu->stream;
  guint n_valid = 0, n_invalid = 0, n_close = 0;

  TG_TEST_REQUIRE_GPU ();
  for (guint wi = 0; wi < G_N_ELEMENTS (widths); wi++)
    for (gint32 family = 0; family < TRACK_N_FAMILIES; family++)
      {
        TgSeedState *seeds = tg_seed_state_new (0, VALIDATE_ENVS, 99 + family, &error);
        TrackConfig config;
        TgProducer *p;
        gsize per_env;
        g_autofree float2 *points = NULL;
        guint8 valid[VALIDATE_ENVS];

        g_assert_no_error (error);
        track_config_init (&config, VALIDATE_ENVS);
        config.shape.width = widths[wi];
        p = track_producer_new (&config, seeds, s, &error);
        g_assert_no_error (error);
        set_family (p, family, s);
        run_ok (p, s, TG_POLICY_EAGER);
        per_env = config.shape.n_points;
        points = g_new (float2, VALIDATE_ENVS * per_env);
        download (points, p, "points", VALIDATE_ENVS * per_env * sizeof (float2), s);
        download (valid, p, "valid", sizeof valid, s);
        for (guint e = 0; e < VALIDATE_ENVS; e++)
          {
            int want = host_valid (points + e * per_env, per_env, widths[wi]);

            if (want < 0)
              {
                n_close++;
                continue;
              }
            if (valid[e] != want)
              g_error ("width %g, family %d, env %u: the kernel says %s, the model %s",
                       widths[wi], family, e, valid[e] ? "valid" : "invalid",
                       want ? "valid" : "invalid");
            n_valid += want;
            n_invalid += !want;
          }
        tg_producer_unref (p);
        tg_seed_state_unref (seeds);
      }
  g_test_message ("%u valid, %u invalid, %u too close to call", n_valid, n_invalid,
                  n_close);
  g_assert_cmpuint (n_valid, >, 100);
  g_assert_cmpuint (n_invalid, >, 100);
  /* Wide tracks put many pairs near the width (on the H200: 2186 valid, 516
   * invalid, 370 too close to call at a 0.1 % margin). */
  g_assert_cmpuint (n_close, <, (n_valid + n_invalid) / 4);
}

void
examples_test_add_validate (void)
{
  TG_TEST_ADD_GPU ("/examples/track/validate-matches-model", test_validate_matches_model);
}
