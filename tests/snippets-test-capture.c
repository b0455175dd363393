/* SPDX-License-Identifier: Apache-2.0 */
/* snippets-test-capture.c: the C examples of doc/capture.md (doc/snippets/),
 * run, with what the page says around them asserted. */
#include "config.h"
#include "snippets-test.h"

/* \snippet policies.c bound-stream (capture.md:100-105): "Calls that pass
 * TG_STREAM_AUTO use the bound stream, unless a capture scope is registered
 * on this thread (its stream comes first)." */
static void
test_bound_stream (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  cudaStream_t resolved = NULL, other;
  TgCaptureScope *scope;
  cudaGraph_t graph = NULL;
  TgPolicy policy;
  TgProducer *p = f->tracks;

  TG_TEST_REQUIRE_GPU ();
  g_assert_true (run_on_bound_stream (p, f->gpu.stream, &error));
  g_assert_no_error (error);
  tgs_assert_regenerated (f, 1, NULL);
  g_assert_true (tg_producer_resolve (p, TG_STREAM_AUTO, TG_POLICY_AUTO,
                                      tg_unconditional (), &policy, &resolved, &error));
  g_assert_true (resolved == f->gpu.stream);
  g_assert_cmpint (policy, ==, TG_POLICY_REPLAY);

  other = tg_test_stream_new ();
  tgs_begin_capture (other);
  scope = tg_capture_scope_begin (other, cudaStreamCaptureModeThreadLocal, &error);
  g_assert_no_error (error);
  g_assert_true (tg_producer_resolve (p, TG_STREAM_AUTO, TG_POLICY_AUTO,
                                      tg_unconditional (), &policy, &resolved, &error));
  g_assert_no_error (error);
  g_assert_true (resolved == other);
  g_assert_cmpint (policy, ==, TG_POLICY_RECORD);
  g_assert_true (tg_capture_scope_end (scope, &error));
  g_assert_no_error (error);
  tg_capture_scope_free (scope);
  TG_TEST_CUDA (cudaStreamEndCapture (other, &graph));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  TG_TEST_CUDA (cudaStreamDestroy (other));
}

static const TgPolicy policies[]
    = { TG_POLICY_EAGER, TG_POLICY_REPLAY, TG_POLICY_RECORD };

/* \snippet conditions.c switch, else and producer (capture.md:268-285): the
 * switch "runs body number *index, none when it is negative or not below
 * the number of bodies", captured as one SWITCH node; the guarded stage
 * with an else branch is one IF node with two bodies (two conditional
 * nodes in all; CUDA gives no way to tell their kinds apart); eagerly the
 * same results. */
static void
test_conditions (Fixture *f, gconstpointer data)
{
  static const struct
  {
    gint32 kind, night;
  } inputs[] = { { 0, 1 }, { 1, 0 }, { 2, 1 }, { 3, 0 }, { -1, 1 } };
  g_autofree float *tracks = g_new (float, TGS_TRACK_ELEMS);
  g_autoptr (GError) error = NULL;
  gint32 *kind, *night;
  int driver = 0;
  TgProducer *p;

  TG_TEST_REQUIRE_GPU ();
  TG_TEST_CUDA (cudaDriverGetVersion (&driver));
  if (driver < 12080)
    {
      g_test_skip ("else branches and switches need CUDA 12.8 in the driver");
      return;
    }
  tgs_set_done_every_third (f);
  kind = tg_test_device_alloc (sizeof (gint32));
  night = tg_test_device_alloc (sizeof (gint32));
  p = layout_producer_new (&f->sim);
  g_assert_true (tg_producer_bind (p, "kind", kind, sizeof (gint32), &error));
  g_assert_true (tg_producer_bind (p, "night", night, sizeof (gint32), &error));
  g_assert_true (tg_producer_bind (p, "done", f->sim.done, TGS_N_ENVS, &error));
  g_assert_true (
      tg_producer_bind (p, "tracks", f->sim.tracks, TGS_TRACKS_SIZE, &error));
  g_assert_no_error (error);
  for (guint k = 0; k < G_N_ELEMENTS (policies); k++)
    {
      cudaGraphExec_t exec = NULL;

      if (policies[k] == TG_POLICY_RECORD)
        {
          guint n_conditionals = 0;

          tgs_begin_capture (f->gpu.stream);
          g_assert_true (tg_producer_run (p, f->gpu.stream, TG_POLICY_RECORD,
                                          tg_unconditional (), &error));
          g_assert_no_error (error);
          exec = tgs_end_capture (f->gpu.stream, &n_conditionals);
          g_assert_cmpuint (n_conditionals, ==, 2);
        }
      for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
        {
          gboolean laid = inputs[i].kind >= 0 && inputs[i].kind < 3;

          g_test_message ("%s, kind %d, night %d", tg_policy_to_string (policies[k]),
                          inputs[i].kind, inputs[i].night);
          tg_test_device_clear (f->sim.tracks, TGS_TRACKS_SIZE);
          tgs_set_i32 (kind, inputs[i].kind);
          tgs_set_i32 (night, inputs[i].night);
          if (exec != NULL)
            tgs_launch (exec, f->gpu.stream, 1);
          else
            tg_test_run_once (f->gpu.stream, p, policies[k], tg_unconditional ());
          tg_test_download (tracks, f->sim.tracks, TGS_TRACKS_SIZE);
          for (guint e = 0; e < TGS_N_ENVS; e++)
            {
              const float *t = tracks + e * TGS_TRACK_FLOATS;
              gboolean done = e % 3 == 0;

              g_assert_cmpfloat (t[1], ==,
                                 done && laid ? 1000.0f + inputs[i].kind : 0.0f);
              g_assert_cmpfloat (t[2], ==,
                                 !done             ? 0.0f
                                 : inputs[i].night ? 2.0f
                                                   : 1.0f);
            }
        }
      if (policies[k] == TG_POLICY_REPLAY)
        tgs_assert_stats (p, 1, G_N_ELEMENTS (inputs));
      if (exec != NULL)
        TG_TEST_CUDA (cudaGraphExecDestroy (exec));
    }
  tg_producer_unref (p);
  tg_test_device_free (kind);
  tg_test_device_free (night);
}

/* The done byte the step kernel of kernel-decisions.cu writes. */
static gboolean
decided_done (guint32 e)
{
  return (guint32)(e * 2654435761u) % 97u == 0u;
}

/* Tracks before a relaxation of kernel-decisions.cu: t[0] = 7, t[1] = 2,
 * t[63] = 4, so a sweep moves t[0] to 3 and the next one leaves it. */
static void
set_deciding_tracks (Fixture *f)
{
  g_autofree float *tracks = g_new0 (float, TGS_TRACK_ELEMS);
  TgLoopStatus unset = { 99, 99 };

  for (guint e = 0; e < TGS_N_ENVS; e++)
    {
      tracks[e * TGS_TRACK_FLOATS] = 7.0f;
      tracks[e * TGS_TRACK_FLOATS + 1] = 2.0f;
      tracks[e * TGS_TRACK_FLOATS + TGS_TRACK_FLOATS - 1] = 4.0f;
    }
  tg_test_upload (f->sim.tracks, tracks, TGS_TRACKS_SIZE);
  tg_test_upload (f->sim.relax_status, &unset, sizeof unset);
}

/* Asserts t[0] of every env: relaxed to 3 where @relaxed[e], else still 7. */
static void
assert_deciding_tracks (Fixture *f, const gboolean *relaxed)
{
  g_autofree float *tracks = g_new (float, TGS_TRACK_ELEMS);

  tg_test_download (tracks, f->sim.tracks, TGS_TRACKS_SIZE);
  for (guint e = 0; e < TGS_N_ENVS; e++)
    {
      const float *t = tracks + e * TGS_TRACK_FLOATS;

      g_assert_cmpfloat (t[0], ==, relaxed[e] ? 3.0f : 7.0f);
      g_assert_cmpfloat (t[1], ==, 2.0f);
      g_assert_cmpfloat (t[TGS_TRACK_FLOATS - 1], ==, 4.0f);
    }
}

/* \snippet kernel-decisions.cu kernels, kernel-decisions.c loop, if and
 * stage (capture.md:323-344): the step kernel decides the IF, the relax
 * kernel its loop through tg_loop_next(), which "counts the iteration in
 * the TgLoopStatus and folds the cap in exactly as TrackGen's tail kernel
 * does"; "The kernel is the same under every policy, and so are the
 * results."  Env 0 always finishes, so the IF is taken. */
static void
test_kernel_decisions (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gboolean done[TGS_N_ENVS];
  guint8 device_done[TGS_N_ENVS];
  TgProducer *p;

  TG_TEST_REQUIRE_GPU ();
  for (guint e = 0; e < TGS_N_ENVS; e++)
    done[e] = decided_done (e);
  p = deciding_producer_new (&f->sim);
  g_assert_true (tg_producer_bind (p, "done", f->sim.done, TGS_N_ENVS, &error));
  g_assert_true (
      tg_producer_bind (p, "tracks", f->sim.tracks, TGS_TRACKS_SIZE, &error));
  g_assert_no_error (error);
  for (guint k = 0; k < G_N_ELEMENTS (policies); k++)
    {
      g_test_message ("%s", tg_policy_to_string (policies[k]));
      tg_test_device_clear (f->sim.done, TGS_N_ENVS);
      set_deciding_tracks (f);
      tg_test_run_once (f->gpu.stream, p, policies[k], tg_unconditional ());
      tg_test_download (device_done, f->sim.done, sizeof device_done);
      for (guint e = 0; e < TGS_N_ENVS; e++)
        g_assert_cmpuint (device_done[e], ==, done[e]);
      assert_deciding_tracks (f, done);
      tgs_assert_status (f->sim.relax_status, 2, TG_LOOP_END_CONVERGED);
    }
  tg_producer_unref (p);
}

/* \snippet kernel-decisions.c stage, add_relax_stage() (capture.md:76-77 of
 * the file, 337-344 of the page): "the body decides, the flag is read at
 * entry only (0: skipped)". */
static void
test_relax_stage (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  gboolean done[TGS_N_ENVS], none[TGS_N_ENVS] = { FALSE };
  TgProducer *p;

  TG_TEST_REQUIRE_GPU ();
  tgs_set_done_every_third (f);
  for (guint e = 0; e < TGS_N_ENVS; e++)
    done[e] = e % 3 == 0;
  p = tg_producer_new ("relax", 0);
  add_relax_stage (p, &f->sim);
  g_assert_true (tg_producer_bind (p, "done", f->sim.done, TGS_N_ENVS, &error));
  g_assert_true (
      tg_producer_bind (p, "tracks", f->sim.tracks, TGS_TRACKS_SIZE, &error));
  g_assert_true (tg_producer_bind (p, "again", f->sim.again, sizeof (gint32), &error));
  g_assert_true (tg_producer_bind (p, "relax_status", f->sim.relax_status,
                                   sizeof (TgLoopStatus), &error));
  g_assert_no_error (error);
  for (guint k = 0; k < G_N_ELEMENTS (policies); k++)
    for (gint32 again = 1; again >= 0; again--)
      {
        g_test_message ("%s, again %d", tg_policy_to_string (policies[k]), again);
        set_deciding_tracks (f);
        tgs_set_i32 (f->sim.again, again);
        tg_test_run_once (f->gpu.stream, p, policies[k], tg_unconditional ());
        assert_deciding_tracks (f, again ? done : none);
        if (again)
          tgs_assert_status (f->sim.relax_status, 2, TG_LOOP_END_CONVERGED);
        else
          tgs_assert_status (f->sim.relax_status, 0, TG_LOOP_END_SKIPPED);
      }
  /* REPLAY captured once: the flag is read on the device. */
  tgs_assert_stats (p, 1, 2);
  tg_producer_unref (p);
}

/* \snippet step-graph.c step-graph (capture.md:380-401): the step graph
 * holds the regeneration recorded once, "all skipped on the device when no
 * env finished" (step-graph.c:31-33); "One launch per step: no host round
 * trip, no re-capture".  Data: the period of the envs' episodes; 0, no env
 * ever finishes: "the whole regeneration costs one skipped conditional
 * node in the steps where no env finished" (capture.md:400-401). */
static void
test_step_graph (Fixture *f, gconstpointer data)
{
  const guint period = GPOINTER_TO_UINT (data), n_steps = 15;
  g_autoptr (GError) error = NULL;
  guint32 epochs[TGS_N_ENVS] = { 0 };
  gboolean track_of[TGS_N_ENVS] = { FALSE };
  guint regenerations = 0;
  cudaGraphExec_t exec;
  TgsCounts calls, runs;
  TgProducer *regen = f->tracks;

  TG_TEST_REQUIRE_GPU ();
  tgs_sim_reset (period);
  exec = step_graph_new (&f->sim, regen, f->gpu.stream, &error);
  g_assert_no_error (error);
  g_assert_nonnull (exec);
  tg_test_assert_not_capturing (f->gpu.stream);
  /* Recorded once (capture-rules.md:331-336); no own graph. */
  tgs_sim_host_calls (&calls);
  g_assert_cmpuint (calls.steps, ==, 1);
  tgs_assert_counts (&calls, 1, 1);
  tgs_assert_stats (regen, 0, 0);

  g_assert_true (step_graph_run (exec, f->gpu.stream, n_steps, &error));
  g_assert_no_error (error);
  tgs_sim_host_calls (&calls);
  g_assert_cmpuint (calls.steps, ==, 1);
  tgs_assert_counts (&calls, 1, 1);
  tgs_assert_stats (regen, 0, 0);

  for (guint s = 0; s < n_steps; s++)
    {
      gboolean any = FALSE;

      for (guint e = 0; e < TGS_N_ENVS; e++)
        if (period != 0 && (e + s) % period == 0)
          {
            epochs[e]++;
            track_of[e] = any = TRUE;
          }
      regenerations += any;
    }
  tgs_sim_device_counts (&runs);
  g_assert_cmpuint (runs.steps, ==, n_steps);
  tgs_assert_counts (&runs, regenerations, regenerations * TGS_RELAX_SWEEPS);
  tgs_assert_generation (f, epochs, track_of, regenerations > 0, NULL);
  if (regenerations > 0)
    tgs_assert_status (f->sim.relax_status, TGS_RELAX_SWEEPS, TG_LOOP_END_CONVERGED);
  else
    tgs_assert_status (f->sim.relax_status, 0, 0);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
}

/* \snippet step-graph.c step-graph, refused: "Always end the capture: no
 * stream is left capturing" (step-graph.c:37). */
static void
test_step_graph_refused (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  TgsCounts calls;

  TG_TEST_REQUIRE_GPU ();
  tgs_unbind_keys (f->tracks);
  g_assert_null (step_graph_new (&f->sim, f->tracks, f->gpu.stream, &error));
  tgs_assert_keys_unbound (error);
  tg_test_assert_not_capturing (f->gpu.stream);
  tgs_sim_host_calls (&calls);
  tgs_assert_counts (&calls, 0, 0);
}

static const TgsCase cases[] = {
  TGS_TRACKS_CASE ("/snippets/capture/bound-stream", test_bound_stream),
  TGS_CASE ("/snippets/capture/switch-and-else", test_conditions),
  TGS_CASE ("/snippets/capture/kernel-decisions", test_kernel_decisions),
  TGS_CASE ("/snippets/capture/relax-stage", test_relax_stage),
  { "/snippets/capture/step-graph/some-finish", test_step_graph, tgs_tracks_set_up,
    GUINT_TO_POINTER (50) },
  { "/snippets/capture/step-graph/none-finish", test_step_graph, tgs_tracks_set_up,
    GUINT_TO_POINTER (0) },
  TGS_TRACKS_CASE ("/snippets/capture/step-graph/refused-ends-capture",
                   test_step_graph_refused),

};

void
tgs_add_capture_cases (void)
{
  tgs_add_cases (cases, G_N_ELEMENTS (cases));
}
