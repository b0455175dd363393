/* SPDX-License-Identifier: Apache-2.0 */
/* examples-test-lookahead.c: the track producer with lookahead gives every
 * env, at every step, the same track as on-demand generation, bit for bit,
 * for a family that stays: over a long run of episode ends, an env that ends
 * twice before a refill, every env at once, a family out of range, epochs
 * reset under it; eagerly and replayed from a caller's graph.  Its refills
 * batch, and a new family reaches an env's tracks L episodes later.  A
 * recorded call is one kernel and no conditional node.  The pair of
 * producers stepped side by side serves examples-test-overlap.c too. */
#include "config.h"
#include "examples-test.h"

#include <string.h>

#define STEPS 160

static void
envs_read (Envs *o, TgProducer *p, TgSeedState *seeds, cudaStream_t s)
{
  g_autoptr (GError) error = NULL;

  download (o->points, p, "points", N_ENVS * o->shape.n_points * sizeof (float2), s);
  download (o->control, p, "control", N_ENVS * o->shape.n_control * sizeof (float2), s);
  download (o->sharpness, p, "sharpness", sizeof o->sharpness, s);
  download (o->valid, p, "valid", sizeof o->valid, s);
  download (o->families, p, "families", sizeof o->families, s);
  g_assert_true (tg_seed_state_read (seeds, s, NULL, o->epochs, &error));
  g_assert_no_error (error);
}

static void
envs_assert_equal (const Envs *a, const Envs *b, guint step)
{
  const gsize points = N_ENVS * a->shape.n_points * sizeof (float2),
              control = N_ENVS * a->shape.n_control * sizeof (float2);

  if (memcmp (a->points, b->points, points) != 0
      || memcmp (a->epochs, b->epochs, sizeof a->epochs) != 0)
    g_test_message ("lookahead and on demand differ after step %u", step);
  g_assert_cmpmem (a->epochs, sizeof a->epochs, b->epochs, sizeof b->epochs);
  g_assert_cmpmem (a->points, points, b->points, points);
  g_assert_cmpmem (a->control, control, b->control, control);
  g_assert_cmpmem (a->sharpness, sizeof a->sharpness, b->sharpness,
                   sizeof b->sharpness);
  g_assert_cmpmem (a->valid, sizeof a->valid, b->valid, sizeof b->valid);
  g_assert_cmpmem (a->families, sizeof a->families, b->families, sizeof b->families);
}

TgProducer *
lookahead_new (TgSeedState *seeds, cudaStream_t s, guint lookahead, guint batch)
{
  TrackConfig config;

  track_config_init (&config, N_ENVS);
  config.advance = TRUE;
  config.lookahead = lookahead;
  config.refill_batch = batch;
  return track_new_with (seeds, s, &config);
}


/* Makes the pair, and runs each once with every env masked, at @family
 * (their first tracks, at epoch 1).  A lookahead producer owes an env's
 * first spares the family of that call: on demand compares with it only for
 * a family that stays from that call on. */
void
pair_init (Pair *pair, cudaStream_t s, guint64 base_seed, const TrackConfig *reference,
           const TrackConfig *tested, gint32 family)
{
  const TrackConfig *configs[2] = { reference, tested };
  g_autoptr (GError) error = NULL;

  *pair = (Pair){ .policy = TG_POLICY_EAGER };
  for (guint i = 0; i < 2; i++)
    {
      pair->seeds[i] = tg_seed_state_new (0, N_ENVS, base_seed, &error);
      g_assert_no_error (error);
      pair->p[i] = track_new_with (pair->seeds[i], s, configs[i]);
      pair->envs[i].shape = reference->shape;
      pair->envs[i].points = g_new (float2, N_ENVS * reference->shape.n_points);
      pair->envs[i].control = g_new (float2, N_ENVS * reference->shape.n_control);
    }
  for (guint i = 0; i < 2; i++)
    {
      set_family (pair->p[i], family, s);
      run_ok (pair->p[i], s, TG_POLICY_EAGER);
    }
}

/* One step: @mask and @family into both; the reference runs eagerly, the
 * other under pair->policy (EAGER, or REPLAY: from its own graph), or from
 * a graph of its call recorded now (@record) or before. */
void
pair_run (Pair *pair, const guint8 *mask, gint32 family, gboolean record_now,
          cudaStream_t s)
{
  for (guint i = 0; i < 2; i++)
    {
      upload (pair->p[i], "mask", mask, N_ENVS, s);
      set_family (pair->p[i], family, s);
    }
  run_ok (pair->p[0], s, TG_POLICY_EAGER);
  if (record_now)
    pair->exec = record (pair->p[1], s, tg_unconditional ());
  if (pair->exec != NULL)
    launch (pair->exec, s);
  else
    run_ok (pair->p[1], s, pair->policy);
}

/* Both hold the same envs, bit for bit, after step @t. */
void
pair_check (Pair *pair, guint t, cudaStream_t s)
{
  for (guint i = 0; i < 2; i++)
    envs_read (&pair->envs[i], pair->p[i], pair->seeds[i], s);
  envs_assert_equal (&pair->envs[0], &pair->envs[1], t);
}

void
pair_clear (Pair *pair)
{
  if (pair->exec != NULL)
    TG_TEST_CUDA (cudaGraphExecDestroy (pair->exec));
  for (guint i = 0; i < 2; i++)
    {
      g_free (pair->envs[i].points);
      g_free (pair->envs[i].control);
      tg_producer_unref (pair->p[i]);
      tg_seed_state_unref (pair->seeds[i]);
    }
}

/* The envs that end after step @t: a fixed pseudo-random 30th (two a step),
 * env 0 every third step (so it ends again before a large batch refills
 * it), every env at step 40. */
void
mask_of_step (guint t, GRand *rand, guint8 *mask)
{
  for (guint e = 0; e < N_ENVS; e++)
    mask[e] = t == 40 || g_rand_int_range (rand, 0, 30) == 0;
  mask[0] = mask[0] || t % 3 == 0;
}

typedef struct
{
  guint lookahead, batch;
  gboolean replay; /* the second half replayed from a caller's graph */
  gint32 family;   /* of every step but 130's, out of range: nothing is made */
  TgPolicy policy; /* of the calls before (EAGER, or REPLAY: its own graph) */
  guint n_points;  /* 0: the default shape's */
} Case;

static void
test_equals_on_demand (TgTestGpu *gpu, gconstpointer data)
{
  const Case *c = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  cudaStream_t s = gpu->stream;
  TrackConfig on_demand, ahead;
  TrackRefill refill;
  guint8 mask[N_ENVS];
  Pair pair;
  guint ends = 0, steps_with_ends = 0, refills = 0;

  TG_TEST_REQUIRE_GPU ();
  track_config_init (&on_demand, N_ENVS);
  on_demand.advance = TRUE;
  if (c->n_points > 0) /* rows longer than a spare's copy takes at once */
    {
      on_demand.shape.n_points = c->n_points;
      on_demand.shape.n_control = TRACK_MAX_CONTROL;
    }
  ahead = on_demand;
  ahead.lookahead = c->lookahead;
  ahead.refill_batch = c->batch;
  pair_init (&pair, s, 99, &on_demand, &ahead, c->family);
  pair.policy = c->policy;
  for (guint t = 0; t < STEPS; t++)
    {
      gint32 family = t == 130 ? -1 : c->family;

      if (t == 100) /* epochs set under the lookahead: its spares are stale */
        {
          g_assert_true (
              tg_seed_state_reset_epochs (pair.seeds[0], s, NULL, 0, &error)
              && tg_seed_state_reset_epochs (pair.seeds[1], s, NULL, 0, &error));
          g_assert_no_error (error);
        }
      guint ended = 0;

      mask_of_step (t, rand, mask);
      for (guint e = 0; e < N_ENVS; e++)
        ended += mask[e];
      ends += ended;
      pair_run (&pair, mask, family, c->replay && t == STEPS / 2, s);
      pair_check (&pair, t, s);
      /* A call decides whether the next one refills. */
      download (&refill, pair.p[1], "refill", sizeof refill, s);
      steps_with_ends += ended > 0 && family >= 0;
      refills += refill.go != 0;
    }

  /* Not vacuous: envs ended, and tracks of every family were made.
   * mask_of_step (seeded, so the same every run) ends about one env-step
   * in 22 (458 expected, 467 on the H200); one in 20 could never hold. */
  g_assert_cmpuint (ends, >, STEPS * N_ENVS / 25);
  g_assert_cmpuint (pair.envs[1].epochs[0], >=, 10);
  /* Batched: with spares to spend, far fewer refills than steps with an end;
   * with one spare or a batch of 1, one each. */
  g_test_message ("%u refills after %u steps with an end", refills, steps_with_ends);
  if (c->lookahead >= 2 && c->batch >= 8)
    g_assert_cmpuint (refills, <, steps_with_ends * 3 / 4);
  else
    g_assert_cmpuint (refills, >=, steps_with_ends * 3 / 4);
  pair_clear (&pair);
}

/* A family set now reaches an env's tracks L episodes later: the slot an
 * end frees is owed the track of the epoch L ahead, with the family of that
 * end.  Env 0 ends every other step, the family goes from 0 to 1 at step 2;
 * with L = 2 its tracks are of family 0 until the one it takes at step 7
 * (on demand: at step 3). */
static void
test_family_lags (TgTestGpu *gpu, gconstpointer data)
{
  static const guint8 want[] = { 0, 0, 0, 1 };
  g_autoptr (GError) error = NULL;
  cudaStream_t s = gpu->stream;
  g_autoptr (TgSeedState) seeds = NULL;
  g_autoptr (TgProducer) p = NULL;
  guint8 mask[N_ENVS] = { 0 }, families[N_ENVS];
  guint32 epochs[N_ENVS];

  TG_TEST_REQUIRE_GPU ();
  seeds = tg_seed_state_new (0, N_ENVS, 5, &error);
  g_assert_no_error (error);
  p = lookahead_new (seeds, s, 2, 1);
  run_ok (p, s, TG_POLICY_EAGER); /* every env's first track, family 0 */
  for (guint t = 0; t < 2 * G_N_ELEMENTS (want); t++)
    {
      mask[0] = t % 2;
      upload (p, "mask", mask, sizeof mask, s);
      set_family (p, t >= 2, s);
      run_ok (p, s, TG_POLICY_EAGER);
      download (families, p, "families", sizeof families, s);
      g_assert_true (tg_seed_state_read (seeds, s, NULL, epochs, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (epochs[0], ==, 1 + (t + 1) / 2);
      if (t % 2)
        g_assert_cmpuint (families[0], ==, want[t / 2]);
      g_assert_cmpuint (epochs[1], ==, 1); /* the others did not end */
    }
}

/* An env's tracks depend on its own ends alone, never on when a refill
 * came: env 0 ends at steps 0, 2 and 3 of every 5, under a family that
 * changes every other step, in a producer refilled after every end (its
 * other envs end often) and in one refilled only when an env runs out
 * (they never end).  At step 3 the first takes a spare a refill made at
 * step 1; the second has none (its refill, due after step 2, skips env 0,
 * which ends again) and makes the track at once: of the family that slot
 * is owed in both (until 0.5's lookahead fix the second took the family of
 * now). */
static void
test_own_ends_alone (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);
  cudaStream_t s = gpu->stream;
  g_autoptr (TgSeedState) seeds_a = NULL, seeds_b = NULL;
  g_autoptr (TgProducer) often = NULL, late = NULL;
  TrackConfig config;
  guint8 mask_a[N_ENVS], mask_b[N_ENVS] = { 0 };
  g_autofree float2 *points_a = NULL, *points_b = NULL;
  guint8 families_a[N_ENVS], families_b[N_ENVS];
  guint32 epochs_a[N_ENVS], epochs_b[N_ENVS];
  guint ends = 0;
  gsize row;

  TG_TEST_REQUIRE_GPU ();
  track_config_init (&config, N_ENVS);
  row = config.shape.n_points * sizeof (float2);
  points_a = g_malloc (N_ENVS * row);
  points_b = g_malloc (N_ENVS * row);
  seeds_a = tg_seed_state_new (0, N_ENVS, 21, &error);
  g_assert_no_error (error);
  seeds_b = tg_seed_state_new (0, N_ENVS, 21, &error);
  g_assert_no_error (error);
  often = lookahead_new (seeds_a, s, 2, 1);
  late = lookahead_new (seeds_b, s, 2, 1000);
  /* Every env's first track, then (no env ended) its spares. */
  for (guint i = 0; i < 2; i++)
    for (TgProducer *p = often; p != NULL; p = p == often ? late : NULL)
      {
        if (i == 1)
          upload (p, "mask", mask_b, sizeof mask_b, s);
        run_ok (p, s, TG_POLICY_EAGER);
      }
  for (guint t = 0; t < 60; t++)
    {
      const gint32 family = (gint32)(t / 2 % TRACK_N_FAMILIES);

      for (guint e = 1; e < N_ENVS; e++)
        mask_a[e] = g_rand_int_range (rand, 0, 4) == 0;
      mask_a[0] = mask_b[0] = t % 5 == 0 || t % 5 == 2 || t % 5 == 3;
      ends += mask_a[0];
      upload (often, "mask", mask_a, sizeof mask_a, s);
      upload (late, "mask", mask_b, sizeof mask_b, s);
      set_family (often, family, s);
      set_family (late, family, s);
      run_ok (often, s, TG_POLICY_EAGER);
      run_ok (late, s, TG_POLICY_EAGER);
      download (points_a, often, "points", N_ENVS * row, s);
      download (points_b, late, "points", N_ENVS * row, s);
      download (families_a, often, "families", sizeof families_a, s);
      download (families_b, late, "families", sizeof families_b, s);
      g_assert_true (tg_seed_state_read (seeds_a, s, NULL, epochs_a, &error)
                     && tg_seed_state_read (seeds_b, s, NULL, epochs_b, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (epochs_a[0], ==, epochs_b[0]);
      g_assert_cmpuint (families_a[0], ==, families_b[0]);
      g_assert_cmpmem (points_a, row, points_b, row);
    }
  g_assert_cmpuint (epochs_b[0], ==, 1 + ends);
}

/* The nodes of @graph, those of its child graphs included, by type. */
static void
count_node_types (cudaGraph_t graph, guint counts[cudaGraphNodeTypeCount])
{
  g_autofree cudaGraphNode_t *nodes = NULL;
  size_t n = 0;

  TG_TEST_CUDA (cudaGraphGetNodes (graph, NULL, &n));
  nodes = g_new0 (cudaGraphNode_t, MAX (n, 1));
  TG_TEST_CUDA (cudaGraphGetNodes (graph, nodes, &n));
  for (size_t i = 0; i < n; i++)
    {
      enum cudaGraphNodeType type;
      cudaGraph_t child = NULL;

      TG_TEST_CUDA (cudaGraphNodeGetType (nodes[i], &type));
      g_assert_cmpint (type, <, cudaGraphNodeTypeCount);
      counts[type]++;
      if (type == cudaGraphNodeTypeGraph)
        {
          TG_TEST_CUDA (cudaGraphChildGraphNodeGetGraph (nodes[i], &child));
          count_node_types (child, counts);
        }
    }
}

/* A recorded lookahead call is one kernel and no conditional node: the
 * caller's graph holds the kernel (in the child graph RECORD embeds) and
 * nothing else that runs.  Its first call and a later one alike. */
static void
test_recorded_one_kernel (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  cudaStream_t s = gpu->stream;
  g_autoptr (TgSeedState) seeds = NULL;
  g_autoptr (TgProducer) p = NULL;

  TG_TEST_REQUIRE_GPU ();
  seeds = tg_seed_state_new (0, N_ENVS, 5, &error);
  g_assert_no_error (error);
  p = lookahead_new (seeds, s, 2, 8);
  g_assert_cmpuint (tg_producer_get_n_stages (p), ==, 1);
  for (guint call = 0; call < 2; call++)
    {
      guint counts[cudaGraphNodeTypeCount] = { 0 }, total = 0;
      cudaGraph_t graph = NULL;
      cudaGraphExec_t exec = NULL;
      gboolean ok;

      TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeThreadLocal));
      ok = tg_producer_run (p, s, TG_POLICY_RECORD, tg_unconditional (), &error);
      TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
      g_assert_no_error (error);
      g_assert_true (ok);
      count_node_types (graph, counts);
      for (guint t = 0; t < cudaGraphNodeTypeCount; t++)
        {
          if (counts[t] > 0)
            g_test_message ("call %u: %u nodes of type %u", call, counts[t], t);
          total += counts[t];
        }
      g_assert_cmpuint (counts[cudaGraphNodeTypeKernel], ==, 1);
      g_assert_cmpuint (counts[cudaGraphNodeTypeConditional], ==, 0);
      /* Nothing else but the child graphs that hold the kernel. */
      g_assert_cmpuint (total, ==, 1 + counts[cudaGraphNodeTypeGraph]);
      TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
      TG_TEST_CUDA (cudaGraphDestroy (graph));
      launch (exec, s);
      TG_TEST_CUDA (cudaGraphExecDestroy (exec));
    }
}

static void
test_config (void)
{
  g_autoptr (GError) error = NULL;
  TrackConfig config;

  track_config_init (&config, N_ENVS);
  g_assert_cmpuint (config.lookahead, ==, 0);
  g_assert_cmpuint (config.refill_batch, >=, 1);
  config.advance = TRUE;
  config.lookahead = TRACK_MAX_LOOKAHEAD;
  g_assert_true (track_config_check (&config, &error));
  g_assert_no_error (error);

  config.lookahead = TRACK_MAX_LOOKAHEAD + 1;
  g_assert_false (track_config_check (&config, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "lookahead"));
  g_clear_error (&error);

  config.lookahead = 2;
  config.advance = FALSE;
  g_assert_false (track_config_check (&config, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "advance"));
  g_clear_error (&error);

  config.advance = TRUE;
  config.refill_batch = 0;
  g_assert_false (track_config_check (&config, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "refill_batch"));
  g_clear_error (&error);

  config.refill_batch = 1;
  config.lookahead = 0;
  config.overlap = TRUE;
  g_assert_false (track_config_check (&config, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "overlap"));
}

#define ADD_CASE(path, c)                                                              \
  g_test_add (path, TgTestGpu, c, tg_test_gpu_set_up, test_equals_on_demand,           \
              tg_test_gpu_tear_down)

void
examples_test_add_lookahead (void)
{
  static const Case one = { 1, 64, FALSE, 0, TG_POLICY_EAGER, 0 },
                    two = { 2, 8, TRUE, 1, TG_POLICY_EAGER, 0 },
                    three = { 3, 1000, TRUE, 2, TG_POLICY_EAGER, 0 },
                    every = { 2, 1, FALSE, 0, TG_POLICY_EAGER, 0 },
                    own_graph = { 2, 8, FALSE, 1, TG_POLICY_REPLAY, 0 },
                    long_rows = { 2, 8, FALSE, 2, TG_POLICY_EAGER, TRACK_MAX_POINTS };

  g_test_add_func ("/examples/lookahead/config", test_config);
  ADD_CASE ("/examples/lookahead/equals-on-demand/one-spare", &one);
  ADD_CASE ("/examples/lookahead/equals-on-demand/two-spares-replayed", &two);
  ADD_CASE ("/examples/lookahead/equals-on-demand/ends-twice-before-refill", &three);
  ADD_CASE ("/examples/lookahead/equals-on-demand/refill-every-end", &every);
  ADD_CASE ("/examples/lookahead/equals-on-demand/own-graph", &own_graph);
  ADD_CASE ("/examples/lookahead/equals-on-demand/long-rows", &long_rows);
  TG_TEST_ADD_GPU ("/examples/lookahead/family-lags", test_family_lags);
  TG_TEST_ADD_GPU ("/examples/lookahead/own-ends-alone", test_own_ends_alone);
  TG_TEST_ADD_GPU ("/examples/lookahead/recorded-one-kernel-no-conditional",
                   test_recorded_one_kernel);
}
