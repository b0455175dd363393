/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-test-gpu.c: the seed state on a GPU.  Every case reads the state
 * back and checks it against the host, and ends checking that nothing leaked
 * and no stream is left capturing (the TgTestGpu fixture).  Every call names
 * the case's stream unless it is about TG_STREAM_AUTO.  Also the helpers
 * that the GPU parts of seeds-test share (seeds-test.h). */
#include "config.h"
#include "seeds-test.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

void
tgs_readback (TgSeedState *state, cudaStream_t stream, TgsReadback *r)
{
  g_autoptr (GError) error = NULL;

  r->n = tg_seed_state_get_n_envs (state);
  r->seeds = g_new (guint64, r->n);
  r->epochs = g_new (guint32, r->n);
  g_assert_true (tg_seed_state_read (state, stream, r->seeds, r->epochs, &error));
  g_assert_no_error (error);
}

void
tgs_readback_clear (TgsReadback *r)
{
  g_clear_pointer (&r->seeds, g_free);
  g_clear_pointer (&r->epochs, g_free);
}

void
tgs_assert_unchanged (TgSeedState *state, cudaStream_t stream,
                      const TgsReadback *before)
{
  TgsReadback now;

  tgs_readback (state, stream, &now);
  g_assert_cmpmem (now.seeds, now.n * 8, before->seeds, before->n * 8);
  g_assert_cmpmem (now.epochs, now.n * 4, before->epochs, before->n * 4);
  tgs_readback_clear (&now);
}

TgSeedState *
tgs_state_new (guint n, guint64 base)
{
  g_autoptr (GError) error = NULL;
  TgSeedState *state = tg_seed_state_new (0, n, base, &error);

  g_assert_no_error (error);
  g_assert_nonnull (state);
  return state;
}

TgSeedState *
tgs_shard_new (guint first_env, guint n_envs, guint64 base)
{
  g_autoptr (GError) error = NULL;
  TgSeedState *state = tg_seed_state_new_shard (0, first_env, n_envs, base, &error);

  g_assert_no_error (error);
  g_assert_nonnull (state);
  g_assert_cmpuint (tg_seed_state_get_first_env (state), ==, first_env);
  g_assert_cmpuint (tg_seed_state_get_n_envs (state), ==, n_envs);
  return state;
}

void
tgs_read_state (TgSeedState *state, cudaStream_t s, guint64 *seeds, guint32 *epochs)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (tg_seed_state_read (state, s, seeds, epochs, &error));
  g_assert_no_error (error);
}

/* Reads the state back and compares it with the model. */
void
tgs_assert_state (TgSeedState *state, cudaStream_t s, const guint64 *seeds,
                  const guint32 *epochs)
{
  guint n = tg_seed_state_get_n_envs (state);
  g_autofree guint64 *got_seeds = g_new (guint64, n);
  g_autofree guint32 *got_epochs = g_new (guint32, n);

  tgs_read_state (state, s, got_seeds, got_epochs);
  g_assert_cmpmem (got_seeds, n * sizeof (guint64), seeds, n * sizeof (guint64));
  g_assert_cmpmem (got_epochs, n * sizeof (guint32), epochs, n * sizeof (guint32));
}

/* Advances every env, eagerly on @s, in the state and the model. */
void
tgs_advance_all (TgSeedState *state, cudaStream_t s, guint32 *epochs)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (tg_seed_state_advance (state, s, NULL, 0, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < tg_seed_state_get_n_envs (state); i++)
    epochs[i]++;
}

/* The mask byte of env @i at round @r: 0, or non-zero and not only 1. */
guint8
tgs_round_mask (guint i, guint r)
{
  return (i * 7 + r) % 5 == 0 ? (guint8)(1 + (i + r) % 251) : 0;
}

/* ------------------------------------------------------------------------ */
/* The state                                                                 */

typedef TgTestGpu Fixture;

static void
test_gpu_new (Fixture *f, gconstpointer data)
{
  const guint n = 4099;
  g_autofree guint64 *explicit_seeds = g_new (guint64, n);
  g_autoptr (GError) error = NULL;
  TgSeedState *state, *copy;
  TgsReadback r;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_state_new (n, 42);
  g_assert_cmpuint (tg_seed_state_get_n_envs (state), ==, n);
  g_assert_cmpuint (tg_seed_state_get_first_env (state), ==, 0);
  g_assert_cmpint (tg_seed_state_get_device (state), ==, 0);
  g_assert_nonnull (tg_seed_state_get_seeds (state));
  g_assert_nonnull (tg_seed_state_get_epochs (state));
  g_assert_true (tg_seed_state_ref (state) == state);
  tg_seed_state_unref (state);
  tgs_readback (state, f->stream, &r);
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmphex (r.seeds[i], ==, tg_env_seed (42, i));
      g_assert_cmpuint (r.epochs[i], ==, 0);
      explicit_seeds[i] = G_GUINT64_CONSTANT (0xA5A5A5A500000000) + i * 3;
    }
  tgs_readback_clear (&r);
  tg_seed_state_unref (state);

  copy = tg_seed_state_new_from_array (0, n, explicit_seeds, &error);
  g_assert_no_error (error);
  tgs_readback (copy, f->stream, &r);
  g_assert_cmpmem (r.seeds, n * 8, explicit_seeds, n * 8);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (r.epochs[i], ==, 0);
  tgs_readback_clear (&r);
  tg_seed_state_unref (copy);

  g_assert_null (tg_seed_state_new (4096, n, 42, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
  g_clear_error (&error);
  g_assert_null (tg_seed_state_new (-1, n, 42, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
}

/* Device and host agree bit for bit on 2^20 random pairs. */
static void
test_gpu_host_device_equal (Fixture *f, gconstpointer data)
{
  const guint n = 1u << 20;
  g_autoptr (GRand) rand = g_rand_new_with_seed (20240611);
  g_autofree guint64 *seeds = g_new (guint64, n), *out = g_new (guint64, n);
  g_autofree guint32 *epochs = g_new (guint32, n);
  guint64 *d_seeds, *d_out;
  guint32 *d_epochs;

  TG_TEST_REQUIRE_GPU ();
  for (guint i = 0; i < n; i++)
    {
      seeds[i] = (guint64)g_rand_int (rand) << 32 | g_rand_int (rand);
      epochs[i] = g_rand_int (rand);
    }
  seeds[0] = 0, epochs[0] = 0, seeds[1] = G_MAXUINT64, epochs[1] = G_MAXUINT32;
  d_seeds = tg_test_device_alloc (n * 8);
  d_out = tg_test_device_alloc (n * 8);
  d_epochs = tg_test_device_alloc (n * 4);
  tg_test_upload (d_seeds, seeds, n * 8);
  tg_test_upload (d_epochs, epochs, n * 4);
  TG_TEST_CUDA (tgs_launch_effective (f->stream, d_seeds, d_epochs, d_out, n));
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  tg_test_download (out, d_out, n * 8);
  for (guint i = 0; i < n; i++)
    if (out[i] != tg_effective_seed (seeds[i], epochs[i]))
      g_error ("pair %u: device 0x%016" G_GINT64_MODIFIER
               "x, host 0x%016" G_GINT64_MODIFIER "x",
               i, out[i], tg_effective_seed (seeds[i], epochs[i]));
  tg_test_device_free (d_seeds);
  tg_test_device_free (d_out);
  tg_test_device_free (d_epochs);
}

/* Eager advance (all, aligned mask, unaligned mask) and fill_effective into
 * an aligned and an unaligned output, against the host; then a masked reset. */
static void
test_gpu_advance_and_fill (Fixture *f, gconstpointer data)
{
  const guint n = 10007;
  g_autofree guint8 *mask = g_new0 (guint8, n + 1);
  g_autofree guint32 *expect = g_new0 (guint32, n);
  g_autofree guint64 *out = g_new (guint64, n);
  g_autoptr (GError) error = NULL;
  cudaStream_t stream = f->stream;
  TgSeedState *state;
  guint8 *d_mask;
  guint64 *d_out;
  TgsReadback r;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_state_new (n, 7);
  d_mask = tg_test_device_alloc (n + 1);
  d_out = tg_test_device_alloc ((n + 1) * 8);
  for (guint round = 0; round < 3; round++)
    {
      for (guint i = 0; i < n; i++)
        {
          mask[i + round % 2] = tgs_mask_value (i, round);
          expect[i] += 1 + (mask[i + round % 2] != 0);
        }
      TG_TEST_CUDA (cudaStreamSynchronize (stream));
      tg_test_upload (d_mask, mask, n + 1);
      /* Odd rounds pass the mask at offset 1: the unaligned path. */
      g_assert_true (tg_seed_state_advance (state, stream, NULL, 0, &error));
      g_assert_true (
          tg_seed_state_advance (state, stream, d_mask + round % 2, n, &error));
      g_assert_no_error (error);
    }
  /* An output longer than needed is fine. */
  g_assert_true (tg_seed_state_fill_effective (state, stream, d_out, n + 1, &error));
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
  tg_test_download (out, d_out, n * 8);
  tgs_readback (state, stream, &r);
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpuint (r.epochs[i], ==, expect[i]);
      g_assert_cmphex (out[i], ==, tg_effective_seed (tg_env_seed (7, i), expect[i]));
    }
  /* An output at an 8- but not 16-byte boundary: the scalar path. */
  g_assert_true (tg_seed_state_fill_effective (state, stream, d_out + 1, n, &error));
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
  tg_test_download (out, d_out + 1, n * 8);
  for (guint i = 0; i < n; i++)
    g_assert_cmphex (out[i], ==, tg_effective_seed (r.seeds[i], r.epochs[i]));
  tgs_readback_clear (&r);
  g_assert_no_error (error);

  /* TG_STREAM_AUTO is TrackGen's default stream: calls that name no stream
   * are ordered with each other there. */
  g_assert_true (tg_seed_state_reset_epochs (state, TG_STREAM_AUTO, NULL, 0, &error));
  g_assert_true (tg_seed_state_advance (state, TG_STREAM_AUTO, NULL, 0, &error));
  g_assert_no_error (error);
  tgs_readback (state, TG_STREAM_AUTO, &r);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (r.epochs[i], ==, 1);
  tgs_readback_clear (&r);

  /* A masked reset: only the envs of the last round's mask go back to 0. */
  g_assert_true (tg_seed_state_reset_epochs (state, stream, d_mask, n, &error));
  g_assert_no_error (error);
  tgs_readback (state, stream, &r);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (r.epochs[i], ==, mask[i] != 0 ? 0 : 1);
  tgs_readback_clear (&r);

  tg_seed_state_unref (state);
  tg_test_device_free (d_mask);
  tg_test_device_free (d_out);
}

/* Epochs wrap from 2^32 - 1 to 0; a forged snapshot sets them near it, in
 * the current format and in 0.1's. */
static void
test_gpu_epoch_wraps (Fixture *f, gconstpointer data)
{
  const guint n = 6;
  const guint64 seeds[6] = { 1, 2, 3, 4, 5, 6 };
  const guint32 epochs[6]
      = { G_MAXUINT32, G_MAXUINT32 - 1, 0, G_MAXUINT32, 5, G_MAXUINT32 };
  g_autoptr (GError) error = NULL;
  TgSeedState *state;
  TgsReadback r;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_state_new (n, 0);
  for (guint32 version = 1; version <= 2; version++)
    {
      g_autoptr (GBytes) forged = tgs_snapshot_forge (n, version, seeds, epochs);

      g_assert_true (tg_seed_state_restore (state, f->stream, forged, &error));
      g_assert_true (tg_seed_state_advance (state, f->stream, NULL, 0, &error));
      g_assert_no_error (error);
      tgs_readback (state, f->stream, &r);
      g_assert_cmpmem (r.seeds, sizeof seeds, seeds, sizeof seeds);
      for (guint i = 0; i < n; i++)
        g_assert_cmpuint (r.epochs[i], ==, (guint32)(epochs[i] + 1));
      tgs_readback_clear (&r);
    }
  tg_seed_state_unref (state);
}

static void
test_gpu_set_seeds (Fixture *f, gconstpointer data)
{
  const guint n = 1000, ids[] = { 999, 0, 500 };
  const guint64 values[] = { 11, 22, 33 };
  g_autoptr (GError) error = NULL;
  TgSeedState *state;
  TgsReadback r;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_state_new (n, 5);
  for (guint k = 0; k < 3; k++)
    g_assert_true (tg_seed_state_advance (state, f->stream, NULL, 0, &error));
  g_assert_true (tg_seed_state_set_seeds (state, f->stream, ids, values,
                                          G_N_ELEMENTS (ids), &error));
  g_assert_true (tg_seed_state_set_seeds (state, f->stream, NULL, NULL, 0, &error));
  g_assert_no_error (error);
  tgs_readback (state, f->stream, &r);
  for (guint i = 0; i < n; i++)
    {
      guint k = i == 999 ? 0 : i == 0 ? 1 : i == 500 ? 2 : G_MAXUINT;
      g_assert_cmphex (r.seeds[i], ==, k != G_MAXUINT ? values[k] : tg_env_seed (5, i));
      g_assert_cmpuint (r.epochs[i], ==, k != G_MAXUINT ? 0 : 3);
    }
  tgs_readback_clear (&r);
  tg_seed_state_unref (state);
}

/* Every refused call leaves the state as it was. */
static void
test_gpu_bad_inputs (Fixture *f, gconstpointer data)
{
  const guint n = 1000, range[] = { 1, 2, 1000 }, dup[] = { 3, 7, 3 };
  const guint64 values[] = { 9, 9, 9 };
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) good = NULL, small = NULL, v3 = NULL, cut = NULL, empty = NULL;
  g_autofree guint8 *bad = NULL;
  cudaStream_t stream = f->stream;
  TgSeedState *state;
  guint8 *d_mask;
  guint64 *d_out;
  TgsReadback before;
  gsize size;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_state_new (n, 77);
  d_mask = tg_test_device_alloc (n + 1);
  d_out = tg_test_device_alloc (n * 8);
  TG_TEST_CUDA (cudaMemset (d_mask, 1, n / 2));
  TG_TEST_CUDA (cudaDeviceSynchronize ());
  g_assert_true (tg_seed_state_advance (state, stream, NULL, 0, &error));
  g_assert_true (tg_seed_state_advance (state, stream, d_mask, n, &error));
  good = tg_seed_state_snapshot (state, stream, &error);
  g_assert_no_error (error);
  tgs_readback (state, stream, &before);

#define REFUSED(call, code)                                                            \
  G_STMT_START                                                                         \
  {                                                                                    \
    g_assert_false (call);                                                             \
    g_assert_error (error, TG_ARGUMENT_ERROR, code);                                   \
    g_clear_error (&error);                                                            \
    tgs_assert_unchanged (state, stream, &before);                                     \
  }                                                                                    \
  G_STMT_END

  REFUSED (tg_seed_state_set_seeds (state, stream, range, values, 3, &error),
           TG_ARGUMENT_ERROR_OUT_OF_RANGE);
  REFUSED (tg_seed_state_set_seeds (state, stream, dup, values, 3, &error),
           TG_ARGUMENT_ERROR_DUPLICATE);
  REFUSED (tg_seed_state_advance (state, stream, d_mask, n - 1, &error),
           TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  REFUSED (tg_seed_state_advance (state, stream, d_mask, n + 1, &error),
           TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  REFUSED (tg_seed_state_fill_effective (state, stream, d_out, n - 1, &error),
           TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  /* The scatter writes the state's seeds and epochs while it reads its
   * ids and values: neither may be the state's own (accepted until 0.5). */
  REFUSED (tg_seed_state_set_seeds_device (state, stream,
                                           tg_seed_state_get_epochs (state),
                                           (const guint64 *)d_out, 4, &error),
           TG_ARGUMENT_ERROR_INVALID);
  REFUSED (tg_seed_state_set_seeds_device (state, stream, (const guint32 *)d_mask,
                                           tg_seed_state_get_seeds (state) + 1, 4,
                                           &error),
           TG_ARGUMENT_ERROR_INVALID);

  g_assert_true (tg_seed_state_advance (state, stream, NULL, 0, &error));
  g_assert_no_error (error);
  tgs_readback_clear (&before);
  tgs_readback (state, stream, &before);
  small = tgs_snapshot_forge (n - 1, 2, NULL, NULL);
  v3 = tgs_snapshot_forge (n, 3, NULL, NULL);
  size = g_bytes_get_size (good);
  cut = g_bytes_new_from_bytes (good, 0, size - 1);
  empty = g_bytes_new (NULL, 0);
  bad = g_memdup2 (g_bytes_get_data (good, NULL), size);
  bad[0] = 'X';
  REFUSED (tg_seed_state_restore (state, stream, small, &error),
           TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  REFUSED (tg_seed_state_restore (state, stream, v3, &error),
           TG_ARGUMENT_ERROR_VERSION);
  REFUSED (tg_seed_state_restore (state, stream, cut, &error),
           TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  REFUSED (tg_seed_state_restore (state, stream, empty, &error),
           TG_ARGUMENT_ERROR_VERSION);
  {
    g_autoptr (GBytes) magic = g_bytes_new (bad, size);
    REFUSED (tg_seed_state_restore (state, stream, magic, &error),
             TG_ARGUMENT_ERROR_VERSION);
  }
#undef REFUSED

  tgs_readback_clear (&before);
  tg_seed_state_unref (state);
  tg_test_device_free (d_mask);
  tg_test_device_free (d_out);
}

typedef gboolean (*MaskOp) (TgSeedState *state, cudaStream_t stream,
                            const guint8 *device_mask, gsize mask_len, GError **error);

static void
test_bad_masks (TgTestGpu *gpu, gconstpointer data)
{
  const MaskOp ops[] = { tg_seed_state_advance, tg_seed_state_reset_epochs };
  cudaStream_t s = gpu->stream;
  g_autofree guint64 *seeds = g_new (guint64, TGS_N_ENVS);
  g_autofree guint32 *epochs = g_new0 (guint32, TGS_N_ENVS);
  g_autofree guint8 *host_mask = g_malloc0 (TGS_N_ENVS);
  g_autoptr (GError) error = NULL;
  TgSeedState *state;
  guint8 *short_mask;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_shard_new (0, TGS_N_ENVS, TGS_BASE);
  for (guint i = 0; i < TGS_N_ENVS; i++)
    seeds[i] = tg_env_seed (TGS_BASE, i);
  tgs_advance_all (state, s, epochs);
  tgs_advance_all (state, s, epochs);
  short_mask = tg_test_device_alloc (TGS_N_ENVS / 2);
  for (guint k = 0; k < G_N_ELEMENTS (ops); k++)
    {
      g_assert_false (ops[k](state, s, host_mask, TGS_N_ENVS, &error));
      g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
      g_clear_error (&error);
      g_assert_false (ops[k](state, s, short_mask, TGS_N_ENVS, &error));
      g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
      g_clear_error (&error);
    }
  tgs_assert_state (state, s, seeds, epochs);
  tg_test_device_free (short_mask);
  tg_seed_state_unref (state);
}

#define SHARD_FIRST 100u
#define SHARD_N 50u
#define FULL_N 200u

static void
test_shard_matches_full (TgTestGpu *gpu, gconstpointer data)
{
  cudaStream_t s = gpu->stream;
  guint64 seeds[FULL_N], out_shard[SHARD_N], out_full[FULL_N];
  guint8 mask_shard[SHARD_N], mask_full[FULL_N] = { 0 };
  guint32 epochs[SHARD_N] = { 0 };
  g_autoptr (GError) error = NULL;
  guint8 *d_mask_shard, *d_mask_full;
  guint64 *d_out_shard, *d_out_full;
  TgSeedState *shard, *full, *last;

  TG_TEST_REQUIRE_GPU ();
  shard = tgs_shard_new (SHARD_FIRST, SHARD_N, TGS_BASE);
  full = tg_seed_state_new (0, FULL_N, TGS_BASE, &error);
  g_assert_no_error (error);
  tgs_read_state (full, s, seeds, NULL);
  for (guint i = 0; i < FULL_N; i++)
    g_assert_cmphex (seeds[i], ==, tg_env_seed (TGS_BASE, i));
  tgs_read_state (shard, s, seeds, NULL);
  for (guint i = 0; i < SHARD_N; i++)
    g_assert_cmphex (seeds[i], ==, tg_env_seed (TGS_BASE, SHARD_FIRST + i));

  d_mask_shard = tg_test_device_alloc (SHARD_N);
  d_mask_full = tg_test_device_alloc (FULL_N);
  d_out_shard = tg_test_device_alloc (SHARD_N * sizeof (guint64));
  d_out_full = tg_test_device_alloc (FULL_N * sizeof (guint64));
  for (guint r = 0; r < 3; r++)
    {
      for (guint i = 0; i < SHARD_N; i++)
        {
          mask_shard[i] = mask_full[SHARD_FIRST + i] = tgs_round_mask (i, r);
          epochs[i] += mask_shard[i] != 0;
        }
      tg_test_upload (d_mask_shard, mask_shard, SHARD_N);
      tg_test_upload (d_mask_full, mask_full, FULL_N);
      g_assert_true (tg_seed_state_advance (shard, s, d_mask_shard, SHARD_N, &error));
      g_assert_true (tg_seed_state_advance (full, s, d_mask_full, FULL_N, &error));
    }
  g_assert_true (tg_seed_state_fill_effective (shard, s, d_out_shard, SHARD_N, &error));
  g_assert_true (tg_seed_state_fill_effective (full, s, d_out_full, FULL_N, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (s));
  tg_test_download (out_shard, d_out_shard, sizeof out_shard);
  tg_test_download (out_full, d_out_full, sizeof out_full);
  for (guint i = 0; i < SHARD_N; i++)
    {
      g_assert_cmphex (out_shard[i], ==, out_full[SHARD_FIRST + i]);
      g_assert_cmphex (
          out_shard[i], ==,
          tg_effective_seed (tg_env_seed (TGS_BASE, SHARD_FIRST + i), epochs[i]));
    }

  /* The last shard of a population of 2^32 envs. */
  last = tgs_shard_new (G_MAXUINT32 - 9, 10, TGS_BASE);
  tgs_read_state (last, s, seeds, NULL);
  g_assert_cmphex (seeds[9], ==, tg_env_seed (TGS_BASE, G_MAXUINT32));

  tg_test_device_free (d_mask_shard);
  tg_test_device_free (d_mask_full);
  tg_test_device_free (d_out_shard);
  tg_test_device_free (d_out_full);
  tg_seed_state_unref (last);
  tg_seed_state_unref (full);
  tg_seed_state_unref (shard);
}

void
tgs_add_gpu_tests (void)
{
  TG_TEST_ADD_GPU ("/seeds/state/new", test_gpu_new);
  TG_TEST_ADD_GPU ("/seeds/effective/host-device-equal", test_gpu_host_device_equal);
  TG_TEST_ADD_GPU ("/seeds/advance/eager-and-fill", test_gpu_advance_and_fill);
  TG_TEST_ADD_GPU ("/seeds/advance/epoch-wraps", test_gpu_epoch_wraps);
  TG_TEST_ADD_GPU ("/seeds/set-seeds/resets-epochs", test_gpu_set_seeds);
  TG_TEST_ADD_GPU ("/seeds/args/bad-inputs-leave-state", test_gpu_bad_inputs);
  TG_TEST_ADD_GPU ("/seeds/mask/host-or-short-refused", test_bad_masks);
  TG_TEST_ADD_GPU ("/seeds/shard/matches-full-population", test_shard_matches_full);
}
