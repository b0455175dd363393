/* SPDX-License-Identifier: Apache-2.0 */
/* snippets-test.c: the C examples of doc/policies.md and doc/capture.md
 * (doc/snippets/), run, with what the pages say around them asserted; the
 * fixture and helpers of the program.  snippets-test-capture.c has those of
 * capture.md, snippets-test-pages.c of capture-rules.md and errors.md,
 * snippets-test-seeds.c of seeds.md.  Each case names the page and
 * the \snippet it runs.  The declarations of snippets.h (\snippet snippets.h
 * simulator) promise only what snippets-test-kernels.cu defines. */
#include "config.h"
#include "snippets-test.h"

#include <string.h>

/* The simulator's device buffers, in one allocation. */
typedef struct
{
  guint64 keys[TGS_N_ENVS];
  float tracks[TGS_TRACK_ELEMS];
  TgLoopStatus relax_status;
  gint32 any_done, again;
  guint8 done[TGS_N_ENVS];
} SimDevice;

void
tgs_fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  SimDevice *d;

  tg_test_gpu_set_up (&f->gpu, data);
  if (!tg_test_have_gpu ())
    return;
  d = tg_test_device_alloc (sizeof (SimDevice));
  f->sim = (SimBuffers){ .n_envs = TGS_N_ENVS,
                         .done = d->done,
                         .any_done = &d->any_done,
                         .keys = d->keys,
                         .tracks = d->tracks,
                         .again = &d->again,
                         .relax_status = &d->relax_status };
  /* \snippet seeds.c new, which seeds.md's cases check. */
  f->seeds = seeds_for_sim (TGS_N_ENVS, &error);
  g_assert_no_error (error);
  g_assert_nonnull (f->seeds);
  tgs_sim_reset (0);
}

void
tgs_tracks_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;

  tgs_fixture_set_up (f, data);
  if (!tg_test_have_gpu ())
    return;
  tgs_set_done_every_third (f);
  f->tracks = track_producer_new (f->seeds, &f->sim, &error);
  g_assert_no_error (error);
  g_assert_nonnull (f->tracks);
}

void
tgs_fixture_tear_down (Fixture *f, gconstpointer data)
{
  if (tg_test_have_gpu ())
    {
      TG_TEST_CUDA (cudaDeviceSynchronize ());
      g_clear_pointer (&f->tracks, tg_producer_unref);
      g_clear_pointer (&f->seeds, tg_seed_state_unref);
      /* The keys come first: the allocation's start. */
      tg_test_device_free (f->sim.keys);
    }
  tg_test_gpu_tear_down (&f->gpu, data);
}

void
tgs_add_cases (const TgsCase *cases, gsize n)
{
  for (gsize i = 0; i < n; i++)
    g_test_add (cases[i].path, Fixture, cases[i].data, cases[i].set_up, cases[i].func,
                tgs_fixture_tear_down);
}

void
tgs_unbind_keys (TgProducer *p)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (tg_producer_bind (p, "keys", NULL, 0, &error));
  g_assert_no_error (error);
}

void
tgs_assert_keys_unbound (const GError *error)
{
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_UNBOUND);
  g_assert_cmpstr (tg_error_get_stage (error), ==, "keys");
  g_assert_cmpstr (tg_error_get_binding (error), ==, "keys");
}

void
tgs_set_done_every_third (Fixture *f)
{
  guint8 done[TGS_N_ENVS];

  for (guint e = 0; e < TGS_N_ENVS; e++)
    done[e] = e % 3 == 0;
  tg_test_upload (f->sim.done, done, sizeof done);
}

void
tgs_set_i32 (gint32 *device, gint32 value)
{
  tg_test_upload (device, &value, sizeof value);
}

TgLoopStatus
tgs_read_status (const TgLoopStatus *device)
{
  TgLoopStatus status;

  tg_test_download (&status, device, sizeof status);
  return status;
}

void
tgs_assert_status (const TgLoopStatus *device, gint32 iterations, gint32 end)
{
  TgLoopStatus status = tgs_read_status (device);

  g_assert_cmpint (status.iterations, ==, iterations);
  g_assert_cmpint (status.end, ==, end);
}

void
tgs_read_epochs (Fixture *f, guint32 *epochs)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (tg_seed_state_read (f->seeds, f->gpu.stream, NULL, epochs, &error));
  g_assert_no_error (error);
}

void
tgs_assert_generation (Fixture *f, const guint32 *want_epochs, const gboolean *track_of,
                       gboolean keys_filled, const float *tracks_buffer)
{
  g_autoptr (GError) error = NULL;
  guint64 seeds[TGS_N_ENVS], keys[TGS_N_ENVS];
  guint32 epochs[TGS_N_ENVS];
  g_autofree float *tracks = g_new (float, TGS_TRACK_ELEMS);

  g_assert_true (tg_seed_state_read (f->seeds, f->gpu.stream, seeds, epochs, &error));
  g_assert_no_error (error);
  tg_test_download (keys, f->sim.keys, sizeof keys);
  tg_test_download (tracks, tracks_buffer != NULL ? tracks_buffer : f->sim.tracks,
                    TGS_TRACKS_SIZE);
  for (guint e = 0; e < TGS_N_ENVS; e++)
    {
      const float *t = tracks + e * TGS_TRACK_FLOATS;
      guint64 key = tg_effective_seed (seeds[e], epochs[e]);

      g_assert_cmpuint (seeds[e], ==, tg_env_seed (G_GUINT64_CONSTANT (20240607), e));
      g_assert_cmpuint (epochs[e], ==, want_epochs[e]);
      g_assert_cmpuint (keys[e], ==, keys_filled ? key : 0);
      for (guint j = 0; j + 1 < TGS_TRACK_FLOATS; j++)
        g_assert_cmpfloat (t[j], ==, track_of[e] ? tgs_track_value (key, j) : 0.0f);
      g_assert_cmpfloat (t[TGS_TRACK_FLOATS - 1], ==,
                         track_of[e] ? (float)TGS_RELAX_SWEEPS : 0.0f);
    }
}

void
tgs_assert_regenerated (Fixture *f, guint n_calls, const float *tracks)
{
  guint32 epochs[TGS_N_ENVS];
  gboolean track_of[TGS_N_ENVS];

  for (guint e = 0; e < TGS_N_ENVS; e++)
    {
      track_of[e] = e % 3 == 0;
      epochs[e] = track_of[e] ? n_calls : 0;
    }
  tgs_assert_generation (f, epochs, track_of, TRUE, tracks);
  tgs_assert_status (f->sim.relax_status, TGS_RELAX_SWEEPS, TG_LOOP_END_CONVERGED);
}

void
tgs_begin_capture (cudaStream_t stream)
{
  TG_TEST_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal));
}

cudaGraphExec_t
tgs_end_capture (cudaStream_t stream, guint *n_conditionals)
{
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;

  TG_TEST_CUDA (cudaStreamEndCapture (stream, &graph));
  if (n_conditionals != NULL)
    *n_conditionals = tg_test_graph_count_nodes (graph, cudaGraphNodeTypeConditional);
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  return exec;
}

void
tgs_launch (cudaGraphExec_t exec, cudaStream_t stream, guint n)
{
  for (guint i = 0; i < n; i++)
    TG_TEST_CUDA (cudaGraphLaunch (exec, stream));
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
}

void
tgs_wait_user_objects (Fixture *f)
{
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

  while (tg_test_user_objects () > f->gpu.live.user_objects
         && g_get_monotonic_time () < deadline)
    g_usleep (1000);
  g_assert_cmpint (tg_test_user_objects (), ==, f->gpu.live.user_objects);
}

void
tgs_assert_stats (TgProducer *p, guint64 n_captures, guint64 n_replays)
{
  TgRunnerStats stats;

  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_captures, ==, n_captures);
  g_assert_cmpuint (stats.n_replays, ==, n_replays);
}

void
tgs_assert_counts (const TgsCounts *counts, guint32 samples, guint32 sweeps)
{
  g_assert_cmpuint (counts->samples, ==, samples);
  g_assert_cmpuint (counts->sweeps, ==, sweeps);
}

static void
assert_host_calls (guint32 samples, guint32 sweeps)
{
  TgsCounts calls;

  tgs_sim_host_calls (&calls);
  tgs_assert_counts (&calls, samples, sweeps);
}

static void
assert_device_runs (guint32 samples, guint32 sweeps)
{
  TgsCounts runs;

  tgs_sim_device_counts (&runs);
  tgs_assert_counts (&runs, samples, sweeps);
}

/* Asserts that the track producer's work ran @n times on the device, and
 * what it left. */
static void
assert_regenerations (Fixture *f, guint n)
{
  assert_device_runs (n, n * TGS_RELAX_SWEEPS);
  tgs_assert_regenerated (f, n, NULL);
}

/* ------------------------------------------------------------------------ */
/* policies.md                                                              */

/* \snippet producer.c producer (policies.md:26-30): every stage capture-safe,
 * so AUTO outside a capture replays; "A call with one missing or too small
 * is refused before anything runs" (producer.c:94-95), TG_STATE_ERROR_UNBOUND
 * naming the stage and the binding (capture-rules.md:53-55). */
static void
test_producer_bindings (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  guint32 epochs[TGS_N_ENVS];
  cudaStream_t resolved = NULL;
  TgPolicy policy;
  TgProducer *p = f->tracks;

  TG_TEST_REQUIRE_GPU ();
  g_assert_true (tg_producer_resolve (p, f->gpu.stream, TG_POLICY_AUTO,
                                      tg_unconditional (), &policy, &resolved, &error));
  g_assert_no_error (error);
  g_assert_cmpint (policy, ==, TG_POLICY_REPLAY);
  g_assert_true (resolved == f->gpu.stream);

  g_assert_true (tg_producer_bind (p, "tracks", f->sim.tracks, 64, &error));
  g_assert_false (run_auto (p, f->gpu.stream, &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_UNBOUND);
  g_assert_cmpstr (tg_error_get_stage (error), ==, "sample");
  g_assert_cmpstr (tg_error_get_binding (error), ==, "tracks");
  g_clear_error (&error);

  g_assert_true (
      tg_producer_bind (p, "tracks", f->sim.tracks, TGS_TRACKS_SIZE, &error));
  g_assert_no_error (error);
  tgs_unbind_keys (p);
  g_assert_false (run_auto (p, f->gpu.stream, &error));
  tgs_assert_keys_unbound (error);

  /* Nothing ran: no stage function, no epoch advanced, nothing captured. */
  assert_host_calls (0, 0);
  assert_device_runs (0, 0);
  tgs_read_epochs (f, epochs);
  for (guint e = 0; e < TGS_N_ENVS; e++)
    g_assert_cmpuint (epochs[e], ==, 0);
  tgs_assert_stats (p, 0, 0);
}

/* \snippet producer.c seed-stages and track-stages, \snippet policies.c eager
 * (policies.md:16-24, 51-56; seeds.md:103-106): the finished envs' epochs
 * advance, every key is the effective seed, their tracks are sampled and
 * relaxed; "EAGER launches every stage now ... this call returns after the
 * relaxation ended" (policies.c:20-22): a host loop, every sweep launched
 * before the call returns. */
static void
test_eager (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  TgProducer *p = f->tracks;

  TG_TEST_REQUIRE_GPU ();
  g_assert_true (run_eager (p, f->gpu.stream, &error));
  g_assert_no_error (error);
  assert_host_calls (1, TGS_RELAX_SWEEPS);
  assert_regenerations (f, 1);
  tgs_assert_stats (p, 0, 0);
}

/* \snippet policies.c auto (policies.md:41-47): "Not capturing: REPLAY ...
 * the first call captures the producer's own graph, later calls launch it.
 * Capturing: RECORD into the capture in progress on the stream." */
static void
test_auto (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  guint32 *counter;
  cudaGraph_t graph;
  gsize before;
  TgProducer *p = f->tracks;

  TG_TEST_REQUIRE_GPU ();
  g_assert_true (run_auto (p, f->gpu.stream, &error));
  g_assert_true (run_auto (p, f->gpu.stream, &error));
  g_assert_no_error (error);
  tgs_assert_stats (p, 1, 2);
  assert_host_calls (1, 1);
  assert_regenerations (f, 2);

  counter = tg_test_device_alloc (sizeof (guint32));
  graph = tg_test_begin_caller_capture (f->gpu.stream, counter);
  before = tg_test_graph_n_nodes (graph);
  g_assert_true (run_auto (p, f->gpu.stream, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), >, before);
  tg_test_replay_caller_capture (tg_test_end_caller_capture (f->gpu.stream),
                                 f->gpu.stream, counter);
  tgs_assert_stats (p, 1, 2);
  assert_regenerations (f, 3);
  tg_test_device_free (counter);
}

/* \snippet policies.c replay (policies.md:60-62): "REPLAY captures once and
 * then only launches graphs ... one segment: one capture at the first call,
 * one cudaGraphLaunch per call": the stage functions called once, the
 * kernels run at every call. */
static void
test_replay (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  TgRunnerStats stats;

  TG_TEST_REQUIRE_GPU ();
  g_assert_true (run_replay (f->tracks, f->gpu.stream, 5, &error));
  g_assert_no_error (error);
  tg_producer_get_runner_stats (f->tracks, &stats);
  g_assert_cmpuint (stats.n_segments, ==, 1);
  g_assert_cmpuint (stats.n_captures, ==, 1);
  g_assert_cmpuint (stats.n_replays, ==, 5);
  assert_host_calls (1, 1);
  assert_regenerations (f, 5);
}

/* \snippet policies.c record (policies.md:95-106): the caller's capture
 * replays the producer's work at every launch of its graph, the stage
 * functions never called at replay, no own graph made (n_captures counts
 * none of RECORD's).  How often the stage functions are called at record
 * time: once each, as capture-rules.md:331-341 and record.c:9-17 say (a
 * producer with a loop stage: each stage function a unit of the trial,
 * placed by the second pass); policies.md:104-106 and policies.c:78-82 say
 * the stages are called a second time, which capture-rules.md contradicts. */
static void
test_record (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  cudaGraphExec_t exec;

  TG_TEST_REQUIRE_GPU ();
  exec = record_into_own_capture (f->tracks, f->gpu.stream, &error);
  g_assert_no_error (error);
  g_assert_nonnull (exec);
  tg_test_assert_not_capturing (f->gpu.stream);
  assert_host_calls (1, 1);
  tgs_assert_stats (f->tracks, 0, 0);
  assert_device_runs (0, 0);

  tgs_launch (exec, f->gpu.stream, 3);
  assert_host_calls (1, 1);
  assert_regenerations (f, 3);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
}

/* \snippet policies.c record, refused (policies.md:108-111): a #TG_STATE_ERROR
 * leaves the capture as it was, "the example ends it anyway": no stream is
 * left capturing, nothing ran. */
static void
test_record_refused (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  cudaGraphExec_t exec;
  TgProducer *p = f->tracks;

  TG_TEST_REQUIRE_GPU ();
  tgs_unbind_keys (p);
  exec = record_into_own_capture (p, f->gpu.stream, &error);
  g_assert_null (exec);
  tgs_assert_keys_unbound (error);
  tg_test_assert_not_capturing (f->gpu.stream);
  assert_host_calls (0, 0);
}

/* \snippet policies.c conditional (policies.md:118-122): "Outside a capture
 * (REPLAY), the producer's own graph holds an IF node: the device skips the
 * work when *any_done == 0 ... Inside a capture (RECORD), the caller's graph
 * gets the IF node." */
static void
test_conditional (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  cudaGraphExec_t exec;
  guint n_conditionals = 0;
  guint32 epochs[TGS_N_ENVS];
  TgProducer *p = f->tracks;

  TG_TEST_REQUIRE_GPU ();
  g_assert_true (run_conditional (p, f->gpu.stream, f->sim.any_done, &error));
  g_assert_no_error (error);
  assert_device_runs (0, 0);
  tgs_read_epochs (f, epochs);
  for (guint e = 0; e < TGS_N_ENVS; e++)
    g_assert_cmpuint (epochs[e], ==, 0);

  tgs_set_i32 (f->sim.any_done, 1);
  g_assert_true (run_conditional (p, f->gpu.stream, f->sim.any_done, &error));
  g_assert_no_error (error);
  assert_regenerations (f, 1);
  /* One own graph for the flag, captured at the first call. */
  tgs_assert_stats (p, 1, 2);
  assert_host_calls (1, 1);

  tgs_begin_capture (f->gpu.stream);
  g_assert_true (run_conditional (p, f->gpu.stream, f->sim.any_done, &error));
  g_assert_no_error (error);
  exec = tgs_end_capture (f->gpu.stream, &n_conditionals);
  /* The IF node in the caller's graph; the relaxation's WHILE is in its body. */
  g_assert_cmpuint (n_conditionals, ==, 1);
  tgs_assert_stats (p, 1, 2);
  tgs_set_i32 (f->sim.any_done, 0);
  tgs_launch (exec, f->gpu.stream, 1);
  assert_regenerations (f, 1);
  tgs_set_i32 (f->sim.any_done, 1);
  tgs_launch (exec, f->gpu.stream, 1);
  assert_regenerations (f, 2);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
}

/* \snippet policies.c resolve (policies.md:219-222): "runs the policy table
 * without running the producer (it checks the stream's device too, but not
 * the bindings)". */
static void
test_resolve (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  TgProducer *p = f->tracks, *plugin;

  TG_TEST_REQUIRE_GPU ();
  tgs_unbind_keys (p);
  g_test_expect_message (NULL, G_LOG_LEVEL_MESSAGE,
                         "a call would run as replay on stream *");
  g_assert_true (explain_policy (p, f->gpu.stream));
  g_test_assert_expected_messages ();

  tgs_begin_capture (f->gpu.stream);
  g_test_expect_message (NULL, G_LOG_LEVEL_MESSAGE,
                         "a call would run as record on stream *");
  g_assert_true (explain_policy (p, f->gpu.stream));
  g_test_assert_expected_messages ();
  TG_TEST_CUDA (cudaStreamEndCapture (f->gpu.stream, &graph));
  g_assert_cmpuint (tg_test_graph_n_nodes (graph), ==, 0);
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  assert_host_calls (0, 0);
  tgs_assert_stats (p, 0, 0);

  plugin = legacy_plugin_producer_new ();
  g_test_expect_message (NULL, G_LOG_LEVEL_MESSAGE,
                         "a call would be refused: *stage 'plugin'*");
  g_assert_false (explain_policy (plugin, f->gpu.stream));
  g_test_assert_expected_messages ();
  tg_producer_unref (plugin);
}

static const TgsCase cases[] = {
  TGS_TRACKS_CASE ("/snippets/policies/producer-declared-bindings",
                   test_producer_bindings),
  TGS_TRACKS_CASE ("/snippets/policies/eager", test_eager),
  TGS_TRACKS_CASE ("/snippets/policies/auto", test_auto),
  TGS_TRACKS_CASE ("/snippets/policies/replay", test_replay),
  TGS_TRACKS_CASE ("/snippets/policies/record", test_record),
  TGS_TRACKS_CASE ("/snippets/policies/record-refused", test_record_refused),
  TGS_TRACKS_CASE ("/snippets/policies/conditional", test_conditional),
  TGS_TRACKS_CASE ("/snippets/policies/resolve", test_resolve),
};

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  tgs_add_cases (cases, G_N_ELEMENTS (cases));
  tgs_add_capture_cases ();
  tgs_add_page_cases ();
  tgs_add_seeds_cases ();
  return g_test_run ();
}
