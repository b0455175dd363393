/* SPDX-License-Identifier: Apache-2.0 */
/* examples-test-families.c: the track producer's shape families, picked by
 * the "generate" switch: each one's own shape, bit-identical under EAGER,
 * REPLAY and RECORD, and nothing at all for a family out of range. */
#include "config.h"
#include "examples-test.h"

#include <math.h>
#include <string.h>

/* What a call leaves behind, to compare two calls. */
typedef struct
{
  float2 *points, *control;
  guint8 valid[N_ENVS], families[N_ENVS];
  guint32 epochs[N_ENVS];
  TgLoopStatus status;
} Outputs;

static void
outputs_read (Outputs *o, TgProducer *p, TgSeedState *seeds, cudaStream_t s)
{
  g_autoptr (GError) error = NULL;
  TrackConfig c;

  track_config_init (&c, N_ENVS);
  o->points = g_new (float2, N_ENVS * c.shape.n_points);
  o->control = g_new (float2, N_ENVS * c.shape.n_control);
  download (o->points, p, "points", N_ENVS * c.shape.n_points * sizeof (float2), s);
  download (o->control, p, "control", N_ENVS * c.shape.n_control * sizeof (float2), s);
  download (o->valid, p, "valid", sizeof o->valid, s);
  download (o->families, p, "families", sizeof o->families, s);
  download (&o->status, p, "loop_status", sizeof o->status, s);
  g_assert_true (tg_seed_state_read (seeds, s, NULL, o->epochs, &error));
  g_assert_no_error (error);
}

static void
outputs_clear (Outputs *o)
{
  g_free (o->points);
  g_free (o->control);
}

static void
outputs_assert_equal (const Outputs *a, const Outputs *b)
{
  TrackConfig c;

  track_config_init (&c, N_ENVS);
  g_assert_cmpmem (a->points, N_ENVS * c.shape.n_points * sizeof (float2), b->points,
                   N_ENVS * c.shape.n_points * sizeof (float2));
  g_assert_cmpmem (a->control, N_ENVS * c.shape.n_control * sizeof (float2), b->control,
                   N_ENVS * c.shape.n_control * sizeof (float2));
  g_assert_cmpmem (a->valid, sizeof a->valid, b->valid, sizeof b->valid);
  g_assert_cmpmem (a->families, sizeof a->families, b->families, sizeof b->families);
  g_assert_cmpmem (a->epochs, sizeof a->epochs, b->epochs, sizeof b->epochs);
}

/* Overwrites the outputs, so a call that writes nothing shows. */
static void
scrub (TgProducer *p, cudaStream_t s)
{
  fill (p, "points", 0, s);
  fill (p, "control", 0, s);
  fill (p, "valid", 0xAB, s);
  fill (p, "families", 0xEE, s);
  fill (p, "loop_status", 0, s);
}

/* Each family's control points are what it draws by construction
 * (track-kernels.cu), in every env: polar points in their sectors within the
 * radius jitter; a stadium's opposite points mirrored through its centre up
 * to their pushes (at most half the radius jitter of an end radius of at
 * most 0.6 radius, each); a star's points alternately outside and inside
 * the mean radius. */
static void
assert_family_shape (gint32 family, const float2 *control)
{
  TrackConfig c;
  const TrackShape *shape = &c.shape;
  guint k_n;
  double sector;

  track_config_init (&c, N_ENVS);
  k_n = shape->n_control;
  sector = 2 * G_PI / k_n;
  g_assert_cmpuint (k_n % 2, ==, 0);
  for (guint e = 0; e < N_ENVS; e++)
    for (guint k = 0; k < k_n; k++)
      {
        float2 p = control[e * k_n + k], q = control[e * k_n + (k + k_n / 2) % k_n];
        double r = hypot (p.x, p.y);

        switch (family)
          {
          case TRACK_FAMILY_POLAR:
            g_assert_cmpfloat (
                fabs (remainder (atan2 (p.y, p.x) - k * sector, 2 * G_PI)), <=,
                0.5 * shape->angle_jitter * sector + 1e-4);
            g_assert_cmpfloat (fabs (r - shape->radius), <=,
                               shape->radius_jitter * shape->radius + 1e-3);
            break;
          case TRACK_FAMILY_STADIUM:
            g_assert_cmpfloat (hypot (p.x + q.x, p.y + q.y), <=,
                               0.6 * shape->radius_jitter * shape->radius + 0.05);
            break;
          default:
            if (k % 2 == 0)
              g_assert_cmpfloat (r, >, shape->radius);
            else
              g_assert_cmpfloat (r, <, shape->radius);
          }
      }
}

/* Each family makes sound tracks of its own shape, and records itself in
 * "families"; the families differ; every track is the same bit for bit
 * under EAGER, REPLAY and RECORD.  The family is read when the call runs, so
 * one own graph and one recorded graph serve all of them. */
static void
test_families (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  cudaStream_t s = gpu->stream;
  gsize per_env = points_size (N_ENVS) / N_ENVS;
  Outputs eager[TRACK_N_FAMILIES], got;
  TgRunnerStats stats;
  TgSeedState *seeds;
  TgProducer *p;
  cudaGraphExec_t exec;

  TG_TEST_REQUIRE_GPU ();
  seeds = tg_seed_state_new (0, N_ENVS, 4321, &error);
  g_assert_no_error (error);
  p = track_new (seeds, s, N_ENVS, FALSE, NULL);

  for (gint32 f = 0; f < TRACK_N_FAMILIES; f++)
    {
      set_family (p, f, s);
      scrub (p, s);
      run_ok (p, s, TG_POLICY_EAGER);
      outputs_read (&eager[f], p, seeds, s);
      assert_relaxed (p, s);
      assert_sound (eager[f].points, eager[f].valid, N_ENVS, per_env / sizeof (float2));
      assert_family_shape (f, eager[f].control);
      for (guint e = 0; e < N_ENVS; e++)
        g_assert_cmpuint (eager[f].families[e], ==, f);
      for (gint32 g = 0; g < f; g++)
        for (guint e = 0; e < N_ENVS; e++)
          g_assert_cmpint (memcmp ((guint8 *)eager[f].points + e * per_env,
                                   (guint8 *)eager[g].points + e * per_env, per_env),
                           !=, 0);
    }

  for (gint32 f = 0; f < TRACK_N_FAMILIES; f++)
    {
      set_family (p, f, s);
      scrub (p, s);
      run_ok (p, s, TG_POLICY_REPLAY);
      outputs_read (&got, p, seeds, s);
      assert_relaxed (p, s);
      outputs_assert_equal (&got, &eager[f]);
      outputs_clear (&got);
    }
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_captures, ==, 1);
  g_assert_cmpuint (stats.n_replays, ==, TRACK_N_FAMILIES);

  exec = record (p, s, tg_unconditional ());
  for (gint32 f = 0; f < TRACK_N_FAMILIES; f++)
    {
      set_family (p, f, s);
      scrub (p, s);
      launch (exec, s);
      outputs_read (&got, p, seeds, s);
      assert_relaxed (p, s);
      outputs_assert_equal (&got, &eager[f]);
      outputs_clear (&got);
    }

  for (gint32 f = 0; f < TRACK_N_FAMILIES; f++)
    outputs_clear (&eager[f]);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  tg_producer_unref (p);
  tg_seed_state_unref (seeds);
}

/* A family that is negative or not below TRACK_N_FAMILIES runs no case of
 * the switch, under every policy: no epoch advances, no output changes, and
 * the relaxation is skipped.  Back in range, the same graphs generate. */
static void
test_family_out_of_range (TgTestGpu *gpu, gconstpointer data)
{
  static const gint32 out_of_range[] = { -1, TRACK_N_FAMILIES, G_MAXINT32 };
  static const TgPolicy policies[]
      = { TG_POLICY_EAGER, TG_POLICY_REPLAY, TG_POLICY_RECORD };
  g_autoptr (GError) error = NULL;
  cudaStream_t s = gpu->stream;
  Outputs before, got;
  TgSeedState *seeds;
  TgProducer *p;
  cudaGraphExec_t exec;

  TG_TEST_REQUIRE_GPU ();
  seeds = tg_seed_state_new (0, N_ENVS, 606, &error);
  g_assert_no_error (error);
  p = track_new (seeds, s, N_ENVS, TRUE, NULL);
  run_ok (p, s, TG_POLICY_EAGER); /* every env at epoch 1, polar */
  outputs_read (&before, p, seeds, s);
  exec = record (p, s, tg_unconditional ());

  for (guint i = 0; i < G_N_ELEMENTS (out_of_range); i++)
    for (guint k = 0; k < G_N_ELEMENTS (policies); k++)
      {
        set_family (p, out_of_range[i], s);
        if (policies[k] == TG_POLICY_RECORD)
          launch (exec, s);
        else
          run_ok (p, s, policies[k]);
        outputs_read (&got, p, seeds, s);
        outputs_assert_equal (&got, &before);
        g_assert_cmpint (got.status.end, ==, TG_LOOP_END_SKIPPED);
        outputs_clear (&got);
      }

  set_family (p, TRACK_FAMILY_STAR, s);
  launch (exec, s);
  run_ok (p, s, TG_POLICY_REPLAY);
  outputs_read (&got, p, seeds, s);
  for (guint e = 0; e < N_ENVS; e++)
    {
      g_assert_cmpuint (got.epochs[e], ==, 3);
      g_assert_cmpuint (got.families[e], ==, TRACK_FAMILY_STAR);
    }
  assert_family_shape (TRACK_FAMILY_STAR, got.control);
  outputs_clear (&got);

  outputs_clear (&before);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  tg_producer_unref (p);
  tg_seed_state_unref (seeds);
}

/* Every kernel of the track producer, eagerly: the relaxation's body runs
 * as plain launches, not in a WHILE node, which is where compute-sanitizer's
 * racecheck and synccheck can check its block barriers (tests/sanitize.sh
 * runs this case under every tool).  Each family twice, from two producers
 * at the same seeds: the same bits, sound tracks of the family's shape. */
static void
test_eager_kernels (TgTestGpu *gpu, gconstpointer data)
{
  cudaStream_t s = gpu->stream;
  gsize per_env = points_size (N_ENVS) / N_ENVS;

  TG_TEST_REQUIRE_GPU ();
  for (gint32 f = 0; f < TRACK_N_FAMILIES; f++)
    {
      Outputs out[2];

      for (guint k = 0; k < G_N_ELEMENTS (out); k++)
        {
          g_autoptr (GError) error = NULL;
          TgSeedState *seeds = tg_seed_state_new (0, N_ENVS, 2024, &error);
          TgProducer *p;

          g_assert_no_error (error);
          p = track_new (seeds, s, N_ENVS, TRUE, NULL);
          set_family (p, f, s);
          scrub (p, s);
          run_ok (p, s, TG_POLICY_EAGER);
          outputs_read (&out[k], p, seeds, s);
          assert_relaxed (p, s);
          tg_producer_unref (p);
          tg_seed_state_unref (seeds);
        }
      outputs_assert_equal (&out[0], &out[1]);
      assert_sound (out[0].points, out[0].valid, N_ENVS, per_env / sizeof (float2));
      assert_family_shape (f, out[0].control);
      outputs_clear (&out[0]);
      outputs_clear (&out[1]);
    }
}

void
examples_test_add_families (void)
{
  TG_TEST_ADD_GPU ("/examples/track/eager-kernels-every-family", test_eager_kernels);
  TG_TEST_ADD_GPU ("/examples/track/families-bit-identical", test_families);
  TG_TEST_ADD_GPU ("/examples/track/family-out-of-range-changes-nothing",
                   test_family_out_of_range);
}
