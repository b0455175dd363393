/* seeds-test-gpu.c: the seed state on a GPU.  Every case reads the state
 * back and checks it against the host, and ends checking that nothing leaked
 * and no stream is left capturing (the TgTestGpu fixture).  Every call names
 * the case's stream unless it is about TG_STREAM_AUTO. */
#include "config.h"
#include "seeds-test.h"

#include <string.h>

typedef struct
{
  guint n;
  guint64 *seeds;
  guint32 *epochs;
} Readback;

static void
readback (TgSeedState *state, cudaStream_t stream, Readback *r)
{
  g_autoptr (GError) error = NULL;

  r->n = tg_seed_state_get_n_envs (state);
  r->seeds = g_new (guint64, r->n);
  r->epochs = g_new (guint32, r->n);
  g_assert_true (tg_seed_state_read (state, stream, r->seeds, r->epochs, &error));
  g_assert_no_error (error);
}

static void
readback_clear (Readback *r)
{
  g_clear_pointer (&r->seeds, g_free);
  g_clear_pointer (&r->epochs, g_free);
}

static void
assert_unchanged (TgSeedState *state, cudaStream_t stream, const Readback *before)
{
  Readback now;

  readback (state, stream, &now);
  g_assert_cmpmem (now.seeds, now.n * 8, before->seeds, before->n * 8);
  g_assert_cmpmem (now.epochs, now.n * 4, before->epochs, before->n * 4);
  readback_clear (&now);
}

static TgSeedState *
state_new (guint n, guint64 base)
{
  g_autoptr (GError) error = NULL;
  TgSeedState *state = tg_seed_state_new (0, n, base, &error);

  g_assert_no_error (error);
  g_assert_nonnull (state);
  return state;
}

typedef TgTestGpu Fixture;

static void
test_gpu_new (Fixture *f, gconstpointer data)
{
  const guint n = 4099;
  g_autofree guint64 *explicit_seeds = g_new (guint64, n);
  g_autoptr (GError) error = NULL;
  TgSeedState *state, *copy;
  Readback r;

  TG_TEST_REQUIRE_GPU ();
  state = state_new (n, 42);
  g_assert_cmpuint (tg_seed_state_get_n_envs (state), ==, n);
  g_assert_cmpuint (tg_seed_state_get_first_env (state), ==, 0);
  g_assert_cmpint (tg_seed_state_get_device (state), ==, 0);
  g_assert_nonnull (tg_seed_state_get_seeds (state));
  g_assert_nonnull (tg_seed_state_get_epochs (state));
  g_assert_true (tg_seed_state_ref (state) == state);
  tg_seed_state_unref (state);
  readback (state, f->stream, &r);
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmphex (r.seeds[i], ==, tg_env_seed (42, i));
      g_assert_cmpuint (r.epochs[i], ==, 0);
      explicit_seeds[i] = G_GUINT64_CONSTANT (0xA5A5A5A500000000) + i * 3;
    }
  readback_clear (&r);
  tg_seed_state_unref (state);

  copy = tg_seed_state_new_from_array (0, n, explicit_seeds, &error);
  g_assert_no_error (error);
  readback (copy, f->stream, &r);
  g_assert_cmpmem (r.seeds, n * 8, explicit_seeds, n * 8);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (r.epochs[i], ==, 0);
  readback_clear (&r);
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
  Readback r;

  TG_TEST_REQUIRE_GPU ();
  state = state_new (n, 7);
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
  readback (state, stream, &r);
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
  readback_clear (&r);
  g_assert_no_error (error);

  /* TG_STREAM_AUTO is TrackGen's default stream: calls that name no stream
   * are ordered with each other there. */
  g_assert_true (tg_seed_state_reset_epochs (state, TG_STREAM_AUTO, NULL, 0, &error));
  g_assert_true (tg_seed_state_advance (state, TG_STREAM_AUTO, NULL, 0, &error));
  g_assert_no_error (error);
  readback (state, TG_STREAM_AUTO, &r);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (r.epochs[i], ==, 1);
  readback_clear (&r);

  /* A masked reset: only the envs of the last round's mask go back to 0. */
  g_assert_true (tg_seed_state_reset_epochs (state, stream, d_mask, n, &error));
  g_assert_no_error (error);
  readback (state, stream, &r);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (r.epochs[i], ==, mask[i] != 0 ? 0 : 1);
  readback_clear (&r);

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
  Readback r;

  TG_TEST_REQUIRE_GPU ();
  state = state_new (n, 0);
  for (guint32 version = 1; version <= 2; version++)
    {
      g_autoptr (GBytes) forged = tgs_snapshot_forge (n, version, seeds, epochs);

      g_assert_true (tg_seed_state_restore (state, f->stream, forged, &error));
      g_assert_true (tg_seed_state_advance (state, f->stream, NULL, 0, &error));
      g_assert_no_error (error);
      readback (state, f->stream, &r);
      g_assert_cmpmem (r.seeds, sizeof seeds, seeds, sizeof seeds);
      for (guint i = 0; i < n; i++)
        g_assert_cmpuint (r.epochs[i], ==, (guint32)(epochs[i] + 1));
      readback_clear (&r);
    }
  tg_seed_state_unref (state);
}

/* A masked advance recorded into the caller's graph, replayed 1000 times,
 * the mask made on the device from a replay counter: each epoch counts the
 * replays that set its byte. */
static void
test_gpu_advance_in_graph (Fixture *f, gconstpointer data)
{
  const guint n = (1u << 16) + 3, replays = 1000;
  g_autofree guint32 *expect = g_new0 (guint32, n);
  g_autofree guint64 *out = g_new (guint64, n);
  g_autoptr (GError) error = NULL;
  cudaStream_t stream = f->stream;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  TgSeedState *state;
  guint8 *d_mask;
  guint32 *d_counter, counter = 0;
  guint64 *d_out;
  Readback r;

  TG_TEST_REQUIRE_GPU ();
  state = state_new (n, 99);
  d_mask = tg_test_device_alloc (n);
  d_counter = tg_test_device_alloc (4);
  d_out = tg_test_device_alloc (n * 8);
  TG_TEST_CUDA (cudaDeviceSynchronize ());

  /* Global mode: any call of ours that a capture forbids would fail it. */
  TG_TEST_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeGlobal));
  TG_TEST_CUDA (tgs_launch_replay_mask (stream, d_mask, n, d_counter));
  TG_TEST_CUDA (tgt_launch_count (stream, d_counter));
  g_assert_true (tg_seed_state_advance (state, stream, d_mask, n, &error));
  g_assert_true (tg_seed_state_fill_effective (state, stream, d_out, n, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (stream, &graph));
  tg_test_assert_not_capturing (stream);
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, 4);
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));

  /* Recorded, not run. */
  readback (state, stream, &r);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (r.epochs[i], ==, 0);
  readback_clear (&r);

  for (guint k = 0; k < replays; k++)
    TG_TEST_CUDA (cudaGraphLaunch (exec, stream));
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
  for (guint k = 0; k < replays; k++)
    for (guint i = 0; i < n; i++)
      expect[i] += tgs_mask_value (i, k) != 0;

  tg_test_download (&counter, d_counter, 4);
  g_assert_cmpuint (counter, ==, replays);
  tg_test_download (out, d_out, n * 8);
  readback (state, stream, &r);
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpuint (r.epochs[i], ==, expect[i]);
      g_assert_cmphex (out[i], ==, tg_effective_seed (tg_env_seed (99, i), expect[i]));
    }
  readback_clear (&r);

  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_seed_state_unref (state);
  tg_test_device_free (d_mask);
  tg_test_device_free (d_counter);
  tg_test_device_free (d_out);
}

/* Inside a registered foreign capture TG_STREAM_AUTO records into it; a
 * refused advance, and a blocking read that would wait for the capturing
 * stream, record nothing and leave the capture usable. */
static void
test_gpu_auto_stream_in_scope (Fixture *f, gconstpointer data)
{
  const guint n = 1000;
  g_autofree guint32 *epochs = g_new (guint32, n);
  g_autoptr (GError) error = NULL;
  cudaStream_t stream = f->stream;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  TgCaptureScope *scope;
  TgSeedState *state;
  guint8 *d_mask;
  Readback r;

  TG_TEST_REQUIRE_GPU ();
  state = state_new (n, 3);
  d_mask = tg_test_device_alloc (n);
  TG_TEST_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal));
  scope = tg_capture_scope_begin (stream, cudaStreamCaptureModeThreadLocal, &error);
  g_assert_no_error (error);
  g_assert_false (tg_seed_state_advance (state, TG_STREAM_AUTO, d_mask, n - 1, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  g_clear_error (&error);
  g_assert_false (tg_seed_state_read (state, TG_STREAM_AUTO, NULL, epochs, &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  g_clear_error (&error);
  g_assert_true (tg_seed_state_advance (state, TG_STREAM_AUTO, NULL, 0, &error));
  g_assert_no_error (error);
  g_assert_true (tg_capture_scope_end (scope, &error));
  tg_capture_scope_free (scope);
  TG_TEST_CUDA (cudaStreamEndCapture (stream, &graph));
  tg_test_assert_not_capturing (stream);
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, 1);
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  TG_TEST_CUDA (cudaGraphLaunch (exec, stream));
  TG_TEST_CUDA (cudaGraphLaunch (exec, stream));
  readback (state, stream, &r);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (r.epochs[i], ==, 2);
  readback_clear (&r);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_seed_state_unref (state);
  tg_test_device_free (d_mask);
}

static void
test_gpu_set_seeds (Fixture *f, gconstpointer data)
{
  const guint n = 1000, ids[] = { 999, 0, 500 };
  const guint64 values[] = { 11, 22, 33 };
  g_autoptr (GError) error = NULL;
  TgSeedState *state;
  Readback r;

  TG_TEST_REQUIRE_GPU ();
  state = state_new (n, 5);
  for (guint k = 0; k < 3; k++)
    g_assert_true (tg_seed_state_advance (state, f->stream, NULL, 0, &error));
  g_assert_true (tg_seed_state_set_seeds (state, f->stream, ids, values,
                                          G_N_ELEMENTS (ids), &error));
  g_assert_true (tg_seed_state_set_seeds (state, f->stream, NULL, NULL, 0, &error));
  g_assert_no_error (error);
  readback (state, f->stream, &r);
  for (guint i = 0; i < n; i++)
    {
      guint k = i == 999 ? 0 : i == 0 ? 1 : i == 500 ? 2 : G_MAXUINT;
      g_assert_cmphex (r.seeds[i], ==, k != G_MAXUINT ? values[k] : tg_env_seed (5, i));
      g_assert_cmpuint (r.epochs[i], ==, k != G_MAXUINT ? 0 : 3);
    }
  readback_clear (&r);
  tg_seed_state_unref (state);
}

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
  Readback before;
  const guint8 *bytes;
  guint32 version, n_envs, first_env;

  TG_TEST_REQUIRE_GPU ();
  state = state_new (n, 1234);
  d_mask = tg_test_device_alloc (n);
  for (guint i = 0; i < n; i++)
    mask[i] = tgs_mask_value (i, 5);
  tg_test_upload (d_mask, mask, n);
  g_assert_true (tg_seed_state_advance (state, stream, NULL, 0, &error));
  g_assert_true (tg_seed_state_advance (state, stream, d_mask, n, &error));
  g_assert_true (tg_seed_state_set_seeds (state, stream, ids, values, 2, &error));
  g_assert_no_error (error);
  readback (state, stream, &before);

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
  assert_unchanged (state, stream, &before);
  other = state_new (n, 1);
  g_assert_true (tg_seed_state_restore (other, stream, snap, &error));
  g_assert_no_error (error);
  assert_unchanged (other, stream, &before);

  readback_clear (&before);
  tg_seed_state_unref (other);
  tg_seed_state_unref (state);
  tg_test_device_free (d_mask);
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
  Readback before;
  gsize size;

  TG_TEST_REQUIRE_GPU ();
  state = state_new (n, 77);
  d_mask = tg_test_device_alloc (n + 1);
  d_out = tg_test_device_alloc (n * 8);
  TG_TEST_CUDA (cudaMemset (d_mask, 1, n / 2));
  TG_TEST_CUDA (cudaDeviceSynchronize ());
  g_assert_true (tg_seed_state_advance (state, stream, NULL, 0, &error));
  g_assert_true (tg_seed_state_advance (state, stream, d_mask, n, &error));
  good = tg_seed_state_snapshot (state, stream, &error);
  g_assert_no_error (error);
  readback (state, stream, &before);

#define REFUSED(call, code)                                                            \
  G_STMT_START                                                                         \
  {                                                                                    \
    g_assert_false (call);                                                             \
    g_assert_error (error, TG_ARGUMENT_ERROR, code);                                   \
    g_clear_error (&error);                                                            \
    assert_unchanged (state, stream, &before);                                         \
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

  g_assert_true (tg_seed_state_advance (state, stream, NULL, 0, &error));
  g_assert_no_error (error);
  readback_clear (&before);
  readback (state, stream, &before);
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

  readback_clear (&before);
  tg_seed_state_unref (state);
  tg_test_device_free (d_mask);
  tg_test_device_free (d_out);
}

void
tgs_add_gpu_tests (void)
{
  TG_TEST_ADD_GPU ("/seeds/gpu/new", test_gpu_new);
  TG_TEST_ADD_GPU ("/seeds/gpu/host-device-equal", test_gpu_host_device_equal);
  TG_TEST_ADD_GPU ("/seeds/gpu/advance-and-fill", test_gpu_advance_and_fill);
  TG_TEST_ADD_GPU ("/seeds/gpu/epoch-wraps", test_gpu_epoch_wraps);
  TG_TEST_ADD_GPU ("/seeds/gpu/advance-in-graph", test_gpu_advance_in_graph);
  TG_TEST_ADD_GPU ("/seeds/gpu/auto-stream-in-scope", test_gpu_auto_stream_in_scope);
  TG_TEST_ADD_GPU ("/seeds/gpu/set-seeds-resets-epochs", test_gpu_set_seeds);
  TG_TEST_ADD_GPU ("/seeds/gpu/snapshot-round-trip", test_gpu_snapshot_round_trip);
  TG_TEST_ADD_GPU ("/seeds/gpu/bad-inputs-leave-state", test_gpu_bad_inputs);
}
