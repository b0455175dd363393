/* SPDX-License-Identifier: Apache-2.0 */
/* snippets-test-pages.c: the C examples of doc/capture-rules.md and
 * doc/errors.md (doc/snippets/), run, with what the pages say around them
 * asserted. */
#include "config.h"
#include "snippets-test.h"

#include <glib/gstdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* capture-rules.md                                                         */

typedef struct
{
  guint32 *params; /* device, 4 */
  guint32 *pinned; /* cudaMallocHost, 4 */
  gint32 *reset;   /* device */
  TgProducer *producer;
} Rules;

/* rules_producer_new() over new buffers, "reset" bound unless @unbound. */
static void
rules_init (Rules *r, gboolean unbound)
{
  g_autoptr (GError) error = NULL;

  r->params = tg_test_device_alloc (4 * sizeof (guint32));
  r->reset = tg_test_device_alloc (sizeof (gint32));
  TG_TEST_CUDA (cudaMallocHost ((void **)&r->pinned, 4 * sizeof (guint32)));
  r->producer = rules_producer_new (r->params, r->pinned);
  g_assert_nonnull (r->producer);
  if (!unbound)
    g_assert_true (
        tg_producer_bind (r->producer, "reset", r->reset, sizeof (gint32), &error));
  g_assert_no_error (error);
}

static void
rules_clear (Rules *r)
{
  TG_TEST_CUDA (cudaDeviceSynchronize ());
  g_clear_pointer (&r->producer, tg_producer_unref);
  tg_test_device_free (r->params);
  tg_test_device_free (r->reset);
  TG_TEST_CUDA (cudaFreeHost (r->pinned));
}

/* One AUTO call with the pinned parameters @a..@a+3 and @reset; asserts
 * what the device then holds: the upload, cleared when @reset. */
static void
rules_call (Rules *r, cudaStream_t stream, guint32 a, gint32 reset)
{
  g_autoptr (GError) error = NULL;
  guint32 params[4];

  for (guint i = 0; i < 4; i++)
    r->pinned[i] = a + i;
  tgs_set_i32 (r->reset, reset);
  g_assert_true (run_auto (r->producer, stream, &error));
  g_assert_no_error (error);
  /* The checksum stage's readback waited for everything before it. */
  g_assert_cmpint (cudaStreamQuery (stream), ==, cudaSuccess);
  tg_test_download (params, r->params, sizeof params);
  for (guint i = 0; i < 4; i++)
    g_assert_cmpuint (params[i], ==, reset ? 0 : a + i);
}

/* \snippet rules.c rules-data, host-safe, host-readback, nested and declare
 * (capture-rules.md:69-80): "Outside a capture AUTO replays it: one own
 * graph holding maybe-clear (with its IF node), launched between the two
 * HOST stages.  Inside a capture the call is refused, naming the checksum
 * stage."  And rules.c: "reset" bound before the first run, "or every call
 * is refused with TG_STATE_ERROR_UNBOUND" (rules.c:100-101); the pinned
 * parameters "read again at every replay" (rules.c:9); "a readback
 * eagerly" (rules.c:74).  What the HOST stages keep on the host (the
 * checksum, the steps counted) is the snippet's own, out of reach. */
static void
test_rules (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  guint32 *counter, params[4];
  TgRunnerStats stats;
  cudaStream_t resolved;
  cudaGraph_t graph;
  TgPolicy policy;
  gsize before;
  Rules r;

  TG_TEST_REQUIRE_GPU ();
  rules_init (&r, TRUE);
  g_assert_false (run_auto (r.producer, f->gpu.stream, &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_UNBOUND);
  g_assert_cmpstr (tg_error_get_stage (error), ==, "maybe-clear");
  g_assert_cmpstr (tg_error_get_binding (error), ==, "reset");
  g_clear_error (&error);
  g_assert_true (
      tg_producer_bind (r.producer, "reset", r.reset, sizeof (gint32), &error));
  g_assert_no_error (error);

  g_assert_true (tg_producer_resolve (r.producer, f->gpu.stream, TG_POLICY_AUTO,
                                      tg_unconditional (), &policy, &resolved, &error));
  g_assert_cmpint (policy, ==, TG_POLICY_REPLAY);
  rules_call (&r, f->gpu.stream, 1, 0);
  rules_call (&r, f->gpu.stream, 1, 1);
  rules_call (&r, f->gpu.stream, 5, 0);
  tg_producer_get_runner_stats (r.producer, &stats);
  g_assert_cmpuint (stats.n_segments, ==, 1);
  g_assert_cmpuint (stats.n_captures, ==, 1);
  g_assert_cmpuint (stats.n_replays, ==, 3);

  counter = tg_test_device_alloc (sizeof (guint32));
  graph = tg_test_begin_caller_capture (f->gpu.stream, counter);
  before = tg_test_graph_n_nodes (graph);
  g_assert_false (run_auto (r.producer, f->gpu.stream, &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  g_assert_cmpstr (tg_error_get_stage (error), ==, "checksum");
  g_clear_error (&error);
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, before);
  g_assert_true (tg_stream_is_capturing (f->gpu.stream));
  tg_test_replay_caller_capture (tg_test_end_caller_capture (f->gpu.stream),
                                 f->gpu.stream, counter);
  tg_test_device_free (counter);

  for (guint i = 0; i < 4; i++)
    r.pinned[i] = 9;
  tgs_set_i32 (r.reset, 1);
  tg_test_run_once (f->gpu.stream, r.producer, TG_POLICY_EAGER, tg_unconditional ());
  tg_test_download (params, r.params, sizeof params);
  for (guint i = 0; i < 4; i++)
    g_assert_cmpuint (params[i], ==, 0);
  rules_clear (&r);
}

/* \snippet rules.c legacy (capture-rules.md:84-94): "its producer runs only
 * eagerly, on the legacy stream ... Any other call is refused with
 * TG_CAPTURE_ERROR_LEGACY_PLUGIN_STREAM, whose message says how to port the
 * stage: launch on tg_launch_get_stream()." */
static void
test_legacy (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  TgProducer *plugin;
  TgsCounts runs;

  TG_TEST_REQUIRE_GPU ();
  plugin = legacy_plugin_producer_new ();
  g_assert_true (legacy_plugin_run (plugin, &error));
  g_assert_no_error (error);
  tgs_sim_device_counts (&runs);
  g_assert_cmpuint (runs.plugin_runs, ==, 1);

  g_assert_false (tg_producer_run (plugin, f->gpu.stream, TG_POLICY_AUTO,
                                   tg_unconditional (), &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_LEGACY_PLUGIN_STREAM);
  g_assert_cmpstr (tg_error_get_stage (error), ==, "plugin");
  g_assert_nonnull (strstr (error->message, "tg_launch_get_stream()"));
  g_clear_error (&error);
  g_assert_false (tg_producer_run (plugin, cudaStreamLegacy, TG_POLICY_REPLAY,
                                   tg_unconditional (), &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_LEGACY_PLUGIN_STREAM);
  tg_test_expect_refusal (plugin, f->gpu.stream, TG_POLICY_AUTO, tg_unconditional (),
                          TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_LEGACY_PLUGIN_STREAM);
  tgs_sim_device_counts (&runs);
  g_assert_cmpuint (runs.plugin_runs, ==, 1);
  tg_producer_unref (plugin);
}

/* ------------------------------------------------------------------------ */
/* errors.md                                                                */

/* \snippet errors.c refusal (errors.md:44-47): "A refusal comes before
 * anything is recorded, so a caller can tell 'not in this graph' from 'this
 * graph is broken' and go on capturing"; a TG_STATE_ERROR "stopped before it
 * changed the capture" (errors.c:25-26) and is reported. */
static void
test_refusal (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  TgProducer *unbound;
  gboolean recorded = TRUE;
  gsize before, after;
  guint32 *counter;
  cudaGraph_t graph;
  Rules r;

  TG_TEST_REQUIRE_GPU ();
  rules_init (&r, FALSE);
  unbound = track_producer_new (f->seeds, &f->sim, &error);
  g_assert_no_error (error);
  tgs_unbind_keys (unbound);

  counter = tg_test_device_alloc (sizeof (guint32));
  graph = tg_test_begin_caller_capture (f->gpu.stream, counter);
  before = tg_test_graph_n_nodes (graph);
  g_test_expect_message (NULL, G_LOG_LEVEL_MESSAGE, "not in the graph: *'checksum'*");
  g_assert_true (record_or_run_apart (r.producer, f->gpu.stream, &recorded, &error));
  g_test_assert_expected_messages ();
  g_assert_no_error (error);
  g_assert_false (recorded);
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, before);

  g_assert_true (record_or_run_apart (f->tracks, f->gpu.stream, &recorded, &error));
  g_assert_no_error (error);
  g_assert_true (recorded);
  after = tg_test_graph_n_nodes (graph);
  g_assert_cmpuint (after, >, before);

  g_assert_false (record_or_run_apart (unbound, f->gpu.stream, &recorded, &error));
  g_assert_false (recorded);
  tgs_assert_keys_unbound (error);
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, after);
  g_assert_true (tg_stream_is_capturing (f->gpu.stream));
  tg_test_replay_caller_capture (tg_test_end_caller_capture (f->gpu.stream),
                                 f->gpu.stream, counter);
  tgs_assert_regenerated (f, 1, NULL);
  tg_test_device_free (counter);
  tg_producer_unref (unbound);
  rules_clear (&r);
}

/* \snippet errors.c cuda-code (errors.md:133): "TG_CUDA_ERROR's code is the
 * cudaError_t itself"; no name for another domain or no error.  Host. */
static void
test_cuda_code (void)
{
  g_autoptr (GError) cuda = g_error_new (TG_CUDA_ERROR, cudaErrorMemoryAllocation, "x");
  g_autoptr (GError) state = g_error_new (TG_STATE_ERROR, TG_STATE_ERROR_UNBOUND, "x");

  g_assert_cmpstr (cuda_error_name_of (cuda), ==, "cudaErrorMemoryAllocation");
  g_assert_null (cuda_error_name_of (state));
  g_assert_null (cuda_error_name_of (NULL));
}

/* \snippet errors.c cuda-code, on a call's error: a stage's TG_CUDA_ERROR
 * comes back from tg_producer_run() with its code (errors.md:23-27: a
 * stage's error keeps its domain, prefixed). */
static void
test_cuda_code_of_stage (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  tgs_sim_fail_next_sample (cudaErrorInvalidConfiguration);
  g_assert_false (run_eager (f->tracks, f->gpu.stream, &error));
  g_assert_nonnull (error);
  g_assert_cmpint (error->code, ==, cudaErrorInvalidConfiguration);
  g_assert_cmpstr (cuda_error_name_of (error), ==, "cudaErrorInvalidConfiguration");
  TG_TEST_CUDA (cudaStreamSynchronize (f->gpu.stream));
}

/* \snippet errors.c live-objects (errors.md:137-144): "A leak check reads
 * the counters": what a producer and its own graph hold counts until the
 * producer is gone, its release waited for. */
static void
test_live_objects (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  TgProducer *p;

  TG_TEST_REQUIRE_GPU ();
  g_assert_true (nothing_leaked ());
  tgs_set_done_every_third (f);
  p = track_producer_new (f->seeds, &f->sim, &error);
  g_assert_no_error (error);
  g_assert_false (nothing_leaked ());
  g_assert_true (run_auto (p, f->gpu.stream, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (f->gpu.stream));
  g_assert_false (nothing_leaked ());
  tg_producer_unref (p);
  tgs_wait_user_objects (f);
  g_assert_true (nothing_leaked ());
}

/* \snippet errors.c rebind-handler (errors.md:148-157): a rebind of a
 * captured producer is counted and handed to the handler, which took it:
 * no RebindAfterCaptureWarning (fatal under g_test_init); "The producer's
 * own graphs follow at the next call".  A bind before the first capture
 * is no rebind. */
static void
test_rebind_handler (Fixture *f, gconstpointer data)
{
  const gsize size = TGS_TRACK_ELEMS * sizeof (float);
  g_autoptr (GError) error = NULL;
  gboolean stale = FALSE;
  TgRunnerStats stats;
  float *other;
  TgProducer *p = f->tracks;

  TG_TEST_REQUIRE_GPU ();
  other = tg_test_device_alloc (size);
  watch_rebinds (p, &stale);
  g_assert_true (tg_producer_bind (p, "tracks", other, size, &error));
  g_assert_true (tg_producer_bind (p, "tracks", f->sim.tracks, size, &error));
  g_assert_no_error (error);
  g_assert_false (stale);

  g_assert_true (run_auto (p, f->gpu.stream, &error));
  g_assert_no_error (error);
  g_assert_true (tg_producer_bind (p, "tracks", other, size, &error));
  g_assert_no_error (error);
  g_assert_true (stale);
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_rebinds, ==, 1);

  g_assert_true (run_auto (p, f->gpu.stream, &error));
  g_assert_no_error (error);
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_captures, ==, 2);
  g_assert_cmpuint (stats.n_updates + stats.n_recaptures, ==, 1);
  g_assert_cmpint (stats.last_rebind, !=, TG_REBIND_NONE);
  tgs_assert_regenerated (f, 2, other);
  tg_producer_set_rebind_handler (p, NULL, NULL, NULL);
  tg_test_device_free (other);
}

static const TgsCase cases[] = {
  TGS_CASE ("/snippets/rules/replayed-refused-in-capture", test_rules),
  TGS_CASE ("/snippets/rules/legacy-stream", test_legacy),
  TGS_TRACKS_CASE ("/snippets/errors/refusal", test_refusal),
  TGS_TRACKS_CASE ("/snippets/errors/cuda-code-of-stage", test_cuda_code_of_stage),
  TGS_CASE ("/snippets/errors/live-objects", test_live_objects),
  TGS_TRACKS_CASE ("/snippets/errors/rebind-handler", test_rebind_handler),
};

void
tgs_add_page_cases (void)
{
  g_test_add_func ("/snippets/errors/cuda-code", test_cuda_code);
  tgs_add_cases (cases, G_N_ELEMENTS (cases));
}
