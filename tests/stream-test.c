/* SPDX-License-Identifier: Apache-2.0 */
/* stream-test.c: which stream a call runs on.  NULL is CUDA's legacy
 * default stream, TG_STREAM_AUTO resolves by the stream rule (a registered
 * capture, else the bound stream, else the ambient stream a binding passes,
 * else TrackGen's default stream), a call naming no stream records into the
 * bound or ambient stream's capture, and never runs beside the ambient
 * stream's capture.  Stages that can only launch on the legacy stream run
 * there eagerly and are refused wherever their work would escape a capture
 * or an explicit stream. */
#include "config.h"
#include "tg-test.h"
#include "../lib/exec/policy-private.h"

#define N 4096

/* Two device counters. */
TG_TEST_DEFINE_GPU_FIXTURE (guint32, counts, 2)

/* ------------------------------------------------------------------------ */
/* Resolution                                                                */

/* @p resolves @call to @policy and @expected; with no ambient stream, the
 * plain call too. */
static void
assert_resolves_full (TgProducer *p, TgCallStream call, TgPolicy policy,
                      cudaStream_t expected)
{
  g_autoptr (GError) error = NULL;
  cudaStream_t resolved = NULL, plain = NULL;
  TgPolicy got, got_plain = policy;

  g_assert_true (tg_producer_resolve_full (
      p, &call, TG_POLICY_AUTO, tg_unconditional (), &got, &resolved, &error));
  if (call.ambient == TG_STREAM_AUTO)
    g_assert_true (tg_producer_resolve (p, call.stream, TG_POLICY_AUTO,
                                        tg_unconditional (), &got_plain, &plain,
                                        &error));
  else
    plain = expected;
  g_assert_no_error (error);
  g_assert_cmpint (got, ==, policy);
  g_assert_cmpint (got_plain, ==, policy);
  g_assert_true (resolved == expected);
  g_assert_true (plain == expected);
}

static void
assert_resolves (TgProducer *p, cudaStream_t stream, TgPolicy policy,
                 cudaStream_t expected)
{
  assert_resolves_full (p, TG_CALL_STREAM (stream), policy, expected);
}

static void
test_streams_resolve (Fixture *f, gconstpointer data)
{
  cudaStream_t s = f->gpu.stream, fallback;
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  cudaGraphExec_t exec = NULL;
  cudaGraph_t graph = NULL;

  TG_TEST_REQUIRE_GPU ();
  fallback = tg_default_stream (0, &error);
  g_assert_true (tg_stream_resolve (NULL, 0, &error) == cudaStreamLegacy);
  g_assert_true (tg_stream_resolve (TG_STREAM_AUTO, 0, &error) == fallback);
  g_assert_true (tg_stream_resolve (s, 0, &error) == s);
  g_assert_no_error (error);

  p = tg_test_counter_producer (f->counts, TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_bound_stage);
  g_assert_true (tg_producer_get_stream (p) == TG_STREAM_AUTO);
  assert_resolves (p, TG_STREAM_AUTO, TG_POLICY_REPLAY, fallback);
  g_assert_true (tg_producer_set_stream (p, s, &error));
  g_assert_true (tg_producer_get_stream (p) == s);
  assert_resolves (p, TG_STREAM_AUTO, TG_POLICY_REPLAY, s);
  assert_resolves (p, NULL, TG_POLICY_REPLAY, cudaStreamLegacy);

  /* A call naming no stream records into the bound stream's capture: one
   * child graph node, which counts at every launch. */
  TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeGlobal));
  g_assert_true (
      tg_producer_run (p, TG_STREAM_AUTO, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, 1);
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  TG_TEST_CUDA (cudaGraphLaunch (exec, s));
  TG_TEST_CUDA (cudaGraphLaunch (exec, s));
  TG_TEST_CUDA (cudaStreamSynchronize (s));
  g_assert_cmpuint (tg_test_read_u32 (&f->counts[0]), ==, 2);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));

  g_assert_true (tg_producer_set_stream (p, TG_STREAM_AUTO, &error));
  g_assert_no_error (error);
  g_assert_true (tg_producer_get_stream (p) == TG_STREAM_AUTO);
  assert_resolves (p, TG_STREAM_AUTO, TG_POLICY_REPLAY, fallback);
}

/* ------------------------------------------------------------------------ */
/* The ambient stream (TgCallStream)                                         */

/* The refusal of work beside the ambient stream's capture, on any machine:
 * one message, naming the ambient stream, the producer and the fix. */
static void
test_rule_refusal_messages (void)
{
  static const struct
  {
    TgStreamUse use;
    const char *producer, *ambient, *says;
  } cases[] = {
    { TG_STREAM_USE_EAGER, "p", "torch's current stream",
      "TG_POLICY_EAGER would run it now beside the capture" },
    { TG_STREAM_USE_REPLAY, "p", "torch's current stream",
      "pass TG_POLICY_AUTO to record it" },
    { TG_STREAM_USE_BOUND, "p", NULL, "on the producer's bound stream beside" },
    { TG_STREAM_USE_WAIT, NULL, "Warp's current stream", "it waits for its stream" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;

      g_assert_false (tg__policy_refuse_beside (cases[i].use, cases[i].producer,
                                                cases[i].ambient, &error));
      g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_POLICY);
      g_assert_nonnull (strstr (error->message, cases[i].says));
      g_assert_nonnull (strstr (error->message, "names no stream (TG_STREAM_AUTO)"));
      g_assert_nonnull (strstr (error->message, "or call it outside the capture"));
      g_assert_nonnull (strstr (error->message, cases[i].ambient != NULL
                                                    ? cases[i].ambient
                                                    : "the ambient stream"));
      g_assert_cmpstr (tg_error_get_producer (error), ==, cases[i].producer);
      if (cases[i].producer != NULL)
        g_assert_true (g_str_has_prefix (error->message, "producer 'p' names"));
    }
}

static cudaStream_t
resolve_full (TgCallStream call)
{
  g_autoptr (GError) error = NULL;
  cudaStream_t resolved = tg_stream_resolve_full (&call, 0, &error);

  g_assert_no_error (error);
  return resolved;
}

/* The order: a named stream, a registered capture, the bound stream, the
 * ambient stream, TrackGen's default stream. */
static void
test_rule_order (Fixture *f, gconstpointer data)
{
  cudaStream_t ambient = f->gpu.stream, named, bound, fallback;
  const TgCallStream none = TG_CALL_STREAM (TG_STREAM_AUTO);
  TgCallStream call = { TG_STREAM_AUTO, ambient, "the test's stream" };
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  TgCaptureScope *scope;
  cudaGraph_t graph = NULL;

  TG_TEST_REQUIRE_GPU ();
  named = tg_test_stream_new ();
  bound = tg_test_stream_new ();
  fallback = tg_default_stream (0, &error);
  g_assert_no_error (error);

  /* tg_stream_resolve_full(): no producer, so no bound stream. */
  g_assert_true (resolve_full (none) == fallback);
  g_assert_true (resolve_full (call) == ambient);
  g_assert_true (resolve_full ((TgCallStream){ named, ambient, NULL }) == named);
  g_assert_true (resolve_full ((TgCallStream){ NULL, ambient, NULL })
                 == cudaStreamLegacy);
  g_assert_true (resolve_full ((TgCallStream){ TG_STREAM_AUTO, NULL, NULL })
                 == cudaStreamLegacy);

  p = tg_test_counter_producer (f->counts, TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_bound_stage);
  assert_resolves_full (p, none, TG_POLICY_REPLAY, fallback);
  assert_resolves_full (p, call, TG_POLICY_REPLAY, ambient);
  assert_resolves_full (p, (TgCallStream){ named, ambient, NULL }, TG_POLICY_REPLAY,
                        named);
  g_assert_true (tg_producer_set_stream (p, bound, &error));
  assert_resolves_full (p, call, TG_POLICY_REPLAY, bound);

  /* A registered capture wins over the bound and the ambient streams. */
  TG_TEST_CUDA (cudaStreamBeginCapture (named, cudaStreamCaptureModeGlobal));
  scope = tg_capture_scope_begin (named, cudaStreamCaptureModeGlobal, &error);
  g_assert_no_error (error);
  g_assert_true (resolve_full (call) == named);
  assert_resolves_full (p, call, TG_POLICY_RECORD, named);
  tg_capture_scope_free (scope);
  TG_TEST_CUDA (cudaStreamEndCapture (named, &graph));
  TG_TEST_CUDA (cudaGraphDestroy (graph));

  g_clear_pointer (&p, tg_producer_unref);
  TG_TEST_CUDA (cudaStreamDestroy (named));
  TG_TEST_CUDA (cudaStreamDestroy (bound));
}

/* Runs @p on @call under @policy and expects the beside-the-capture
 * refusal, saying @says. */
static void
expect_beside (TgProducer *p, const TgCallStream *call, TgPolicy policy,
               const char *says)
{
  g_autoptr (GError) error = NULL;

  g_assert_false (tg_producer_run_full (p, call, policy, tg_unconditional (), &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_POLICY);
  g_assert_nonnull (strstr (error->message, says));
  g_assert_nonnull (strstr (error->message, "the test's stream is capturing"));
}

/* A capture in progress on the ambient stream: what can be recorded is,
 * and its graph retains the producer; nothing runs beside it. */
static void
test_rule_ambient_capture (Fixture *f, gconstpointer data)
{
  cudaStream_t ambient = f->gpu.stream, bound;
  const TgCallStream call = { TG_STREAM_AUTO, ambient, "the test's stream" };
  g_autoptr (TgSeedState) seeds = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree guint32 *epochs = g_new (guint32, 16);
  TgProducer *p, *q;
  cudaGraphExec_t exec = NULL;
  cudaGraph_t graph = NULL;
  TgLiveObjects live;

  TG_TEST_REQUIRE_GPU ();
  bound = tg_test_stream_new ();
  seeds = tg_seed_state_new (0, 16, 7, &error);
  g_assert_no_error (error);
  p = tg_test_counter_producer (f->counts, TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_bound_stage);
  q = tg_test_counter_producer (f->counts + 1, TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_bound_stage);
  g_assert_true (tg_producer_set_stream (q, bound, &error));
  /* Idle, the ambient stream stands in for an unbound producer's. */
  assert_resolves_full (p, call, TG_POLICY_REPLAY, ambient);
  assert_resolves_full (q, call, TG_POLICY_REPLAY, bound);

  TG_TEST_CUDA (cudaStreamBeginCapture (ambient, cudaStreamCaptureModeGlobal));
  expect_beside (p, &call, TG_POLICY_EAGER, "pass TG_POLICY_AUTO to record it");
  expect_beside (p, &call, TG_POLICY_REPLAY, "TG_POLICY_REPLAY would run it now");
  expect_beside (q, &call, TG_POLICY_AUTO, "on the producer's bound stream");
  g_assert_false (tg_seed_state_read_full (seeds, &call, NULL, epochs, &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_POLICY);
  g_assert_nonnull (strstr (error->message, "it waits for its stream"));
  g_clear_error (&error);
  /* What can be recorded records into the ambient stream's capture. */
  g_assert_true (resolve_full (call) == ambient);
  g_assert_true (tg_seed_state_advance_full (seeds, &call, NULL, 0, &error));
  g_assert_true (
      tg_producer_run_full (p, &call, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (ambient, &graph));
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, 2);

  /* Registered by no scope, the capture's graph retains the producer. */
  tg_producer_unref (p);
  tg_get_live_objects (&live);
  g_assert_cmpint (live.producers, ==, f->gpu.live.producers + 2);
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  TG_TEST_CUDA (cudaGraphLaunch (exec, ambient));
  TG_TEST_CUDA (cudaGraphLaunch (exec, ambient));
  TG_TEST_CUDA (cudaStreamSynchronize (ambient));
  g_assert_cmpuint (tg_test_read_u32 (&f->counts[0]), ==, 2);
  g_assert_cmpuint (tg_test_read_u32 (&f->counts[1]), ==, 0);
  g_assert_true (tg_seed_state_read (seeds, ambient, NULL, epochs, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < 16; i++)
    g_assert_cmpuint (epochs[i], ==, 2);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_producer_unref (q);
  TG_TEST_CUDA (cudaStreamDestroy (bound));
}

/* What a stage sees of the stream rule. */
typedef struct
{
  cudaStream_t resolved;
  gboolean registered;
} Seen;

static gboolean
seeing_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  Seen *seen = data;

  seen->resolved = tg_stream_resolve (TG_STREAM_AUTO, 0, error);
  seen->registered = tg_capture_is_registered (TG_STREAM_AUTO);
  return seen->resolved != NULL;
}

/* A registered capture is the caller's: a call a stage makes never goes
 * straight into it (its work is the stage's, on the stage's stream), and
 * the scope is there again once the call returns. */
static void
test_rule_stage_sees_no_registered_capture (Fixture *f, gconstpointer data)
{
  Seen seen = { NULL, TRUE };
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  cudaStream_t capturing, fallback;
  TgCaptureScope *scope;
  cudaGraph_t graph = NULL;

  TG_TEST_REQUIRE_GPU ();
  capturing = tg_test_stream_new ();
  fallback = tg_default_stream (0, &error);
  p = tg_producer_new ("sees", 0);
  tg_producer_add_device_stage (p, "sees", TG_STAGE_CAPTURE_SAFE, seeing_stage, &seen,
                                NULL, &error);
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamBeginCapture (capturing, cudaStreamCaptureModeRelaxed));
  scope = tg_capture_scope_begin (capturing, cudaStreamCaptureModeRelaxed, &error);
  g_assert_no_error (error);
  g_assert_true (tg_stream_resolve (TG_STREAM_AUTO, 0, &error) == capturing);
  g_assert_true (
      tg_producer_run (p, f->gpu.stream, TG_POLICY_EAGER, tg_unconditional (), &error));
  g_assert_no_error (error);
  g_assert_true (seen.resolved == fallback);
  g_assert_false (seen.registered);
  g_assert_true (tg_capture_is_registered (TG_STREAM_AUTO));
  tg_capture_scope_free (scope);
  TG_TEST_CUDA (cudaStreamEndCapture (capturing, &graph));
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, 0);
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  TG_TEST_CUDA (cudaStreamSynchronize (f->gpu.stream));
  TG_TEST_CUDA (cudaStreamDestroy (capturing));
}

/* ------------------------------------------------------------------------ */
/* Legacy-stream stages                                                      */

static gboolean
legacy_count_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  /* A plugin that ignores streams: the legacy one, whatever it is given. */
  return tg_test_launched (
      tgt_launch_count (cudaStreamLegacy, tg_launch_get_binding (launch, "counter")),
      error);
}

static void
test_streams_legacy_stage (Fixture *f, gconstpointer data)
{
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  p = tg_test_counter_producer (f->counts, TG_STAGE_LEGACY_STREAM, legacy_count_stage);
  assert_resolves (p, NULL, TG_POLICY_EAGER, cudaStreamLegacy);
  g_assert_true (
      tg_producer_run (p, NULL, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_no_error (error);
  g_assert_false (
      tg_producer_run (p, f->gpu.stream, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_LEGACY_PLUGIN_STREAM);
  TG_TEST_CUDA (cudaDeviceSynchronize ());
  g_assert_cmpuint (tg_test_read_u32 (&f->counts[0]), ==, 1);
}

/* A "plugin" stage that ignores streams and launches on the legacy one. */
static gboolean
legacy_mix_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tgt_launch_mix_legacy (tg_launch_get_binding (launch, "buf"), N, 3)
         == cudaSuccess;
}

static TgProducer *
legacy_producer (guint32 *buf)
{
  TgProducer *p = tg_producer_new ("legacy", 0);
  g_autoptr (GError) error = NULL;
  guint stage;

  stage = tg_producer_add_device_stage (p, "plugin",
                                        TG_STAGE_CAPTURE_SAFE | TG_STAGE_LEGACY_STREAM,
                                        legacy_mix_stage, NULL, NULL, NULL);
  tg_producer_declare_binding (p, stage, "buf", N * sizeof (guint32), NULL);
  g_assert_true (tg_producer_bind (p, "buf", buf, N * sizeof (guint32), &error));
  return p;
}

static void
test_legacy_stage (TgTestGpu *f, gconstpointer data)
{
  const cudaStream_t legacy[] = { cudaStreamLegacy, NULL };
  guint32 *buf;
  TgProducer *p;
  g_autoptr (GError) error = NULL;
  g_autofree guint32 *host = g_new (guint32, N);
  cudaStream_t blocking;
  cudaGraph_t graph = NULL;

  TG_TEST_REQUIRE_GPU ();
  buf = tg_test_device_alloc (N * sizeof (guint32));
  p = legacy_producer (buf);

  /* Under a capture, and on an explicit stream: refused. */
  tg_test_expect_refusal (p, f->stream, TG_POLICY_AUTO, tg_unconditional (),
                          TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_LEGACY_PLUGIN_STREAM);
  g_assert_false (
      tg_producer_run (p, f->stream, TG_POLICY_EAGER, tg_unconditional (), &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_LEGACY_PLUGIN_STREAM);
  g_clear_error (&error);
  /* TG_STREAM_AUTO resolves to TrackGen's default stream, not the legacy one. */
  g_assert_false (
      tg_producer_run (p, TG_STREAM_AUTO, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_LEGACY_PLUGIN_STREAM);
  g_clear_error (&error);

  /* While a blocking stream captures, the legacy stream would join it:
   * refused, and that capture stays intact. */
  TG_TEST_CUDA (cudaStreamCreate (&blocking));
  TG_TEST_CUDA (cudaStreamBeginCapture (blocking, cudaStreamCaptureModeGlobal));
  g_assert_false (tg_producer_run (p, cudaStreamLegacy, TG_POLICY_AUTO,
                                   tg_unconditional (), &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_LEGACY_PLUGIN_STREAM);
  g_clear_error (&error);
  g_assert_true (tg_stream_is_capturing (blocking));
  TG_TEST_CUDA (cudaStreamEndCapture (blocking, &graph));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  TG_TEST_CUDA (cudaStreamDestroy (blocking));

  /* Eagerly on the legacy stream it works (AUTO picks EAGER), named either
   * way: NULL is CUDA's legacy default stream. */
  for (guint k = 0; k < G_N_ELEMENTS (legacy); k++)
    {
      for (guint i = 0; i < N; i++)
        host[i] = i;
      tg_test_upload (buf, host, N * sizeof (guint32));
      g_assert_true (
          tg_producer_run (p, legacy[k], TG_POLICY_AUTO, tg_unconditional (), &error));
      g_assert_no_error (error);
      tg_test_download (host, buf, N * sizeof (guint32));
      for (guint i = 0; i < N; i++)
        g_assert_cmpuint (host[i], ==, i * 3 + ((i >> 7) ^ i));
    }
  tg_producer_unref (p);
  tg_test_device_free (buf);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  TG_TEST_ADD_FIXTURE ("/stream/resolve/null-auto-bound", NULL, test_streams_resolve);
  g_test_add_func ("/stream/rule/refusal-messages", test_rule_refusal_messages);
  TG_TEST_ADD_FIXTURE ("/stream/rule/order", NULL, test_rule_order);
  TG_TEST_ADD_FIXTURE ("/stream/rule/ambient-capture-records-never-beside", NULL,
                       test_rule_ambient_capture);
  TG_TEST_ADD_FIXTURE ("/stream/rule/stage-sees-no-registered-capture", NULL,
                       test_rule_stage_sees_no_registered_capture);
  TG_TEST_ADD_FIXTURE ("/stream/legacy-stage/eager-on-null", NULL,
                       test_streams_legacy_stage);
  TG_TEST_ADD_GPU ("/stream/legacy-stage/refused-unless-eager-on-legacy-stream",
                   test_legacy_stage);
  return g_test_run ();
}
