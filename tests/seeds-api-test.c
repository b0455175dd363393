/* seeds-api-test.c: what API 0.2 added to the seed state: calls ordered on
 * the caller's stream, blocking calls refusing a capturing one, reseeding and
 * masked resets recorded in a graph, shards, snapshots with a first env, and
 * masks checked against the device.  Every case reads the state back and
 * compares it with a host model. */
#include "config.h"
#include "tg-test.h"
#include "api-test.h"

#include <string.h>

#define N_ENVS 1000u
#define BASE G_GUINT64_CONSTANT (0x5EED5EED12345678)
/* About 0.1 s of one thread spinning on a current GPU. */
#define SPIN_CYCLES G_GUINT64_CONSTANT (200000000)

static TgSeedState *
state_new (guint first_env, guint n_envs, guint64 base)
{
  g_autoptr (GError) error = NULL;
  TgSeedState *state = tg_seed_state_new_shard (0, first_env, n_envs, base, &error);

  g_assert_no_error (error);
  g_assert_nonnull (state);
  g_assert_cmpuint (tg_seed_state_get_first_env (state), ==, first_env);
  g_assert_cmpuint (tg_seed_state_get_n_envs (state), ==, n_envs);
  return state;
}

static void
read_state (TgSeedState *state, cudaStream_t s, guint64 *seeds, guint32 *epochs)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (tg_seed_state_read (state, s, seeds, epochs, &error));
  g_assert_no_error (error);
}

/* Reads the state back and compares it with the model. */
static void
assert_state (TgSeedState *state, cudaStream_t s, const guint64 *seeds,
              const guint32 *epochs)
{
  guint n = tg_seed_state_get_n_envs (state);
  g_autofree guint64 *got_seeds = g_new (guint64, n);
  g_autofree guint32 *got_epochs = g_new (guint32, n);

  read_state (state, s, got_seeds, got_epochs);
  g_assert_cmpmem (got_seeds, n * sizeof (guint64), seeds, n * sizeof (guint64));
  g_assert_cmpmem (got_epochs, n * sizeof (guint32), epochs, n * sizeof (guint32));
}

/* Advances every env, eagerly on @s, in the state and the model. */
static void
advance_all (TgSeedState *state, cudaStream_t s, guint32 *epochs)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (tg_seed_state_advance (state, s, NULL, 0, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < tg_seed_state_get_n_envs (state); i++)
    epochs[i]++;
}

/* Records into a graph of the caller's, on @s: with @mask, an advance of
 * every env then a reset of the masked ones; else set_seeds_device(@ids,
 * @seeds).  The arrays are read at every replay. */
static cudaGraphExec_t
record_calls (TgSeedState *state, cudaStream_t s, const guint8 *mask,
              const guint32 *ids, const guint64 *seeds, guint n_ids)
{
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;

  TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeGlobal));
  if (mask != NULL)
    g_assert_true (tg_seed_state_advance (state, s, NULL, 0, &error)
                   && tg_seed_state_reset_epochs (state, s, mask, N_ENVS, &error));
  else
    g_assert_true (
        tg_seed_state_set_seeds_device (state, s, ids, seeds, n_ids, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), >, 0);
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  return exec;
}

static void
test_ordered_on_caller_stream (TgTestGpu *gpu, gconstpointer data)
{
  g_autofree guint32 *epochs = g_new (guint32, N_ENVS);
  g_autoptr (GError) error = NULL;
  TgSeedState *state;

  TG_TEST_REQUIRE_GPU ();
  state = state_new (0, N_ENVS, BASE);
  /* No synchronization anywhere: only the stream orders the read after the
   * advance, which waits behind the slow kernel. */
  TG_TEST_CUDA (tga_launch_spin (gpu->stream, SPIN_CYCLES));
  g_assert_true (tg_seed_state_advance (state, gpu->stream, NULL, 0, &error));
  g_assert_true (tg_seed_state_read (state, gpu->stream, NULL, epochs, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < N_ENVS; i++)
    g_assert_cmpuint (epochs[i], ==, 1);
  tg_seed_state_unref (state);
}

static void
assert_refused_capturing (gboolean ok, GError **error, cudaStream_t s)
{
  g_assert_false (ok);
  g_assert_error (*error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  g_assert_true (tg_stream_is_capturing (s));
  g_clear_error (error);
}

static void
test_blocking_refuse_capture (TgTestGpu *gpu, gconstpointer data)
{
  const guint id = 3;
  const guint64 seed = 42;
  cudaStream_t s = gpu->stream;
  g_autofree guint32 *epochs = g_new (guint32, N_ENVS);
  g_autoptr (GBytes) snapshot = NULL;
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  TgSeedState *state;

  TG_TEST_REQUIRE_GPU ();
  state = state_new (0, N_ENVS, BASE);
  snapshot = tg_seed_state_snapshot (state, s, &error);
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeGlobal));
  assert_refused_capturing (tg_seed_state_set_seeds (state, s, &id, &seed, 1, &error),
                            &error, s);
  assert_refused_capturing (tg_seed_state_read (state, s, NULL, epochs, &error), &error,
                            s);
  assert_refused_capturing (tg_seed_state_snapshot (state, s, &error) != NULL, &error,
                            s);
  assert_refused_capturing (tg_seed_state_restore (state, s, snapshot, &error), &error,
                            s);
  TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, 0);
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_seed_state_unref (state);
}

#define N_IDS 4u

static void
test_set_seeds_device_recorded (TgTestGpu *gpu, gconstpointer data)
{
  cudaStream_t s = gpu->stream;
  g_autofree guint64 *seeds = g_new (guint64, N_ENVS);
  g_autofree guint32 *epochs = g_new0 (guint32, N_ENVS);
  guint32 *d_ids;
  guint64 *d_seeds;
  cudaGraphExec_t exec;
  TgSeedState *state;

  TG_TEST_REQUIRE_GPU ();
  state = state_new (0, N_ENVS, BASE);
  for (guint i = 0; i < N_ENVS; i++)
    seeds[i] = tg_env_seed (BASE, i);
  d_ids = tg_test_device_alloc (N_IDS * sizeof (guint32));
  d_seeds = tg_test_device_alloc (N_IDS * sizeof (guint64));
  exec = record_calls (state, s, NULL, d_ids, d_seeds, N_IDS);
  for (guint32 r = 0; r < 3; r++)
    {
      /* The last id is out of range at every replay: skipped. */
      const guint32 ids[N_IDS]
          = { r, 17 + 5 * r, N_ENVS - 1 - r, r == 2 ? G_MAXUINT32 : N_ENVS + r };
      guint64 values[N_IDS];

      for (guint k = 0; k < N_IDS; k++)
        values[k] = G_GUINT64_CONSTANT (0xC0FFEE0000000000) + 16 * r + k;
      tg_test_upload (d_ids, ids, sizeof ids);
      tg_test_upload (d_seeds, values, sizeof values);
      /* Epochs not 0 before, so that the reset shows. */
      advance_all (state, s, epochs);
      TG_TEST_CUDA (cudaGraphLaunch (exec, s));
      for (guint k = 0; k < N_IDS; k++)
        if (ids[k] < N_ENVS)
          {
            seeds[ids[k]] = values[k];
            epochs[ids[k]] = 0;
          }
      assert_state (state, s, seeds, epochs);
    }
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  tg_test_device_free (d_ids);
  tg_test_device_free (d_seeds);
  tg_seed_state_unref (state);
}

/* The mask byte of env @i at round @r: 0, or non-zero and not only 1. */
static guint8
mask_value (guint i, guint r)
{
  return (i * 7 + r) % 5 == 0 ? (guint8)(1 + (i + r) % 251) : 0;
}

static void
test_reset_epochs_masked (TgTestGpu *gpu, gconstpointer data)
{
  cudaStream_t s = gpu->stream;
  g_autofree guint64 *seeds = g_new (guint64, N_ENVS);
  g_autofree guint32 *epochs = g_new0 (guint32, N_ENVS);
  g_autofree guint8 *mask = g_new (guint8, N_ENVS);
  g_autoptr (GError) error = NULL;
  cudaGraphExec_t exec;
  TgSeedState *state;
  guint8 *d_mask;

  TG_TEST_REQUIRE_GPU ();
  state = state_new (0, N_ENVS, BASE);
  for (guint i = 0; i < N_ENVS; i++)
    seeds[i] = tg_env_seed (BASE, i);
  d_mask = tg_test_device_alloc (N_ENVS);
  exec = record_calls (state, s, d_mask, NULL, NULL, 0);
  /* Round 0 eagerly, then replays of the recorded advance + reset, each
   * with a new mask. */
  for (guint r = 0; r < 4; r++)
    {
      for (guint i = 0; i < N_ENVS; i++)
        mask[i] = mask_value (i, r);
      tg_test_upload (d_mask, mask, N_ENVS);
      if (r == 0)
        g_assert_true (
            tg_seed_state_advance (state, s, NULL, 0, &error)
            && tg_seed_state_reset_epochs (state, s, d_mask, N_ENVS, &error));
      else
        TG_TEST_CUDA (cudaGraphLaunch (exec, s));
      g_assert_no_error (error);
      for (guint i = 0; i < N_ENVS; i++)
        epochs[i] = mask[i] != 0 ? 0 : epochs[i] + 1;
      assert_state (state, s, seeds, epochs);
    }
  g_assert_true (tg_seed_state_reset_epochs (state, s, NULL, 0, &error));
  g_assert_no_error (error);
  memset (epochs, 0, N_ENVS * sizeof (guint32));
  assert_state (state, s, seeds, epochs);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  tg_test_device_free (d_mask);
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
  shard = state_new (SHARD_FIRST, SHARD_N, BASE);
  full = tg_seed_state_new (0, FULL_N, BASE, &error);
  g_assert_no_error (error);
  read_state (full, s, seeds, NULL);
  for (guint i = 0; i < FULL_N; i++)
    g_assert_cmphex (seeds[i], ==, tg_env_seed (BASE, i));
  read_state (shard, s, seeds, NULL);
  for (guint i = 0; i < SHARD_N; i++)
    g_assert_cmphex (seeds[i], ==, tg_env_seed (BASE, SHARD_FIRST + i));

  d_mask_shard = tg_test_device_alloc (SHARD_N);
  d_mask_full = tg_test_device_alloc (FULL_N);
  d_out_shard = tg_test_device_alloc (SHARD_N * sizeof (guint64));
  d_out_full = tg_test_device_alloc (FULL_N * sizeof (guint64));
  for (guint r = 0; r < 3; r++)
    {
      for (guint i = 0; i < SHARD_N; i++)
        {
          mask_shard[i] = mask_full[SHARD_FIRST + i] = mask_value (i, r);
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
          tg_effective_seed (tg_env_seed (BASE, SHARD_FIRST + i), epochs[i]));
    }

  /* The last shard of a population of 2^32 envs. */
  last = state_new (G_MAXUINT32 - 9, 10, BASE);
  read_state (last, s, seeds, NULL);
  g_assert_cmphex (seeds[9], ==, tg_env_seed (BASE, G_MAXUINT32));

  tg_test_device_free (d_mask_shard);
  tg_test_device_free (d_mask_full);
  tg_test_device_free (d_out_shard);
  tg_test_device_free (d_out_full);
  tg_seed_state_unref (last);
  tg_seed_state_unref (full);
  tg_seed_state_unref (shard);
}

/* Refused before any CUDA call: runs without a GPU too. */
static void
test_shard_past_2_32 (void)
{
  g_autoptr (GError) error = NULL;

  g_assert_null (tg_seed_state_new_shard (0, G_MAXUINT32 - 9, 11, BASE, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
  g_clear_error (&error);
  g_assert_null (tg_seed_state_new_shard (0, G_MAXUINT32, 2, BASE, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
}

static void
assert_restore_refused (TgSeedState *state, cudaStream_t s, GBytes *snapshot)
{
  guint n = tg_seed_state_get_n_envs (state);
  g_autofree guint64 *seeds = g_new (guint64, n);
  g_autofree guint32 *epochs = g_new (guint32, n);
  g_autoptr (GError) error = NULL;

  read_state (state, s, seeds, epochs);
  g_assert_false (tg_seed_state_restore (state, s, snapshot, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  assert_state (state, s, seeds, epochs);
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
  shard = state_new (SHARD_FIRST, SHARD_N, BASE);
  advance_all (shard, s, epochs);
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
  read_state (shard, s, seeds, NULL);
  same = state_new (SHARD_FIRST, SHARD_N, ~BASE);
  g_assert_true (tg_seed_state_restore (same, s, snapshot, &error));
  g_assert_no_error (error);
  assert_state (same, s, seeds, epochs);
  /* Other envs: refused, unchanged. */
  other = state_new (SHARD_FIRST + 1, SHARD_N, BASE);
  assert_restore_refused (other, s, snapshot);

  /* Version 1 means first env 0. */
  for (guint i = 0; i < SHARD_N; i++)
    {
      seeds[i] = G_GUINT64_CONSTANT (0x0123456789ABCDEF) * (i + 1);
      epochs[i] = 3 * i + 1;
    }
  v1 = snapshot_v1 (SHARD_N, seeds, epochs);
  zero = state_new (0, SHARD_N, BASE);
  g_assert_true (tg_seed_state_restore (zero, s, v1, &error));
  g_assert_no_error (error);
  assert_state (zero, s, seeds, epochs);
  assert_restore_refused (shard, s, v1);

  tg_seed_state_unref (zero);
  tg_seed_state_unref (other);
  tg_seed_state_unref (same);
  tg_seed_state_unref (shard);
}

typedef gboolean (*MaskOp) (TgSeedState *state, cudaStream_t stream,
                            const guint8 *device_mask, gsize mask_len, GError **error);

static void
test_bad_masks (TgTestGpu *gpu, gconstpointer data)
{
  const MaskOp ops[] = { tg_seed_state_advance, tg_seed_state_reset_epochs };
  cudaStream_t s = gpu->stream;
  g_autofree guint64 *seeds = g_new (guint64, N_ENVS);
  g_autofree guint32 *epochs = g_new0 (guint32, N_ENVS);
  g_autofree guint8 *host_mask = g_malloc0 (N_ENVS);
  g_autoptr (GError) error = NULL;
  TgSeedState *state;
  guint8 *short_mask;

  TG_TEST_REQUIRE_GPU ();
  state = state_new (0, N_ENVS, BASE);
  for (guint i = 0; i < N_ENVS; i++)
    seeds[i] = tg_env_seed (BASE, i);
  advance_all (state, s, epochs);
  advance_all (state, s, epochs);
  short_mask = tg_test_device_alloc (N_ENVS / 2);
  for (guint k = 0; k < G_N_ELEMENTS (ops); k++)
    {
      g_assert_false (ops[k](state, s, host_mask, N_ENVS, &error));
      g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
      g_clear_error (&error);
      g_assert_false (ops[k](state, s, short_mask, N_ENVS, &error));
      g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
      g_clear_error (&error);
    }
  assert_state (state, s, seeds, epochs);
  tg_test_device_free (short_mask);
  tg_seed_state_unref (state);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  TG_TEST_ADD_GPU ("/api/seeds/stream/ordered-on-caller-stream",
                   test_ordered_on_caller_stream);
  TG_TEST_ADD_GPU ("/api/seeds/stream/blocking-refuse-capture",
                   test_blocking_refuse_capture);
  TG_TEST_ADD_GPU ("/api/seeds/set-seeds-device/recorded-replays",
                   test_set_seeds_device_recorded);
  TG_TEST_ADD_GPU ("/api/seeds/reset-epochs/masked-eager-and-recorded",
                   test_reset_epochs_masked);
  TG_TEST_ADD_GPU ("/api/seeds/shard/matches-full-population", test_shard_matches_full);
  g_test_add_func ("/api/seeds/shard/past-last-global-env-refused",
                   test_shard_past_2_32);
  TG_TEST_ADD_GPU ("/api/seeds/snapshot/first-env-and-version-1",
                   test_snapshot_first_env);
  TG_TEST_ADD_GPU ("/api/seeds/mask/host-or-short-refused", test_bad_masks);
  return g_test_run ();
}
