/* SPDX-License-Identifier: Apache-2.0 */
/* check-test.c: checked mode.  With it on, a stage's work that escapes the
 * capture it runs in (a kernel on another stream, a copy on the legacy
 * stream) is refused under REPLAY and RECORD, naming the stage, the call,
 * the kernel and the stream (also when that stream captures into another
 * graph, the caller's own included), with the caller's capture intact (but
 * for work that escaped into it, which stays, said so), no stream left
 * capturing, and
 * the next call working; with it off the same stage
 * replays stale results silently, which is what proves the check is what
 * catches it.  Under EAGER unjoined work on another stream is an error too.
 * Turning the mode on where CUPTI cannot be loaded is a clear error, and
 * with TG_CHECK=1 a checked stage then fails with it rather than run. */
#include "config.h"
#include "tg-test.h"

#include <cuda.h>
#include <string.h>

#define N 1024

typedef enum
{
  ON_STAGE,  /* seed on the stage's stream: right */
  ON_SIDE,   /* seed on another stream, not joined: escapes */
  ON_LEGACY, /* copy src to out on the legacy stream: escapes */
  ON_OLD_ABI, /* copy src to out on another stream, CUDA 12.8's form: escapes */
  ON_CALLER, /* seed on the caller's stream, capturing under RECORD: escapes */
  FORKED,    /* seed on another stream forked from the stage's and joined: right */
} Where;

typedef struct
{
  TgTestGpu gpu;
  guint32 *out, *param, *src; /* device: N, 1, N */
  cudaStream_t side;          /* a non-blocking stream of the test's */
  cudaEvent_t fork, join;
  Where where;
  TgProducer *producer;
  gboolean checks; /* tg_get_checks() before the case, restored after */
} Fixture;

/* Copies src to out on the test's other stream through CUDA 12.8's
 * cuMemcpyBatchAsync (the form Warp 1.19 calls), reached as a library built
 * then reaches it (the driver's entry point of that version): CUPTI reports
 * it under its own id, not the current form's. */
static gboolean
copy_batch_old_abi (Fixture *f, GError **error)
{
#if CUDART_VERSION >= 12080
  CUresult (*copy) (CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *,
                    size_t *, size_t, size_t *, CUstream)
      = NULL;
  enum cudaDriverEntryPointQueryResult found;
  CUdeviceptr dst = (CUdeviceptr)f->out, src = (CUdeviceptr)f->src;
  size_t size = N * sizeof (guint32), first = 0, failed = 0;
  CUmemcpyAttributes attr = { .srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM };

  if (!tg_test_launched (cudaGetDriverEntryPointByVersion ("cuMemcpyBatchAsync",
                                                          (void **)&copy, 12080,
                                                          cudaEnableDefault, &found),
                         error))
    return FALSE;
  g_assert_cmpint (found, ==, cudaDriverEntryPointSuccess);
  return tg_test_launched (copy (&dst, &src, &size, 1, &attr, &first, 1, &failed,
                                 (CUstream)f->side)
                                   == CUDA_SUCCESS
                               ? cudaSuccess
                               : cudaErrorUnknown,
                           error);
#else
  (void)f;
  return tg_test_launched (cudaErrorNotSupported, error); /* the test skipped */
#endif
}

static gboolean
escape_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  Fixture *f = data;
  cudaStream_t stream = tg_launch_get_stream (launch);

  switch (f->where)
    {
    case ON_SIDE:
      return tg_test_launched (tgt_launch_seed (f->side, f->out, N, f->param), error);
    case ON_CALLER: /* as Warp's current stream is, under a registered capture */
      return tg_test_launched (tgt_launch_seed (f->gpu.stream, f->out, N, f->param),
                               error);
    case ON_LEGACY:
      return tg_test_launched (cudaMemcpyAsync (f->out, f->src, N * sizeof (guint32),
                                                cudaMemcpyDeviceToDevice,
                                                cudaStreamLegacy),
                               error);
    case ON_OLD_ABI:
      return copy_batch_old_abi (f, error);
    case FORKED:
      return tg_test_launched (cudaEventRecord (f->fork, stream), error)
             && tg_test_launched (cudaStreamWaitEvent (f->side, f->fork, 0), error)
             && tg_test_launched (tgt_launch_seed (f->side, f->out, N, f->param), error)
             && tg_test_launched (cudaEventRecord (f->join, f->side), error)
             && tg_test_launched (cudaStreamWaitEvent (stream, f->join, 0), error);
    case ON_STAGE:
    default:
      return tg_test_launched (tgt_launch_seed (stream, f->out, N, f->param), error);
    }
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  tg_test_gpu_set_up (&f->gpu, data);
  f->checks = tg_get_checks ();
  if (!tg_test_have_gpu ())
    return;
  f->out = tg_test_device_alloc (N * sizeof (guint32));
  f->param = tg_test_device_alloc (sizeof (guint32));
  f->src = tg_test_device_alloc (N * sizeof (guint32));
  f->side = tg_test_stream_new ();
  TG_TEST_CUDA (cudaEventCreateWithFlags (&f->fork, cudaEventDisableTiming));
  TG_TEST_CUDA (cudaEventCreateWithFlags (&f->join, cudaEventDisableTiming));
  f->where = GPOINTER_TO_INT (data);
  f->producer = tg_producer_new ("checked", 0);
  tg_producer_add_device_stage (f->producer, "escape", TG_STAGE_CAPTURE_SAFE,
                                escape_stage, f, NULL, NULL);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  if (tg_test_have_gpu ())
    {
      g_assert_true (tg_set_checks (f->checks, &error));
      g_clear_pointer (&f->producer, tg_producer_unref);
      TG_TEST_CUDA (cudaDeviceSynchronize ());
      tg_test_assert_not_capturing (f->side);
      TG_TEST_CUDA (cudaEventDestroy (f->fork));
      TG_TEST_CUDA (cudaEventDestroy (f->join));
      TG_TEST_CUDA (cudaStreamDestroy (f->side));
      tg_test_device_free (f->out);
      tg_test_device_free (f->param);
      tg_test_device_free (f->src);
    }
  tg_test_gpu_tear_down (&f->gpu, data);
}

#define ADD(path, where, func)                                                         \
  g_test_add (path, Fixture, GINT_TO_POINTER (where), fixture_set_up, func,            \
              fixture_tear_down)

/* Sets the inputs of the next call: param, and src = hash(i, param). */
static void
set_inputs (Fixture *f, guint32 param)
{
  g_autofree guint32 *src = g_new (guint32, N);

  for (guint i = 0; i < N; i++)
    src[i] = tgt_hash (i, param);
  tg_test_upload (f->param, &param, sizeof param);
  tg_test_upload (f->src, src, sizeof (guint32) * N);
}

/* Asserts that out holds hash(i, @param). */
static void
expect_out (Fixture *f, guint32 param)
{
  g_autofree guint32 *out = g_new (guint32, N);

  TG_TEST_CUDA (cudaDeviceSynchronize ());
  tg_test_download (out, f->out, sizeof (guint32) * N);
  for (guint i = 0; i < N; i++)
    g_assert_cmpuint (out[i], ==, tgt_hash (i, param));
}

static void
set_checks (gboolean on)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (tg_set_checks (on, &error));
  g_assert_no_error (error);
  g_assert_true (tg_get_checks () == on);
}

/* Asserts @error is the refusal of checked mode of the fixture's stage. */
static void
assert_escaped (Fixture *f, const GError *error)
{
  g_autofree char *stream = g_strdup_printf (
      "%p", f->where == ON_LEGACY   ? (void *)cudaStreamLegacy
            : f->where == ON_CALLER ? (void *)f->gpu.stream
                                    : (void *)f->side);

  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_ESCAPED);
  g_test_message ("refused as expected: %s", error->message);
  g_assert_cmpstr (tg_error_get_producer (error), ==, "checked");
  g_assert_cmpstr (tg_error_get_stage (error), ==, "escape");
  g_assert_nonnull (strstr (error->message, "producer 'checked', stage 'escape'"));
  g_assert_nonnull (strstr (error->message, stream));
  if (f->where == ON_CALLER)
    g_assert_nonnull (strstr (error->message, "the caller's capture holds it now"));
  if (f->where == ON_OLD_ABI) /* the older form's name: not cuMemcpyBatchAsync_v2 */
    g_assert_nonnull (strstr (error->message, "cuMemcpyBatchAsync on stream"));
  else if (f->where != ON_LEGACY)
    {
      /* CUPTI's name of the call, and the kernel's (mangled) name. */
      g_assert_nonnull (strstr (error->message, "aunchKernel"));
      g_assert_nonnull (strstr (error->message, "seed_kernel"));
    }
  else
    {
      g_assert_nonnull (strstr (error->message, "cudaMemcpyAsync"));
      g_assert_nonnull (strstr (error->message, "legacy"));
    }
}

/* REPLAY calls with params 3, 4 and 5, each leaving hash(i, param) in out,
 * or, @stale, the first call's result: the own graph missed the work. */
static void
replay_params (Fixture *f, gboolean stale)
{
  g_autoptr (GError) error = NULL;

  for (guint32 param = 3; param < 6; param++)
    {
      set_inputs (f, param);
      g_assert_true (tg_producer_run (f->producer, f->gpu.stream, TG_POLICY_REPLAY,
                                      tg_unconditional (), &error));
      g_assert_no_error (error);
      expect_out (f, stale ? 3 : param);
    }
}

/* Records the producer into the caller's capture in progress on the
 * fixture's stream, ends it, and replays it with param 9: out must hold
 * hash(i, @want). */
static void
record_and_replay (Fixture *f, guint32 *scratch, guint32 want)
{
  g_autoptr (GError) error = NULL;
  cudaGraphExec_t exec;

  g_assert_true (tg_producer_run (f->producer, f->gpu.stream, TG_POLICY_RECORD,
                                  tg_unconditional (), &error));
  g_assert_no_error (error);
  exec = tg_test_end_caller_capture (f->gpu.stream);
  set_inputs (f, 9);
  tg_test_replay_caller_capture (exec, f->gpu.stream, scratch);
  expect_out (f, want);
}

/* REPLAY: refused with checks on; the next call works (the stage fixed). */
static void
test_replay_refused (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  set_checks (TRUE);
  set_inputs (f, 3);
  g_assert_false (tg_producer_run (f->producer, f->gpu.stream, TG_POLICY_REPLAY,
                                   tg_unconditional (), &error));
  assert_escaped (f, error);
  g_clear_error (&error);
  tg_test_assert_not_capturing (f->gpu.stream);
  tg_test_assert_not_capturing (f->side);

  f->where = ON_STAGE;
  for (guint32 param = 5; param < 7; param++)
    {
      set_inputs (f, param);
      g_assert_true (tg_producer_run (f->producer, f->gpu.stream, TG_POLICY_REPLAY,
                                      tg_unconditional (), &error));
      g_assert_no_error (error);
      expect_out (f, param);
    }
}

/* REPLAY: a copy made by the driver's CUDA 12.8 form of cuMemcpyBatchAsync
 * (a library built then calls it so) refused as any other. */
static void
test_old_abi_refused (Fixture *f, gconstpointer data)
{
#if CUDART_VERSION >= 12080
  test_replay_refused (f, data);
#else
  g_test_skip ("cuMemcpyBatchAsync needs CUDA 12.8");
#endif
}

/* REPLAY, the other stream capturing into another graph (begun before the
 * call, as another thread's would be): the work went there, not into the
 * stage's capture. */
static void
test_replay_other_capture (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  cudaGraph_t other = NULL;

  TG_TEST_REQUIRE_GPU ();
  set_checks (TRUE);
  set_inputs (f, 3);
  TG_TEST_CUDA (cudaStreamBeginCapture (f->side, cudaStreamCaptureModeThreadLocal));
  g_assert_false (tg_producer_run (f->producer, f->gpu.stream, TG_POLICY_REPLAY,
                                   tg_unconditional (), &error));
  TG_TEST_CUDA (cudaStreamEndCapture (f->side, &other));
  assert_escaped (f, error);
  g_assert_nonnull (strstr (error->message, "another graph"));
  g_assert_cmpuint (tg_test_graph_n_nodes (other), ==, 1);
  TG_TEST_CUDA (cudaGraphDestroy (other));
}

/* REPLAY with checks off: the own graph misses the escaped work, and its
 * replays leave the first call's result. */
static void
test_replay_stale (Fixture *f, gconstpointer data)
{
  TG_TEST_REQUIRE_GPU ();
  set_checks (FALSE);
  replay_params (f, TRUE);
}

/* RECORD: refused with checks on, the caller's capture holding exactly its
 * node and still capturing (work that escaped into the caller's capture
 * itself stays there, as the error says: CUDA cannot take a node out of a
 * capture in progress); the next call records and replays right. */
static void
test_record_refused (Fixture *f, gconstpointer data)
{
  guint32 *scratch = tg_test_have_gpu () ? tg_test_device_alloc (4) : NULL;
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph;

  TG_TEST_REQUIRE_GPU ();
  set_checks (TRUE);
  set_inputs (f, 3);
  graph = tg_test_begin_caller_capture (f->gpu.stream, scratch);
  g_assert_false (tg_producer_run (f->producer, f->gpu.stream, TG_POLICY_RECORD,
                                   tg_unconditional (), &error));
  assert_escaped (f, error);
  g_clear_error (&error);
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, f->where == ON_CALLER ? 2 : 1);
  g_assert_true (tg_stream_is_capturing (f->gpu.stream));
  tg_test_assert_not_capturing (f->side);

  /* The next call, the stage fixed, records into the same capture; the
   * replay's inputs are set once it ended (a synchronous copy would break
   * it). */
  f->where = ON_STAGE;
  record_and_replay (f, scratch, 9);
  tg_test_device_free (scratch);
}

/* RECORD with checks off: recorded without a word, the work ran at record
 * time, and the caller's graph replays the record-time result. */
static void
test_record_stale (Fixture *f, gconstpointer data)
{
  guint32 *scratch = tg_test_have_gpu () ? tg_test_device_alloc (4) : NULL;

  TG_TEST_REQUIRE_GPU ();
  set_checks (FALSE);
  set_inputs (f, 3);
  (void)tg_test_begin_caller_capture (f->gpu.stream, scratch);
  record_and_replay (f, scratch, 3);
  tg_test_device_free (scratch);
}

/* A stream forked from the stage's and joined back is in the capture: no
 * false report, and replays are right. */
static void
test_forked_passes (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  set_checks (TRUE);
  replay_params (f, FALSE);
  g_assert_true (tg_producer_run (f->producer, f->gpu.stream, TG_POLICY_EAGER,
                                  tg_unconditional (), &error));
  g_assert_no_error (error);
  expect_out (f, 5);
}

/* EAGER: work on another stream not joined back is an error (the work ran;
 * the call says it is unordered with what follows on the stream). */
static void
test_eager_unjoined (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  set_checks (TRUE);
  set_inputs (f, 3);
  g_assert_false (tg_producer_run (f->producer, f->gpu.stream, TG_POLICY_EAGER,
                                   tg_unconditional (), &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_ESCAPED);
  g_test_message ("refused as expected: %s", error->message);
  g_assert_nonnull (strstr (error->message, "not joined"));
  g_assert_cmpstr (tg_error_get_stage (error), ==, "escape");
  g_clear_error (&error);
  set_checks (FALSE);
  g_assert_true (tg_producer_run (f->producer, f->gpu.stream, TG_POLICY_EAGER,
                                  tg_unconditional (), &error));
  g_assert_no_error (error);
}

/* On, off, and on again: each answers what it set; without CUPTI's driver
 * side the switch fails cleanly and checked mode stays off. */
static void
test_switch (void)
{
  g_autoptr (GError) error = NULL;
  gboolean was = tg_get_checks ();

  g_assert_true (tg_set_checks (FALSE, &error));
  g_assert_false (tg_get_checks ());
  if (tg_set_checks (TRUE, &error))
    {
      g_assert_no_error (error);
      g_assert_true (tg_get_checks ());
    }
  else
    {
      /* No GPU here, so CUPTI may refuse the subscription. */
      g_assert_false (tg_test_have_gpu ());
      g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED);
      g_assert_nonnull (strstr (error->message, "TG_CUPTI_PATH"));
      g_assert_false (tg_get_checks ());
      g_clear_error (&error);
    }
  g_assert_true (tg_set_checks (FALSE, &error));
  g_assert_false (tg_get_checks ());
  if (tg_test_have_gpu ())
    g_assert_true (tg_set_checks (was, &error));
}

/* With TG_CHECK=1 and CUPTI missing, a checked stage fails with why rather
 * than run unchecked: its REPLAY call fails, nothing captured or launched.
 * Once the mode is turned off, the same call runs. */
static void
no_cupti_stage_fails (void)
{
  guint32 *counter = tg_test_device_alloc (sizeof (guint32));
  cudaStream_t stream = tg_test_stream_new ();
  TgProducer *p = tg_test_counter_producer (counter, TG_STAGE_CAPTURE_SAFE,
                                            tg_test_count_bound_stage);
  g_autoptr (GError) error = NULL;
  TgRunnerStats stats;

  g_assert_false (
      tg_producer_run (p, stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "TG_CUPTI_PATH=/nonexistent/cupti"));
  g_assert_cmpstr (tg_error_get_stage (error), ==, "count");
  g_clear_error (&error);
  tg_test_assert_not_capturing (stream);
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
  g_assert_cmpuint (tg_test_read_u32 (counter), ==, 0);
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_captures, ==, 0);

  g_assert_true (tg_set_checks (FALSE, &error));
  g_assert_true (
      tg_producer_run (p, stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
  g_assert_cmpuint (tg_test_read_u32 (counter), ==, 1);
  tg_producer_unref (p);
  TG_TEST_CUDA (cudaStreamDestroy (stream));
  tg_test_device_free (counter);
}

/* TG_CUPTI_PATH naming no library: a clear error, never a crash; with
 * TG_CHECK=1 the mode is asked for, and a stage fails with it (on a GPU). */
static void
test_no_cupti (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr (GError) error = NULL;
      TgLiveObjects before;

      g_assert_true (tg_get_checks ()); /* TG_CHECK=1, CUPTI missing */
      if (tg_test_have_gpu ())
        {
          tg_test_live_snapshot (&before);
          no_cupti_stage_fails ();
          tg_test_assert_no_leaks (&before);
        }
      g_assert_false (tg_set_checks (TRUE, &error));
      g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED);
      g_assert_nonnull (strstr (error->message, "TG_CUPTI_PATH=/nonexistent/cupti"));
      g_assert_false (tg_get_checks ());
      return;
    }
  g_assert_true (g_setenv ("TG_CUPTI_PATH", "/nonexistent/cupti", TRUE));
  g_assert_true (g_setenv ("TG_CHECK", "1", TRUE));
  /* The child runs a producer on a GPU: its own messages shown, and a hang
   * ended (60 s). */
  g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("TG_CUPTI_PATH");
  g_unsetenv ("TG_CHECK");
  g_test_trap_assert_passed ();
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  g_test_add_func ("/check/switch/round-trip", test_switch);
  g_test_add_func ("/check/switch/no-cupti", test_no_cupti);
  ADD ("/check/replay/side-stream-refused", ON_SIDE, test_replay_refused);
  ADD ("/check/replay/legacy-copy-refused", ON_LEGACY, test_replay_refused);
  ADD ("/check/replay/old-abi-copy-refused", ON_OLD_ABI, test_old_abi_refused);
  ADD ("/check/replay/other-capture-refused", ON_SIDE, test_replay_other_capture);
  ADD ("/check/replay/side-stream-stale-when-off", ON_SIDE, test_replay_stale);
  ADD ("/check/replay/legacy-copy-stale-when-off", ON_LEGACY, test_replay_stale);
  ADD ("/check/record/side-stream-refused", ON_SIDE, test_record_refused);
  ADD ("/check/record/legacy-copy-refused", ON_LEGACY, test_record_refused);
  ADD ("/check/record/caller-stream-refused", ON_CALLER, test_record_refused);
  ADD ("/check/record/side-stream-stale-when-off", ON_SIDE, test_record_stale);
  ADD ("/check/record/legacy-copy-stale-when-off", ON_LEGACY, test_record_stale);
  ADD ("/check/forked-stream-passes", FORKED, test_forked_passes);
  ADD ("/check/eager/unjoined-refused", ON_SIDE, test_eager_unjoined);
  return g_test_run ();
}
