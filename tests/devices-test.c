/* SPDX-License-Identifier: Apache-2.0 */
/* devices-test.c: two GPUs at once.  Producers of device 0 and device 1 run
 * concurrently from several threads under every policy with the results of
 * one device; every device mismatch is refused before anything runs or is
 * recorded; sharded seeds generate what one state of all envs does.  Each
 * case skips unless the process sees two devices. */
#include "config.h"
#include "tg-test.h"

#define N 4096
#define CALLS 50
#define THREADS_PER_DEVICE 2

typedef TgTestGpu Fixture;

/* Skips without two devices; else makes TrackGen's default stream of device
 * 1 (kept for the process, like device 0's) before the leak snapshot. */
static gboolean
two_devices (Fixture *f)
{
  int count = 0;

  if (!tg_test_have_gpu ())
    {
      g_test_skip ("no CUDA device");
      return FALSE;
    }
  if (cudaGetDeviceCount (&count) != cudaSuccess || count < 2)
    {
      (void)cudaGetLastError ();
      g_test_skip ("needs 2 CUDA devices");
      return FALSE;
    }
  g_assert_nonnull (tg_default_stream (1, NULL));
  tg_test_live_snapshot (&f->live);
  return TRUE;
}

#define REQUIRE_TWO_DEVICES(f)                                                         \
  G_STMT_START                                                                         \
  {                                                                                    \
    if (!two_devices (f))                                                              \
      return;                                                                          \
  }                                                                                    \
  G_STMT_END

static gboolean
seed_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (tgt_launch_seed (tg_launch_get_stream (launch),
                                            tg_launch_get_binding (launch, "out"), N,
                                            tg_launch_get_binding (launch, "param")),
                           error);
}

static gboolean
mix_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (tgt_launch_mix (tg_launch_get_stream (launch),
                                           tg_launch_get_binding (launch, "out"), N, 7),
                           error);
}

/* out = mix(hash(i, *param)) on @device, with its own buffers. */
typedef struct
{
  int device;
  cudaStream_t stream;
  guint32 *out, *param;
  TgProducer *producer;
} Worker;

static void
with_device (int device)
{
  TG_TEST_CUDA (cudaSetDevice (device));
}

static void
worker_init (Worker *w, int device)
{
  g_autoptr (GError) error = NULL;
  guint s;

  w->device = device;
  with_device (device);
  w->stream = tg_test_stream_new ();
  w->out = tg_test_device_alloc (N * sizeof (guint32));
  w->param = tg_test_device_alloc (sizeof (guint32));
  with_device (0);
  w->producer = tg_producer_new ("worker", device);
  s = tg_producer_add_device_stage (w->producer, "seed", TG_STAGE_CAPTURE_SAFE,
                                    seed_stage, NULL, NULL, NULL);
  tg_producer_declare_binding (w->producer, s, "out", N * sizeof (guint32), NULL);
  tg_producer_declare_binding (w->producer, s, "param", sizeof (guint32), NULL);
  s = tg_producer_add_device_stage (w->producer, "mix", TG_STAGE_CAPTURE_SAFE,
                                    mix_stage, NULL, NULL, NULL);
  tg_producer_declare_binding (w->producer, s, "out", N * sizeof (guint32), NULL);
  g_assert_true (
      tg_producer_bind (w->producer, "out", w->out, N * sizeof (guint32), &error));
  g_assert_true (
      tg_producer_bind (w->producer, "param", w->param, sizeof (guint32), &error));
  g_assert_no_error (error);
}

static void
worker_clear (Worker *w)
{
  g_clear_pointer (&w->producer, tg_producer_unref);
  with_device (w->device);
  TG_TEST_CUDA (cudaStreamSynchronize (w->stream));
  TG_TEST_CUDA (cudaStreamDestroy (w->stream));
  tg_test_device_free (w->out);
  tg_test_device_free (w->param);
  with_device (0);
}

static void
expected (guint32 param, guint32 *out)
{
  for (guint32 i = 0; i < N; i++)
    {
      guint32 x = tgt_hash (i, param);
      out[i] = x * 7 + ((x >> 7) ^ i);
    }
}

/* Runs @w's producer CALLS times under @policy (RECORD: into a step graph of
 * the worker's device, replayed), each call with its own param, checking
 * every output and that the thread's current device never moved. */
static gpointer
worker_main (gpointer data)
{
  Worker *w = data;
  g_autofree guint32 *host = g_new (guint32, N), *want = g_new (guint32, N);
  cudaGraphExec_t step = NULL;
  int current = -1;

  /* The thread's current device is the other one: every call must restore it. */
  with_device (1 - w->device);
  for (guint call = 0; call < CALLS; call++)
    {
      TgPolicy policy = (TgPolicy)(TG_POLICY_EAGER + call % 3);
      guint32 param = 1000 * (guint32)w->device + call;
      g_autoptr (GError) error = NULL;

      TG_TEST_CUDA (cudaMemcpyAsync (w->param, &param, sizeof param,
                                     cudaMemcpyHostToDevice, w->stream));
      TG_TEST_CUDA (cudaStreamSynchronize (w->stream));
      if (policy == TG_POLICY_RECORD && step == NULL)
        {
          cudaGraph_t graph = NULL;
          TG_TEST_CUDA (
              cudaStreamBeginCapture (w->stream, cudaStreamCaptureModeThreadLocal));
          g_assert_true (tg_producer_run (w->producer, w->stream, TG_POLICY_RECORD,
                                          tg_unconditional (), &error));
          TG_TEST_CUDA (cudaStreamEndCapture (w->stream, &graph));
          with_device (w->device);
          TG_TEST_CUDA (cudaGraphInstantiate (&step, graph, 0));
          with_device (1 - w->device);
          TG_TEST_CUDA (cudaGraphDestroy (graph));
        }
      if (policy == TG_POLICY_RECORD)
        TG_TEST_CUDA (cudaGraphLaunch (step, w->stream));
      else
        g_assert_true (tg_producer_run (w->producer, w->stream, policy,
                                        tg_unconditional (), &error));
      g_assert_no_error (error);
      TG_TEST_CUDA (cudaGetDevice (&current));
      g_assert_cmpint (current, ==, 1 - w->device);
      TG_TEST_CUDA (cudaMemcpyAsync (host, w->out, N * sizeof (guint32),
                                     cudaMemcpyDeviceToHost, w->stream));
      TG_TEST_CUDA (cudaStreamSynchronize (w->stream));
      expected (param, want);
      g_assert_cmpmem (host, N * sizeof (guint32), want, N * sizeof (guint32));
    }
  if (step != NULL)
    TG_TEST_CUDA (cudaGraphExecDestroy (step));
  return NULL;
}

static void
test_concurrent (Fixture *f, gconstpointer data)
{
  Worker workers[2 * THREADS_PER_DEVICE];
  GThread *threads[G_N_ELEMENTS (workers)];
  cudaStream_t def;
  int device = -1;

  REQUIRE_TWO_DEVICES (f);
  for (guint i = 0; i < G_N_ELEMENTS (workers); i++)
    worker_init (&workers[i], i % 2);
  for (guint i = 0; i < G_N_ELEMENTS (workers); i++)
    threads[i] = g_thread_new ("trackgen-device", worker_main, &workers[i]);
  for (guint i = 0; i < G_N_ELEMENTS (workers); i++)
    g_thread_join (threads[i]);
  for (guint i = 0; i < G_N_ELEMENTS (workers); i++)
    worker_clear (&workers[i]);

  /* TrackGen's default streams live on their devices. */
  for (int d = 0; d < 2; d++)
    {
      g_assert_nonnull (def = tg_default_stream (d, NULL));
      TG_TEST_CUDA (cudaStreamGetDevice (def, &device));
      g_assert_cmpint (device, ==, d);
    }
}

/* ------------------------------------------------------------------------ */
/* Every mismatch refused with DEVICE_MISMATCH before anything happens.      */

static gboolean
advance_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_seed_state_advance (data, tg_launch_get_stream (launch), NULL, 0, error);
}

static void
assert_mismatch (GError **error)
{
  g_assert_error (*error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_DEVICE_MISMATCH);
  g_test_message ("refused: %s", (*error)->message);
  g_clear_error (error);
}

static void
test_mismatches (Fixture *f, gconstpointer data)
{
  Worker w;
  cudaStream_t other;
  cudaGraph_t graph = NULL;
  TgSeedState *state0, *state1;
  TgProducer *advancer;
  TgCaptureScope *scope;
  g_autofree guint32 *zeros = g_new0 (guint32, N), *host = g_new (guint32, N);
  guint8 *mask1;
  guint64 *out1;
  guint32 *ids1;
  guint32 epochs[16];
  enum cudaStreamCaptureStatus status;
  gsize before;
  GError *error = NULL;

  REQUIRE_TWO_DEVICES (f);
  worker_init (&w, 0);
  with_device (1);
  other = tg_test_stream_new ();
  mask1 = tg_test_device_alloc (16);
  out1 = tg_test_device_alloc (16 * sizeof (guint64));
  ids1 = tg_test_device_alloc (16 * sizeof (guint32));
  with_device (0);

  /* A stream of the other device, idle. */
  g_assert_false (
      tg_producer_run (w.producer, other, TG_POLICY_AUTO, tg_unconditional (), &error));
  assert_mismatch (&error);
  /* Bound. */
  g_assert_false (tg_producer_set_stream (w.producer, other, &error));
  assert_mismatch (&error);
  /* Device memory of the other device in a binding. */
  g_assert_false (tg_producer_bind (w.producer, "out", out1, 16, &error));
  assert_mismatch (&error);

  /* A capturing stream of the other device: refused, and not one node added. */
  with_device (1);
  TG_TEST_CUDA (cudaStreamBeginCapture (other, cudaStreamCaptureModeGlobal));
  TG_TEST_CUDA (tgt_launch_count (other, ids1));
  TG_TEST_CUDA (
      cudaStreamGetCaptureInfo (other, &status, NULL, &graph, NULL, NULL, NULL));
  before = tg_test_graph_n_nodes (graph);
  with_device (0);
  g_assert_false (tg_producer_run (w.producer, other, TG_POLICY_RECORD,
                                   tg_unconditional (), &error));
  assert_mismatch (&error);
  /* A registered capture of the other device. */
  scope = tg_capture_scope_begin (other, cudaStreamCaptureModeGlobal, &error);
  g_assert_no_error (error);
  g_assert_false (tg_producer_run (w.producer, TG_STREAM_AUTO, TG_POLICY_AUTO,
                                   tg_unconditional (), &error));
  assert_mismatch (&error);
  g_assert_true (tg_capture_scope_end (scope, &error));
  tg_capture_scope_free (scope);
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, before);
  g_assert_true (tg_stream_is_capturing (other));
  with_device (1);
  TG_TEST_CUDA (cudaStreamEndCapture (other, &graph));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  with_device (0);

  /* Seeds calls given device memory of the other device. */
  state0 = tg_seed_state_new (0, 16, 5, &error);
  g_assert_no_error (error);
  g_assert_false (tg_seed_state_advance (state0, w.stream, mask1, 16, &error));
  assert_mismatch (&error);
  g_assert_false (tg_seed_state_reset_epochs (state0, w.stream, mask1, 16, &error));
  assert_mismatch (&error);
  g_assert_false (tg_seed_state_fill_effective (state0, w.stream, out1, 16, &error));
  assert_mismatch (&error);
  g_assert_false (
      tg_seed_state_set_seeds_device (state0, w.stream, ids1, out1, 16, &error));
  assert_mismatch (&error);
  g_assert_true (tg_seed_state_read (state0, w.stream, NULL, epochs, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < 16; i++)
    g_assert_cmpuint (epochs[i], ==, 0);
  /* A seed state of the other device used by a producer's stage. */
  state1 = tg_seed_state_new (1, 16, 5, &error);
  g_assert_no_error (error);
  advancer = tg_producer_new ("advancer", 0);
  tg_producer_add_device_stage (advancer, "advance", TG_STAGE_CAPTURE_SAFE,
                                advance_stage, state1, NULL, NULL);
  g_assert_false (tg_producer_run (advancer, w.stream, TG_POLICY_EAGER,
                                   tg_unconditional (), &error));
  assert_mismatch (&error);
  g_assert_true (tg_seed_state_read (state1, other, NULL, epochs, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < 16; i++)
    g_assert_cmpuint (epochs[i], ==, 0);

  /* Nothing ran: the worker's output is untouched. */
  tg_test_download (host, w.out, N * sizeof (guint32));
  g_assert_cmpmem (host, N * sizeof (guint32), zeros, N * sizeof (guint32));

  tg_producer_unref (advancer);
  tg_seed_state_unref (state0);
  tg_seed_state_unref (state1);
  worker_clear (&w);
  with_device (1);
  TG_TEST_CUDA (cudaStreamDestroy (other));
  tg_test_device_free (mask1);
  tg_test_device_free (out1);
  tg_test_device_free (ids1);
  with_device (0);
}

/* ------------------------------------------------------------------------ */
/* Sharded seeds: the same effective seeds on one device or two.            */

#define ENVS 1000

static void
effective_after (TgSeedState *state, cudaStream_t stream, guint64 *out)
{
  guint n = tg_seed_state_get_n_envs (state),
        first = tg_seed_state_get_first_env (state);
  g_autofree guint8 *mask = g_new (guint8, n);
  guint8 *dmask;
  guint64 *dout;
  g_autoptr (GError) error = NULL;

  with_device (tg_seed_state_get_device (state));
  dmask = tg_test_device_alloc (n);
  dout = tg_test_device_alloc (n * sizeof (guint64));
  /* Global env e advances (e % 3) times: the same pattern however sharded. */
  for (guint round = 0; round < 2; round++)
    {
      for (guint i = 0; i < n; i++)
        mask[i] = (first + i) % 3 > round;
      TG_TEST_CUDA (cudaMemcpyAsync (dmask, mask, n, cudaMemcpyHostToDevice, stream));
      g_assert_true (tg_seed_state_advance (state, stream, dmask, n, &error));
    }
  g_assert_true (tg_seed_state_fill_effective (state, stream, dout, n, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaMemcpyAsync (out, dout, n * sizeof (guint64),
                                 cudaMemcpyDeviceToHost, stream));
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
  tg_test_device_free (dmask);
  tg_test_device_free (dout);
  with_device (0);
}

static void
test_sharded_seeds (Fixture *f, gconstpointer data)
{
  const guint64 base = G_GUINT64_CONSTANT (0x5eed);
  const guint split = 377;
  g_autofree guint64 *one = g_new (guint64, ENVS), *two = g_new (guint64, ENVS);
  g_autoptr (GError) error = NULL;
  TgSeedState *all, *lo, *hi;
  cudaStream_t s1;

  REQUIRE_TWO_DEVICES (f);
  with_device (1);
  s1 = tg_test_stream_new ();
  with_device (0);
  all = tg_seed_state_new (0, ENVS, base, &error);
  lo = tg_seed_state_new_shard (0, 0, split, base, &error);
  hi = tg_seed_state_new_shard (1, split, ENVS - split, base, &error);
  g_assert_no_error (error);
  effective_after (all, f->stream, one);
  effective_after (lo, f->stream, two);
  effective_after (hi, s1, two + split);
  g_assert_cmpmem (one, ENVS * sizeof (guint64), two, ENVS * sizeof (guint64));
  for (guint e = 0; e < ENVS; e += 111)
    g_assert_cmpuint (one[e], ==, tg_effective_seed (tg_env_seed (base, e), e % 3));
  tg_seed_state_unref (all);
  tg_seed_state_unref (lo);
  tg_seed_state_unref (hi);
  with_device (1);
  TG_TEST_CUDA (cudaStreamDestroy (s1));
  with_device (0);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  TG_TEST_ADD_GPU ("/devices/concurrent/every-policy-both-devices", test_concurrent);
  TG_TEST_ADD_GPU ("/devices/mismatch/refused-before-anything", test_mismatches);
  TG_TEST_ADD_GPU ("/devices/seeds/sharded-equals-one-state", test_sharded_seeds);
  return g_test_run ();
}
