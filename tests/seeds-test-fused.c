/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-test-fused.c: tg_seed_state_advance_fill(), advance then fill in
 * one kernel: the same epochs and effective seeds as the two calls, round
 * after round, with a mask and without, for sizes with and without a tail
 * and an output that forces the scalar path; each of the kernel's shapes
 * (groups of envs per thread, which bench/seeds-bench.c compares) against a
 * host model; the refusals, which leave the state as it was; and a
 * recording that replays. */
#include "config.h"
#include "seeds-test.h"
#include "../lib/seeds/seeds-kernels-private.h"

typedef TgTestGpu Fixture;

/* Sizes: groups of 4 and no tail, a tail of 3, more than one block. */
static const guint sizes[] = { 1000, 1027, 4 * 256 * 5 + 1 };

/* The mask of round @r on the device (a new allocation: free it). */
static guint8 *
round_mask (guint n, guint r)
{
  g_autofree guint8 *host = g_new (guint8, n);
  guint8 *mask = tg_test_device_alloc (n);

  for (guint i = 0; i < n; i++)
    host[i] = tgs_round_mask (i, r);
  tg_test_upload (mask, host, n);
  return mask;
}

static void
test_matches_two_calls (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  for (guint k = 0; k < G_N_ELEMENTS (sizes); k++)
    {
      const guint n = sizes[k];
      TgSeedState *two = tgs_state_new (n, TGS_BASE),
                  *one = tgs_state_new (n, TGS_BASE);
      /* One element more, so that out + 1 (8-byte, not 16-byte aligned)
       * takes the scalar path. */
      guint64 *out_two = tg_test_device_alloc (n * sizeof (guint64));
      guint64 *out_one = tg_test_device_alloc ((n + 1) * sizeof (guint64));
      g_autofree guint64 *got_two = g_new (guint64, n);
      g_autofree guint64 *got_one = g_new (guint64, n);
      TgsReadback r_two, r_one;

      for (guint r = 0; r < 6; r++)
        {
          /* Rounds 2 and 5 advance every env (no mask); round 4 writes the
           * unaligned output. */
          guint8 *mask = r % 3 == 2 ? NULL : round_mask (n, r);
          guint64 *out = r == 4 ? out_one + 1 : out_one;

          g_assert_true (tg_seed_state_advance (two, f->stream, mask, n, &error));
          g_assert_true (
              tg_seed_state_fill_effective (two, f->stream, out_two, n, &error));
          g_assert_true (
              tg_seed_state_advance_fill (one, f->stream, mask, n, out, n, &error));
          g_assert_no_error (error);
          tg_test_download (got_two, out_two, n * sizeof (guint64));
          tg_test_download (got_one, out, n * sizeof (guint64));
          g_assert_cmpmem (got_one, n * sizeof (guint64), got_two,
                           n * sizeof (guint64));
          if (mask != NULL)
            tg_test_device_free (mask);
        }
      tgs_readback (two, f->stream, &r_two);
      tgs_readback (one, f->stream, &r_one);
      g_assert_cmpmem (r_one.epochs, n * 4, r_two.epochs, n * 4);
      g_assert_cmpmem (r_one.seeds, n * 8, r_two.seeds, n * 8);
      tgs_readback_clear (&r_two);
      tgs_readback_clear (&r_one);
      tg_test_device_free (out_one);
      tg_test_device_free (out_two);
      tg_seed_state_unref (one);
      tg_seed_state_unref (two);
    }
}

/* Every shape the launcher can take, against the host: the bench may make
 * any of them the default.  The sizes above, and one whose groups outnumber
 * the threads of a persistent grid on any GPU of up to 256 SMs, so that its
 * threads walk several groups, each loaded before the one before is stored. */
static void
test_kernel_shapes (Fixture *f, gconstpointer data)
{
  const guint shape_sizes[]
      = { sizes[0], sizes[1], sizes[2], 4 * 256 * 4 * 256 * 2 + 3 };

  TG_TEST_REQUIRE_GPU ();
  for (guint k = 0; k < G_N_ELEMENTS (shape_sizes); k++)
    for (guint g = TG_SEEDS_SHAPE_DEFAULT; g < TG_SEEDS_N_SHAPES; g++)
      for (guint masked = 0; masked <= 1; masked++)
        {
          const guint n = shape_sizes[k];
          TgSeedState *state = tgs_state_new (n, TGS_BASE);
          guint8 *mask = masked ? round_mask (n, g) : NULL;
          guint64 *out = tg_test_device_alloc (n * sizeof (guint64));
          g_autofree guint64 *got = g_new (guint64, n);
          TgsReadback before, after;

          tgs_readback (state, f->stream, &before);
          TG_TEST_CUDA (tg__launch_seeds_advance_fill (
              f->stream, out, tg_seed_state_get_seeds (state),
              tg_seed_state_get_epochs (state), mask, n, (TgSeedsShape)g));
          tgs_readback (state, f->stream, &after);
          tg_test_download (got, out, n * sizeof (guint64));
          for (guint i = 0; i < n; i++)
            {
              guint32 epoch
                  = before.epochs[i] + (!masked || tgs_round_mask (i, g) != 0);

              g_assert_cmpuint (after.epochs[i], ==, epoch);
              g_assert_cmphex (got[i], ==, tg_effective_seed (before.seeds[i], epoch));
            }
          tgs_readback_clear (&before);
          tgs_readback_clear (&after);
          tg_test_device_free (out);
          if (mask != NULL)
            tg_test_device_free (mask);
          tg_seed_state_unref (state);
        }
  /* A shape the launcher does not have launches nothing. */
  g_assert_cmpint (tg__launch_seeds_advance_fill (f->stream, NULL, NULL, NULL, NULL, 16,
                                                  TG_SEEDS_N_SHAPES),
                   ==, cudaErrorInvalidValue);
}

static void
test_refusals (Fixture *f, gconstpointer data)
{
  const guint n = TGS_N_ENVS;
  TgSeedState *state = NULL;
  guint8 *short_mask = NULL, *mask = NULL;
  guint64 *out = NULL, *short_out = NULL;
  g_autofree guint8 *host_mask = g_malloc0 (n);
  g_autoptr (GError) error = NULL;
  TgsReadback before;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_state_new (n, TGS_BASE);
  mask = round_mask (n, 1);
  short_mask = tg_test_device_alloc (n / 2);
  out = tg_test_device_alloc (n * sizeof (guint64));
  short_out = tg_test_device_alloc (n / 2 * sizeof (guint64));
  tgs_readback (state, f->stream, &before);

  g_assert_false (
      tg_seed_state_advance_fill (state, f->stream, mask, n, out, n - 1, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  g_clear_error (&error);
  g_assert_false (
      tg_seed_state_advance_fill (state, f->stream, mask, n, short_out, n, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  g_clear_error (&error);
  g_assert_false (
      tg_seed_state_advance_fill (state, f->stream, mask, n - 1, out, n, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  g_clear_error (&error);
  g_assert_false (
      tg_seed_state_advance_fill (state, f->stream, short_mask, n, out, n, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  g_clear_error (&error);
  g_assert_false (
      tg_seed_state_advance_fill (state, f->stream, host_mask, n, out, n, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_clear_error (&error);
  /* Arrays that share memory with the state's own, or with each other: the
   * kernel would overwrite what it reads (issue 27 §5). */
  g_assert_false (tg_seed_state_advance_fill (
      state, f->stream, mask, n, (guint64 *)tg_seed_state_get_seeds (state), n,
      &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "overlaps the state's own"));
  g_clear_error (&error);
  g_assert_false (tg_seed_state_fill_effective (
      state, f->stream, (guint64 *)tg_seed_state_get_epochs (state), n, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (tg_seed_state_advance (
      state, f->stream, (const guint8 *)tg_seed_state_get_epochs (state), n, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (tg_seed_state_advance_fill (state, f->stream, (const guint8 *)out, n,
                                              out, n, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "the mask"));
  g_clear_error (&error);
  tgs_assert_unchanged (state, f->stream, &before);

  tgs_readback_clear (&before);
  tg_test_device_free (short_out);
  tg_test_device_free (out);
  tg_test_device_free (short_mask);
  tg_test_device_free (mask);
  tg_seed_state_unref (state);
}

/* Recorded once, replayed: each replay advances and fills again. */
static void
test_recorded (Fixture *f, gconstpointer data)
{
  const guint n = TGS_N_ENVS;
  TgSeedState *state;
  guint8 *mask;
  guint64 *out;
  g_autofree guint64 *got = g_new (guint64, n);
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  TgsReadback model;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_state_new (n, TGS_BASE);
  mask = round_mask (n, 3);
  out = tg_test_device_alloc (n * sizeof (guint64));
  tgs_readback (state, f->stream, &model);
  TG_TEST_CUDA (cudaStreamBeginCapture (f->stream, cudaStreamCaptureModeThreadLocal));
  g_assert_true (
      tg_seed_state_advance_fill (state, f->stream, mask, n, out, n, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (f->stream, &graph));
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  for (guint replay = 0; replay < 3; replay++)
    {
      TG_TEST_CUDA (cudaGraphLaunch (exec, f->stream));
      TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
      tg_test_download (got, out, n * sizeof (guint64));
      for (guint i = 0; i < n; i++)
        {
          model.epochs[i] += tgs_round_mask (i, 3) != 0;
          g_assert_cmphex (got[i], ==,
                           tg_effective_seed (model.seeds[i], model.epochs[i]));
        }
    }
  tgs_assert_state (state, f->stream, model.seeds, model.epochs);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tgs_readback_clear (&model);
  tg_test_device_free (out);
  tg_test_device_free (mask);
  tg_seed_state_unref (state);
}

void
tgs_add_fused_tests (void)
{
  TG_TEST_ADD_GPU ("/seeds/advance-fill/matches-two-calls", test_matches_two_calls);
  TG_TEST_ADD_GPU ("/seeds/advance-fill/kernel-shapes", test_kernel_shapes);
  TG_TEST_ADD_GPU ("/seeds/advance-fill/refusals-leave-state", test_refusals);
  TG_TEST_ADD_GPU ("/seeds/advance-fill/recorded-in-graph", test_recorded);
}
