/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-test-snapshot.c: snapshots of the seed state on a GPU: a round trip
 * in the current format, the first env of a shard, and version 1 (0.1's)
 * restoring; and tg_seed_state_write() of every env. */
#include "config.h"
#include "seeds-test.h"

#include <string.h>

typedef TgTestGpu Fixture;

#define SHARD_FIRST 100u
#define SHARD_N 50u

static void
test_gpu_snapshot_round_trip (Fixture *f, gconstpointer data)
{
  const guint n = 4097, ids[] = { 17, 4096 };
  const guint64 values[] = { 1, G_MAXUINT64 };
  const guint header = 24;
  g_autofree guint8 *mask = g_new (guint8, n);
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) snap = NULL;
  cudaStream_t stream = f->stream;
  guint8 *d_mask;
  TgSeedState *state, *other;
  TgsReadback before;
  const guint8 *bytes;
  guint32 version, n_envs, first_env;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_state_new (n, 1234);
  d_mask = tg_test_device_alloc (n);
  for (guint i = 0; i < n; i++)
    mask[i] = tgs_mask_value (i, 5);
  tg_test_upload (d_mask, mask, n);
  g_assert_true (tg_seed_state_advance (state, stream, NULL, 0, &error));
  g_assert_true (tg_seed_state_advance (state, stream, d_mask, n, &error));
  g_assert_true (tg_seed_state_set_seeds (state, stream, ids, values, 2, &error));
  g_assert_no_error (error);
  tgs_readback (state, stream, &before);

  snap = tg_seed_state_snapshot (state, stream, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (snap), ==, header + n * 12);
  bytes = g_bytes_get_data (snap, NULL);
  g_assert_cmpmem (bytes, 8, "TGSEEDS", 8);
  memcpy (&version, bytes + 8, 4);
  memcpy (&n_envs, bytes + 12, 4);
  memcpy (&first_env, bytes + 16, 4);
  g_assert_cmpuint (GUINT32_FROM_LE (version), ==, 2);
  g_assert_cmpuint (GUINT32_FROM_LE (n_envs), ==, n);
  g_assert_cmpuint (GUINT32_FROM_LE (first_env), ==, 0);
  for (guint i = 0; i < n; i++)
    {
      guint64 s;
      guint32 e;
      memcpy (&s, bytes + header + 8 * i, 8);
      memcpy (&e, bytes + header + 8 * n + 4 * i, 4);
      g_assert_cmphex (GUINT64_FROM_LE (s), ==, before.seeds[i]);
      g_assert_cmpuint (GUINT32_FROM_LE (e), ==, before.epochs[i]);
    }

  /* Change everything, then restore; and restore into a fresh state. */
  g_assert_true (tg_seed_state_advance (state, stream, NULL, 0, &error));
  g_assert_true (tg_seed_state_set_seeds (state, stream, ids + 1, values, 1, &error));
  g_assert_true (tg_seed_state_restore (state, stream, snap, &error));
  g_assert_no_error (error);
  tgs_assert_unchanged (state, stream, &before);
  other = tgs_state_new (n, 1);
  g_assert_true (tg_seed_state_restore (other, stream, snap, &error));
  g_assert_no_error (error);
  tgs_assert_unchanged (other, stream, &before);

  tgs_readback_clear (&before);
  tg_seed_state_unref (other);
  tg_seed_state_unref (state);
  tg_test_device_free (d_mask);
}

/* Every env put back at given (seed, epoch) pairs, and one half alone. */
static void
test_write_round_trip (Fixture *f, gconstpointer data)
{
  const guint n = 1000;
  g_autofree guint64 *seeds = g_new (guint64, n);
  g_autofree guint32 *epochs = g_new (guint32, n);
  g_autoptr (GError) error = NULL;
  TgSeedState *state;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_state_new (n, 7);
  for (guint i = 0; i < n; i++)
    {
      seeds[i] = G_MAXUINT64 - 3 * i;
      epochs[i] = i == 0 ? G_MAXUINT32 : i;
    }
  g_assert_true (tg_seed_state_write (state, f->stream, seeds, epochs, &error));
  g_assert_no_error (error);
  tgs_assert_state (state, f->stream, seeds, epochs);
  /* NULL keeps that half. */
  epochs[5] = 0;
  g_assert_true (tg_seed_state_write (state, f->stream, NULL, epochs, &error));
  g_assert_no_error (error);
  tgs_assert_state (state, f->stream, seeds, epochs);
  tg_seed_state_unref (state);
}

static void
assert_restore_refused (TgSeedState *state, cudaStream_t s, GBytes *snapshot)
{
  guint n = tg_seed_state_get_n_envs (state);
  g_autofree guint64 *seeds = g_new (guint64, n);
  g_autofree guint32 *epochs = g_new (guint32, n);
  g_autoptr (GError) error = NULL;

  tgs_read_state (state, s, seeds, epochs);
  g_assert_false (tg_seed_state_restore (state, s, snapshot, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  tgs_assert_state (state, s, seeds, epochs);
}

/* A version-1 snapshot (libtrackgen 0.1), byte by byte: "TGSEEDS\0",
 * version, n_envs, then the seeds and the epochs, little endian. */
static GBytes *
snapshot_v1 (guint n, const guint64 *seeds, const guint32 *epochs)
{
  const guint32 header[2] = { GUINT32_TO_LE (1), GUINT32_TO_LE (n) };
  gsize size = 16 + n * (sizeof (guint64) + sizeof (guint32));
  guint8 *bytes = g_malloc (size), *at = bytes + 16;

  memcpy (bytes, "TGSEEDS", 8);
  memcpy (bytes + 8, header, sizeof header);
  for (guint i = 0; i < n; i++, at += sizeof (guint64))
    {
      guint64 le = GUINT64_TO_LE (seeds[i]);
      memcpy (at, &le, sizeof le);
    }
  for (guint i = 0; i < n; i++, at += sizeof (guint32))
    {
      guint32 le = GUINT32_TO_LE (epochs[i]);
      memcpy (at, &le, sizeof le);
    }
  return g_bytes_new_take (bytes, size);
}

static void
test_snapshot_first_env (TgTestGpu *gpu, gconstpointer data)
{
  cudaStream_t s = gpu->stream;
  guint64 seeds[SHARD_N];
  guint32 epochs[SHARD_N] = { 0 }, fields[3];
  g_autoptr (GBytes) snapshot = NULL, v1 = NULL;
  g_autoptr (GError) error = NULL;
  TgSeedState *shard, *same, *other, *zero;
  const guint8 *bytes;
  gsize size;

  TG_TEST_REQUIRE_GPU ();
  shard = tgs_shard_new (SHARD_FIRST, SHARD_N, TGS_BASE);
  tgs_advance_all (shard, s, epochs);
  snapshot = tg_seed_state_snapshot (shard, s, &error);
  g_assert_no_error (error);
  bytes = g_bytes_get_data (snapshot, &size);
  g_assert_cmpuint (size, ==, 24 + SHARD_N * (sizeof (guint64) + sizeof (guint32)));
  g_assert_cmpmem (bytes, 8, "TGSEEDS", 8);
  memcpy (fields, bytes + 8, sizeof fields);
  g_assert_cmpuint (GUINT32_FROM_LE (fields[0]), ==, 2);
  g_assert_cmpuint (GUINT32_FROM_LE (fields[1]), ==, SHARD_N);
  g_assert_cmpuint (GUINT32_FROM_LE (fields[2]), ==, SHARD_FIRST);

  /* Same envs, other seeds: restored. */
  tgs_read_state (shard, s, seeds, NULL);
  same = tgs_shard_new (SHARD_FIRST, SHARD_N, ~TGS_BASE);
  g_assert_true (tg_seed_state_restore (same, s, snapshot, &error));
  g_assert_no_error (error);
  tgs_assert_state (same, s, seeds, epochs);
  /* Other envs: refused, unchanged. */
  other = tgs_shard_new (SHARD_FIRST + 1, SHARD_N, TGS_BASE);
  assert_restore_refused (other, s, snapshot);

  /* Version 1 means first env 0. */
  for (guint i = 0; i < SHARD_N; i++)
    {
      seeds[i] = G_GUINT64_CONSTANT (0x0123456789ABCDEF) * (i + 1);
      epochs[i] = 3 * i + 1;
    }
  v1 = snapshot_v1 (SHARD_N, seeds, epochs);
  zero = tgs_shard_new (0, SHARD_N, TGS_BASE);
  g_assert_true (tg_seed_state_restore (zero, s, v1, &error));
  g_assert_no_error (error);
  tgs_assert_state (zero, s, seeds, epochs);
  assert_restore_refused (shard, s, v1);

  tg_seed_state_unref (zero);
  tg_seed_state_unref (other);
  tg_seed_state_unref (same);
  tg_seed_state_unref (shard);
}

void
tgs_add_snapshot_tests (void)
{
  TG_TEST_ADD_GPU ("/seeds/snapshot/round-trip", test_gpu_snapshot_round_trip);
  TG_TEST_ADD_GPU ("/seeds/write/round-trip", test_write_round_trip);
  TG_TEST_ADD_GPU ("/seeds/snapshot/first-env-and-version-1", test_snapshot_first_env);
}
