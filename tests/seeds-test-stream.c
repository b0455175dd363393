/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-test-stream.c: seed calls on the caller's stream: ordered there,
 * refused while it captures when they would block, recorded into its graph
 * and replayed (advances, resets, reseeding), and recorded into a
 * registered foreign capture for TG_STREAM_AUTO.  Every case reads the
 * state back and compares it with a host model. */
#include "config.h"
#include "seeds-test.h"

#include <string.h>

typedef TgTestGpu Fixture;

/* About 0.1 s of one thread spinning on a current GPU. */
#define SPIN_CYCLES G_GUINT64_CONSTANT (200000000)

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
                   && tg_seed_state_reset_epochs (state, s, mask, TGS_N_ENVS, &error));
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
  g_autofree guint32 *epochs = g_new (guint32, TGS_N_ENVS);
  g_autoptr (GError) error = NULL;
  TgSeedState *state;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_shard_new (0, TGS_N_ENVS, TGS_BASE);
  /* No synchronization anywhere: only the stream orders the read after the
   * advance, which waits behind the slow kernel. */
  TG_TEST_CUDA (tgs_launch_spin (gpu->stream, SPIN_CYCLES));
  g_assert_true (tg_seed_state_advance (state, gpu->stream, NULL, 0, &error));
  g_assert_true (tg_seed_state_read (state, gpu->stream, NULL, epochs, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < TGS_N_ENVS; i++)
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
  g_autofree guint32 *epochs = g_new (guint32, TGS_N_ENVS);
  g_autoptr (GBytes) snapshot = NULL;
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  TgSeedState *state;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_shard_new (0, TGS_N_ENVS, TGS_BASE);
  snapshot = tg_seed_state_snapshot (state, s, &error);
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeGlobal));
  assert_refused_capturing (tg_seed_state_set_seeds (state, s, &id, &seed, 1, &error),
                            &error, s);
  assert_refused_capturing (tg_seed_state_read (state, s, NULL, epochs, &error), &error,
                            s);
  assert_refused_capturing (tg_seed_state_write (state, s, NULL, epochs, &error),
                            &error, s);
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

/* The enqueued calls on the legacy stream while a blocking stream captures
 * (in thread-local and global mode): their launch would invalidate that
 * capture, so each is refused as a producer run is, and the capture goes
 * on with its nodes.  On a stream whose capture an earlier call broke, each
 * is refused with TG_CAPTURE_ERROR_FAILED. */
static void
test_legacy_stream_joined_to_capture (TgTestGpu *gpu, gconstpointer data)
{
  const enum cudaStreamCaptureMode modes[]
      = { cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeGlobal };
  guint8 *mask;
  guint64 *out;
  guint32 *ids, *counter;
  TgSeedState *state;
  TgsReadback before;
  cudaStream_t blocking;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_state_new (TGS_N_ENVS, TGS_BASE);
  mask = tg_test_device_alloc (TGS_N_ENVS);
  out = tg_test_device_alloc (TGS_N_ENVS * sizeof (guint64));
  ids = tg_test_device_alloc (sizeof (guint32) + sizeof (guint64));
  counter = tg_test_device_alloc (sizeof (guint32));
  TG_TEST_CUDA (cudaStreamCreate (&blocking));
  tgs_readback (state, gpu->stream, &before);
  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    {
      cudaGraph_t graph = NULL;
      gsize nodes;

      TG_TEST_CUDA (cudaStreamBeginCapture (blocking, modes[m]));
      TG_TEST_CUDA (tgt_launch_count (blocking, counter));
      for (guint call = 0; call < 4; call++)
        {
          g_autoptr (GError) error = NULL;
          gboolean ok
              = call == 0
                    ? tg_seed_state_advance (state, NULL, mask, TGS_N_ENVS, &error)
                : call == 1 ? tg_seed_state_reset_epochs (state, NULL, NULL, 0, &error)
                : call == 2 ? tg_seed_state_fill_effective (state, NULL, out,
                                                            TGS_N_ENVS, &error)
                            : tg_seed_state_set_seeds_device (
                                state, NULL, ids, (guint64 *)(ids + 2), 1, &error);

          g_assert_false (ok);
          g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
          g_assert_true (tg_stream_is_capturing (blocking));
        }
      TG_TEST_CUDA (cudaStreamEndCapture (blocking, &graph));
      nodes = tg_test_graph_n_nodes (graph);
      g_assert_cmpuint (nodes, ==, 1);
      TG_TEST_CUDA (cudaGraphDestroy (graph));
    }
  /* An invalidated capture: the state's calls are refused as FAILED. */
  TG_TEST_CUDA (cudaStreamBeginCapture (blocking, cudaStreamCaptureModeGlobal));
  g_assert_cmpint (cudaStreamSynchronize (blocking), !=, cudaSuccess);
  (void)cudaGetLastError ();
  {
    g_autoptr (GError) error = NULL;
    cudaGraph_t graph = NULL;

    g_assert_false (tg_seed_state_advance (state, blocking, NULL, 0, &error));
    g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED);
    g_assert_cmpint (cudaStreamEndCapture (blocking, &graph), ==,
                     cudaErrorStreamCaptureInvalidated);
    (void)cudaGetLastError ();
  }
  tgs_assert_unchanged (state, gpu->stream, &before);
  tgs_readback_clear (&before);
  TG_TEST_CUDA (cudaStreamDestroy (blocking));
  tg_test_device_free (counter);
  tg_test_device_free (ids);
  tg_test_device_free (out);
  tg_test_device_free (mask);
  tg_seed_state_unref (state);
}

static void
test_set_seeds_device_recorded (TgTestGpu *gpu, gconstpointer data)
{
  cudaStream_t s = gpu->stream;
  g_autofree guint64 *seeds = g_new (guint64, TGS_N_ENVS);
  g_autofree guint32 *epochs = g_new0 (guint32, TGS_N_ENVS);
  guint32 *d_ids;
  guint64 *d_seeds;
  cudaGraphExec_t exec;
  TgSeedState *state;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_shard_new (0, TGS_N_ENVS, TGS_BASE);
  for (guint i = 0; i < TGS_N_ENVS; i++)
    seeds[i] = tg_env_seed (TGS_BASE, i);
  d_ids = tg_test_device_alloc (N_IDS * sizeof (guint32));
  d_seeds = tg_test_device_alloc (N_IDS * sizeof (guint64));
  exec = record_calls (state, s, NULL, d_ids, d_seeds, N_IDS);
  for (guint32 r = 0; r < 3; r++)
    {
      /* The last id is out of range at every replay: skipped. */
      const guint32 ids[N_IDS] = { r, 17 + 5 * r, TGS_N_ENVS - 1 - r,
                                   r == 2 ? G_MAXUINT32 : TGS_N_ENVS + r };
      guint64 values[N_IDS];

      for (guint k = 0; k < N_IDS; k++)
        values[k] = G_GUINT64_CONSTANT (0xC0FFEE0000000000) + 16 * r + k;
      tg_test_upload (d_ids, ids, sizeof ids);
      tg_test_upload (d_seeds, values, sizeof values);
      /* Epochs not 0 before, so that the reset shows. */
      tgs_advance_all (state, s, epochs);
      TG_TEST_CUDA (cudaGraphLaunch (exec, s));
      for (guint k = 0; k < N_IDS; k++)
        if (ids[k] < TGS_N_ENVS)
          {
            seeds[ids[k]] = values[k];
            epochs[ids[k]] = 0;
          }
      tgs_assert_state (state, s, seeds, epochs);
    }
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  tg_test_device_free (d_ids);
  tg_test_device_free (d_seeds);
  tg_seed_state_unref (state);
}

static void
test_reset_epochs_masked (TgTestGpu *gpu, gconstpointer data)
{
  cudaStream_t s = gpu->stream;
  g_autofree guint64 *seeds = g_new (guint64, TGS_N_ENVS);
  g_autofree guint32 *epochs = g_new0 (guint32, TGS_N_ENVS);
  g_autofree guint8 *mask = g_new (guint8, TGS_N_ENVS);
  g_autoptr (GError) error = NULL;
  cudaGraphExec_t exec;
  TgSeedState *state;
  guint8 *d_mask;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_shard_new (0, TGS_N_ENVS, TGS_BASE);
  for (guint i = 0; i < TGS_N_ENVS; i++)
    seeds[i] = tg_env_seed (TGS_BASE, i);
  d_mask = tg_test_device_alloc (TGS_N_ENVS);
  exec = record_calls (state, s, d_mask, NULL, NULL, 0);
  /* Round 0 eagerly, then replays of the recorded advance + reset, each
   * with a new mask. */
  for (guint r = 0; r < 4; r++)
    {
      for (guint i = 0; i < TGS_N_ENVS; i++)
        mask[i] = tgs_round_mask (i, r);
      tg_test_upload (d_mask, mask, TGS_N_ENVS);
      if (r == 0)
        g_assert_true (
            tg_seed_state_advance (state, s, NULL, 0, &error)
            && tg_seed_state_reset_epochs (state, s, d_mask, TGS_N_ENVS, &error));
      else
        TG_TEST_CUDA (cudaGraphLaunch (exec, s));
      g_assert_no_error (error);
      for (guint i = 0; i < TGS_N_ENVS; i++)
        epochs[i] = mask[i] != 0 ? 0 : epochs[i] + 1;
      tgs_assert_state (state, s, seeds, epochs);
    }
  g_assert_true (tg_seed_state_reset_epochs (state, s, NULL, 0, &error));
  g_assert_no_error (error);
  memset (epochs, 0, TGS_N_ENVS * sizeof (guint32));
  tgs_assert_state (state, s, seeds, epochs);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  tg_test_device_free (d_mask);
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
  TgsReadback r;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_state_new (n, 99);
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
  tgs_readback (state, stream, &r);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (r.epochs[i], ==, 0);
  tgs_readback_clear (&r);

  for (guint k = 0; k < replays; k++)
    TG_TEST_CUDA (cudaGraphLaunch (exec, stream));
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
  for (guint k = 0; k < replays; k++)
    for (guint i = 0; i < n; i++)
      expect[i] += tgs_mask_value (i, k) != 0;

  tg_test_download (&counter, d_counter, 4);
  g_assert_cmpuint (counter, ==, replays);
  tg_test_download (out, d_out, n * 8);
  tgs_readback (state, stream, &r);
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpuint (r.epochs[i], ==, expect[i]);
      g_assert_cmphex (out[i], ==, tg_effective_seed (tg_env_seed (99, i), expect[i]));
    }
  tgs_readback_clear (&r);

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
  TgsReadback r;

  TG_TEST_REQUIRE_GPU ();
  state = tgs_state_new (n, 3);
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
  tgs_readback (state, stream, &r);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (r.epochs[i], ==, 2);
  tgs_readback_clear (&r);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_seed_state_unref (state);
  tg_test_device_free (d_mask);
}

void
tgs_add_stream_tests (void)
{
  TG_TEST_ADD_GPU ("/seeds/stream/ordered-on-caller-stream",
                   test_ordered_on_caller_stream);
  TG_TEST_ADD_GPU ("/seeds/stream/legacy-joined-to-capture-refused",
                   test_legacy_stream_joined_to_capture);
  TG_TEST_ADD_GPU ("/seeds/stream/blocking-refuse-capture",
                   test_blocking_refuse_capture);
  TG_TEST_ADD_GPU ("/seeds/stream/auto-in-registered-scope",
                   test_gpu_auto_stream_in_scope);
  TG_TEST_ADD_GPU ("/seeds/advance/recorded-in-graph", test_gpu_advance_in_graph);
  TG_TEST_ADD_GPU ("/seeds/set-seeds/device-recorded-replays",
                   test_set_seeds_device_recorded);
  TG_TEST_ADD_GPU ("/seeds/reset-epochs/masked-eager-and-recorded",
                   test_reset_epochs_masked);
}
