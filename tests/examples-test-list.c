/* SPDX-License-Identifier: Apache-2.0 */
/* examples-test-list.c: the track producer's list of the envs a call
 * regenerates.  Its kernels loop over that list on a grid of one block per
 * SM: with more envs than blocks every block takes several, and the tracks
 * are still the same bit for bit under EAGER, REPLAY and RECORD; a call
 * whose mask is empty lists nothing and changes nothing. */
#include "config.h"
#include "examples-test.h"

#include <string.h>

/* More envs than an H200 (132 SMs) has blocks in the list's grid. */
#define MANY_ENVS 1000

static const TgPolicy policies[]
    = { TG_POLICY_EAGER, TG_POLICY_REPLAY, TG_POLICY_RECORD };

/* Runs @p under @policy; under RECORD, launches @exec, which recorded it. */
static void
call (TgProducer *p, cudaStream_t s, TgPolicy policy, cudaGraphExec_t exec)
{
  if (policy == TG_POLICY_RECORD)
    launch (exec, s);
  else
    run_ok (p, s, policy);
}

/* What a call leaves behind. */
typedef struct
{
  float2 *points;
  guint8 *valid, *families;
  guint32 *epochs;
  TgLoopStatus status;
} State;

static void
state_read (State *st, TgProducer *p, TgSeedState *seeds, guint n, cudaStream_t s)
{
  g_autoptr (GError) error = NULL;

  st->points = g_malloc (points_size (n));
  st->valid = g_malloc (n);
  st->families = g_malloc (n);
  st->epochs = g_new (guint32, n);
  download (st->points, p, "points", points_size (n), s);
  download (st->valid, p, "valid", n, s);
  download (st->families, p, "families", n, s);
  download (&st->status, p, "loop_status", sizeof st->status, s);
  g_assert_true (tg_seed_state_read (seeds, s, NULL, st->epochs, &error));
  g_assert_no_error (error);
}

static void
state_assert_equal (const State *a, const State *b, guint n)
{
  g_assert_cmpmem (a->points, points_size (n), b->points, points_size (n));
  g_assert_cmpmem (a->valid, n, b->valid, n);
  g_assert_cmpmem (a->families, n, b->families, n);
  g_assert_cmpmem (a->epochs, n * sizeof (guint32), b->epochs, n * sizeof (guint32));
  g_assert_cmpint (a->status.iterations, ==, b->status.iterations);
  g_assert_cmpint (a->status.end, ==, b->status.end);
}

static void
state_clear (State *st)
{
  g_free (st->points);
  g_free (st->valid);
  g_free (st->families);
  g_free (st->epochs);
}

/* Two rounds on MANY_ENVS envs, each under the three policies from states at
 * the same seeds: every env as a star (the longest relaxation), then every
 * seventh env as a polar track. */
static void
test_more_envs_than_blocks (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  cudaStream_t s = gpu->stream;
  TgSeedState *seeds[G_N_ELEMENTS (policies)];
  TgProducer *p[G_N_ELEMENTS (policies)];
  cudaGraphExec_t exec;
  g_autofree guint8 *sparse = g_malloc (MANY_ENVS);

  TG_TEST_REQUIRE_GPU ();
  for (guint e = 0; e < MANY_ENVS; e++)
    sparse[e] = e % 7 == 0;
  for (guint k = 0; k < G_N_ELEMENTS (policies); k++)
    {
      seeds[k] = tg_seed_state_new (0, MANY_ENVS, 1357, &error);
      g_assert_no_error (error);
      p[k] = track_new (seeds[k], s, MANY_ENVS, TRUE, NULL);
    }
  exec = record (p[2], s, tg_unconditional ());

  for (guint round = 0; round < 2; round++)
    {
      State got[G_N_ELEMENTS (policies)];

      for (guint k = 0; k < G_N_ELEMENTS (policies); k++)
        {
          if (round == 0)
            set_family (p[k], TRACK_FAMILY_STAR, s);
          else
            {
              set_family (p[k], TRACK_FAMILY_POLAR, s);
              upload (p[k], "mask", sparse, MANY_ENVS, s);
            }
          call (p[k], s, policies[k], exec);
          if (round == 0)
            assert_relaxed (p[k], s);
          state_read (&got[k], p[k], seeds[k], MANY_ENVS, s);
        }
      for (guint e = 0; e < MANY_ENVS; e++)
        g_assert_cmpuint (got[0].epochs[e], ==, round == 0 ? 1 : 1 + sparse[e]);
      if (round == 0)
        assert_sound (got[0].points, got[0].valid, MANY_ENVS,
                      points_size (1) / sizeof (float2));
      for (guint k = 1; k < G_N_ELEMENTS (policies); k++)
        state_assert_equal (&got[k], &got[0], MANY_ENVS);
      for (guint k = 0; k < G_N_ELEMENTS (policies); k++)
        state_clear (&got[k]);
    }

  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  for (guint k = 0; k < G_N_ELEMENTS (policies); k++)
    {
      tg_producer_unref (p[k]);
      tg_seed_state_unref (seeds[k]);
    }
}

/* A case runs but no env is masked: the list is empty, no epoch, track,
 * family or validity changes, the relaxation is skipped, and the call ends
 * with nothing generated and nothing to relax, under every policy. */
static void
test_empty_mask (TgTestGpu *gpu, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  cudaStream_t s = gpu->stream;
  TgSeedState *seeds;
  TgProducer *p;
  cudaGraphExec_t exec;
  State before, got;
  TrackList list;
  gint32 flag, generated;

  TG_TEST_REQUIRE_GPU ();
  seeds = tg_seed_state_new (0, N_ENVS, 2468, &error);
  g_assert_no_error (error);
  p = track_new (seeds, s, N_ENVS, TRUE, NULL);
  run_ok (p, s, TG_POLICY_EAGER); /* every env at epoch 1 */
  state_read (&before, p, seeds, N_ENVS, s);
  exec = record (p, s, tg_unconditional ());
  fill (p, "mask", 0, s);

  for (guint k = 0; k < G_N_ELEMENTS (policies); k++)
    {
      set_family (p, (gint32)k % TRACK_N_FAMILIES, s);
      call (p, s, policies[k], exec);
      state_read (&got, p, seeds, N_ENVS, s);
      g_assert_cmpint (got.status.end, ==, TG_LOOP_END_SKIPPED);
      got.status = before.status;
      state_assert_equal (&got, &before, N_ENVS);
      state_clear (&got);
      download (&list, p, "list", sizeof list, s);
      download (&flag, p, "flag", sizeof flag, s);
      download (&generated, p, "generated", sizeof generated, s);
      g_assert_cmpuint (list.n, ==, 0);
      g_assert_cmpuint (list.counted, ==, 0);
      g_assert_cmpuint (list.blocks, ==, 0);
      g_assert_cmpint (list.sharp, ==, 0);
      g_assert_cmpint (flag, ==, 0);
      g_assert_cmpint (generated, ==, 0);
    }

  state_clear (&before);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  tg_producer_unref (p);
  tg_seed_state_unref (seeds);
}

void
examples_test_add_list (void)
{
  TG_TEST_ADD_GPU ("/examples/track/list/more-envs-than-blocks",
                   test_more_envs_than_blocks);
  TG_TEST_ADD_GPU ("/examples/track/list/empty-mask-changes-nothing", test_empty_mask);
}
