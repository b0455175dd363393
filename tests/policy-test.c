/* SPDX-License-Identifier: Apache-2.0 */
/* policy-test.c: every row of the design's policy table, first as the pure
 * decision (on any machine), then hit for real on a GPU; and the central
 * test, results bit-identical under EAGER, REPLAY and RECORD. */
#include "config.h"
#include "tg-test.h"
#include "../lib/exec/policy-private.h"

static GError *
refusal (void)
{
  return g_error_new_literal (TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                              "stage 'x' is not capture-safe");
}

static void
decide_ok (TgPolicy requested, TgCaptureState state, const GError *record_refusal,
           const GError *replay_refusal, TgPolicy expected)
{
  g_autoptr (GError) error = NULL;
  TgPolicy policy = TG_POLICY_AUTO;

  g_assert_true (tg__policy_decide (requested, state, record_refusal, replay_refusal,
                                    &policy, &error));
  g_assert_no_error (error);
  g_assert_cmpint (policy, ==, expected);
}

static void
decide_fails (TgPolicy requested, TgCaptureState state, const GError *record_refusal,
              const GError *replay_refusal, GQuark domain, gint code)
{
  g_autoptr (GError) error = NULL;
  TgPolicy policy = TG_POLICY_AUTO;

  g_assert_false (tg__policy_decide (requested, state, record_refusal, replay_refusal,
                                     &policy, &error));
  g_assert_error (error, domain, code);
}

static void
test_capturing_records (void)
{
  decide_ok (TG_POLICY_AUTO, TG_CAPTURE_ACTIVE, NULL, NULL, TG_POLICY_RECORD);
  decide_ok (TG_POLICY_RECORD, TG_CAPTURE_ACTIVE, NULL, NULL, TG_POLICY_RECORD);
}

static void
test_capturing_refuses_unsafe (void)
{
  g_autoptr (GError) why = refusal ();

  decide_fails (TG_POLICY_AUTO, TG_CAPTURE_ACTIVE, why, NULL, TG_CAPTURE_ERROR,
                TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  decide_fails (TG_POLICY_RECORD, TG_CAPTURE_ACTIVE, why, why, TG_CAPTURE_ERROR,
                TG_CAPTURE_ERROR_NOT_CAPTURABLE);
}

static void
test_capturing_refuses_eager_and_replay (void)
{
  decide_fails (TG_POLICY_EAGER, TG_CAPTURE_ACTIVE, NULL, NULL, TG_STATE_ERROR,
                TG_STATE_ERROR_POLICY);
  decide_fails (TG_POLICY_REPLAY, TG_CAPTURE_ACTIVE, NULL, NULL, TG_STATE_ERROR,
                TG_STATE_ERROR_POLICY);
}

static void
test_invalidated_fails (void)
{
  g_autoptr (GError) why = refusal ();

  for (TgPolicy p = TG_POLICY_AUTO; p <= TG_POLICY_RECORD; p++)
    {
      decide_fails (p, TG_CAPTURE_INVALIDATED, NULL, NULL, TG_CAPTURE_ERROR,
                    TG_CAPTURE_ERROR_FAILED);
      decide_fails (p, TG_CAPTURE_INVALIDATED, why, why, TG_CAPTURE_ERROR,
                    TG_CAPTURE_ERROR_FAILED);
    }
}

static void
test_implicit_refused (void)
{
  for (TgPolicy p = TG_POLICY_AUTO; p <= TG_POLICY_RECORD; p++)
    decide_fails (p, TG_CAPTURE_IMPLICIT, NULL, NULL, TG_CAPTURE_ERROR,
                  TG_CAPTURE_ERROR_NOT_CAPTURABLE);
}

static void
test_idle_auto (void)
{
  g_autoptr (GError) why = refusal ();

  decide_ok (TG_POLICY_AUTO, TG_CAPTURE_NONE, NULL, NULL, TG_POLICY_REPLAY);
  /* A HOST stage that cannot be recorded does not stop a replay. */
  decide_ok (TG_POLICY_AUTO, TG_CAPTURE_NONE, why, NULL, TG_POLICY_REPLAY);
  decide_ok (TG_POLICY_AUTO, TG_CAPTURE_NONE, why, why, TG_POLICY_EAGER);
}

static void
test_idle_explicit (void)
{
  g_autoptr (GError) why = refusal ();

  decide_ok (TG_POLICY_EAGER, TG_CAPTURE_NONE, why, why, TG_POLICY_EAGER);
  decide_ok (TG_POLICY_REPLAY, TG_CAPTURE_NONE, why, NULL, TG_POLICY_REPLAY);
  decide_fails (TG_POLICY_REPLAY, TG_CAPTURE_NONE, NULL, why, TG_CAPTURE_ERROR,
                TG_CAPTURE_ERROR_NOT_CAPTURABLE);
}

static void
test_idle_record_refused (void)
{
  decide_fails (TG_POLICY_RECORD, TG_CAPTURE_NONE, NULL, NULL, TG_STATE_ERROR,
                TG_STATE_ERROR_POLICY);
}

static void
test_names (void)
{
  g_assert_cmpstr (tg_policy_to_string (TG_POLICY_AUTO), ==, "auto");
  g_assert_cmpstr (tg_policy_to_string (TG_POLICY_EAGER), ==, "eager");
  g_assert_cmpstr (tg_policy_to_string (TG_POLICY_REPLAY), ==, "replay");
  g_assert_cmpstr (tg_policy_to_string (TG_POLICY_RECORD), ==, "record");
}

/* On a GPU: the same rows through tg_producer_resolve() and tg_producer_run()
 * with real streams in each capture state. */

typedef struct
{
  TgTestGpu gpu;
  TgTestChain *safe;   /* capture-safe HOST stage */
  TgTestChain *unsafe; /* HOST stage not capture-safe */
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  tg_test_gpu_set_up (&f->gpu, data);
  if (!tg_test_have_gpu ())
    return;
  f->safe = tg_test_chain_new ("safe", 1024, TRUE, TG_STAGE_CAPTURE_SAFE);
  f->unsafe = tg_test_chain_new ("unsafe", 1024, TRUE, TG_STAGE_NONE);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  if (tg_test_have_gpu ())
    {
      tg_test_chain_free (f->safe);
      tg_test_chain_free (f->unsafe);
    }
  tg_test_gpu_tear_down (&f->gpu, data);
}

static TgPolicy
resolve (TgTestChain *c, cudaStream_t stream, TgPolicy requested, GError **error)
{
  TgPolicy policy = TG_POLICY_AUTO;

  /* AUTO is never a resolved policy: it stands for "refused". */
  if (!tg_producer_resolve (c->producer, stream, requested, tg_unconditional (),
                            &policy, NULL, error))
    return TG_POLICY_AUTO;
  return policy;
}

/* The stream an AUTO call of @c on @stream would use. */
static cudaStream_t
resolve_stream (TgTestChain *c, cudaStream_t stream)
{
  g_autoptr (GError) error = NULL;
  TgPolicy policy = TG_POLICY_AUTO;
  cudaStream_t resolved = NULL;

  g_assert_true (tg_producer_resolve (c->producer, stream, TG_POLICY_AUTO,
                                      tg_unconditional (), &policy, &resolved, &error));
  g_assert_no_error (error);
  g_assert_cmpint (policy, ==, TG_POLICY_REPLAY);
  return resolved;
}

static void
test_gpu_idle_rows (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  g_assert_cmpint (resolve (f->safe, f->gpu.stream, TG_POLICY_AUTO, &error), ==,
                   TG_POLICY_REPLAY);
  g_assert_cmpint (resolve (f->unsafe, f->gpu.stream, TG_POLICY_AUTO, &error), ==,
                   TG_POLICY_REPLAY);
  g_assert_cmpint (resolve (f->safe, f->gpu.stream, TG_POLICY_EAGER, &error), ==,
                   TG_POLICY_EAGER);
  g_assert_no_error (error);
  g_assert_cmpint (resolve (f->safe, f->gpu.stream, TG_POLICY_RECORD, &error), ==,
                   TG_POLICY_AUTO);
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_POLICY);
  g_clear_error (&error);
  /* TG_STREAM_AUTO resolves to TrackGen's default stream; NULL is CUDA's
   * legacy default stream, as everywhere in CUDA. */
  g_assert_true (resolve_stream (f->safe, TG_STREAM_AUTO)
                 == tg_default_stream (0, NULL));
  g_assert_true (resolve_stream (f->safe, NULL) == cudaStreamLegacy);
  g_assert_true (resolve_stream (f->safe, f->gpu.stream) == f->gpu.stream);
}

static void
test_gpu_capturing_rows (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;

  TG_TEST_REQUIRE_GPU ();
  TG_TEST_CUDA (
      cudaStreamBeginCapture (f->gpu.stream, cudaStreamCaptureModeThreadLocal));
  g_assert_cmpint (resolve (f->safe, f->gpu.stream, TG_POLICY_AUTO, &error), ==,
                   TG_POLICY_RECORD);
  g_assert_cmpint (resolve (f->safe, f->gpu.stream, TG_POLICY_RECORD, &error), ==,
                   TG_POLICY_RECORD);
  g_assert_no_error (error);
  g_assert_cmpint (resolve (f->unsafe, f->gpu.stream, TG_POLICY_AUTO, &error), ==,
                   TG_POLICY_AUTO);
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  g_clear_error (&error);
  g_assert_cmpint (resolve (f->safe, f->gpu.stream, TG_POLICY_EAGER, &error), ==,
                   TG_POLICY_AUTO);
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_POLICY);
  g_clear_error (&error);
  g_assert_cmpint (resolve (f->safe, f->gpu.stream, TG_POLICY_REPLAY, &error), ==,
                   TG_POLICY_AUTO);
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_POLICY);
  TG_TEST_CUDA (cudaStreamEndCapture (f->gpu.stream, &graph));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
}

static void
test_gpu_invalidated_row (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;

  TG_TEST_REQUIRE_GPU ();
  TG_TEST_CUDA (
      cudaStreamBeginCapture (f->gpu.stream, cudaStreamCaptureModeThreadLocal));
  g_assert_cmpint (cudaStreamSynchronize (f->gpu.stream), !=, cudaSuccess);
  (void)cudaGetLastError ();
  for (TgPolicy p = TG_POLICY_AUTO; p <= TG_POLICY_RECORD; p++)
    {
      g_assert_false (tg_producer_run (f->safe->producer, f->gpu.stream, p,
                                       tg_unconditional (), &error));
      g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED);
      g_clear_error (&error);
    }
  g_assert_cmpint (cudaStreamEndCapture (f->gpu.stream, &graph), ==,
                   cudaErrorStreamCaptureInvalidated);
  (void)cudaGetLastError ();
  g_assert_null (graph);
}

/* ------------------------------------------------------------------------ */
/* The central test: bit-identical results under EAGER, REPLAY and RECORD.   */

#define N 4096
#define CALLS 5

/* Runs the chain CALLS times under @policy with changing inputs; RECORD
 * records once into a capture begun here, then replays that graph. */
static void
run_calls (TgTestChain *c, cudaStream_t stream, TgPolicy policy, guint32 *out)
{
  g_autoptr (GError) error = NULL;
  cudaGraphExec_t exec = NULL;

  if (policy == TG_POLICY_RECORD)
    {
      cudaGraph_t graph = NULL;
      TG_TEST_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal));
      g_assert_true (tg_producer_run (c->producer, stream, TG_POLICY_RECORD,
                                      tg_unconditional (), &error));
      g_assert_no_error (error);
      TG_TEST_CUDA (cudaStreamEndCapture (stream, &graph));
      TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
      TG_TEST_CUDA (cudaGraphDestroy (graph));
    }
  for (guint call = 0; call < CALLS; call++)
    {
      tg_test_chain_set_inputs (c, tg_test_chain_param (call), tg_test_chain_k (call));
      if (exec != NULL)
        TG_TEST_CUDA (cudaGraphLaunch (exec, stream));
      else
        g_assert_true (
            tg_producer_run (c->producer, stream, policy, tg_unconditional (), &error));
      g_assert_no_error (error);
      TG_TEST_CUDA (cudaStreamSynchronize (stream));
      tg_test_chain_read (c, out + call * N);
    }
  if (exec != NULL)
    TG_TEST_CUDA (cudaGraphExecDestroy (exec));
}

static void
check_equivalence (TgTestGpu *f, gboolean with_host)
{
  const TgPolicy policies[] = { TG_POLICY_EAGER, TG_POLICY_REPLAY, TG_POLICY_RECORD };
  g_autofree guint32 *expected = g_new (guint32, CALLS * N);
  g_autofree guint32 *out = g_new (guint32, G_N_ELEMENTS (policies) * CALLS * N);

  for (guint call = 0; call < CALLS; call++)
    tg_test_chain_expect (N, tg_test_chain_param (call), tg_test_chain_k (call),
                          expected + call * N);
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      TgTestChain *c
          = tg_test_chain_new ("equivalence", N, with_host, TG_STAGE_CAPTURE_SAFE);
      run_calls (c, f->stream, policies[i], out + i * CALLS * N);
      g_test_message ("%s: %d host-function runs", tg_policy_to_string (policies[i]),
                      c->host_runs);
      g_assert_cmpint (c->host_runs, ==, with_host ? CALLS : 0);
      tg_test_chain_free (c);
      /* Bit-identical to the host reference, hence to each other. */
      g_assert_cmpmem (out + i * CALLS * N, CALLS * N * sizeof (guint32), expected,
                       CALLS * N * sizeof (guint32));
    }
}

static void
test_equivalence_with_host_stage (TgTestGpu *f, gconstpointer data)
{
  TG_TEST_REQUIRE_GPU ();
  check_equivalence (f, TRUE);
}

static void
test_equivalence_device_only (TgTestGpu *f, gconstpointer data)
{
  TG_TEST_REQUIRE_GPU ();
  check_equivalence (f, FALSE);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  g_test_add_func ("/policy/table/capturing-records", test_capturing_records);
  g_test_add_func ("/policy/table/capturing-refuses-unsafe",
                   test_capturing_refuses_unsafe);
  g_test_add_func ("/policy/table/capturing-refuses-eager-and-replay",
                   test_capturing_refuses_eager_and_replay);
  g_test_add_func ("/policy/table/invalidated-fails", test_invalidated_fails);
  g_test_add_func ("/policy/table/implicit-legacy-refused", test_implicit_refused);
  g_test_add_func ("/policy/table/idle-auto", test_idle_auto);
  g_test_add_func ("/policy/table/idle-explicit", test_idle_explicit);
  g_test_add_func ("/policy/table/idle-record-refused", test_idle_record_refused);
  g_test_add_func ("/policy/names", test_names);
  g_test_add ("/policy/gpu/idle-rows", Fixture, NULL, fixture_set_up,
              test_gpu_idle_rows, fixture_tear_down);
  g_test_add ("/policy/gpu/capturing-rows", Fixture, NULL, fixture_set_up,
              test_gpu_capturing_rows, fixture_tear_down);
  g_test_add ("/policy/gpu/invalidated-row", Fixture, NULL, fixture_set_up,
              test_gpu_invalidated_row, fixture_tear_down);
  TG_TEST_ADD_GPU ("/policy/equivalence/with-host-stage",
                   test_equivalence_with_host_stage);
  TG_TEST_ADD_GPU ("/policy/equivalence/device-only", test_equivalence_device_only);
  return g_test_run ();
}
