/* SPDX-License-Identifier: Apache-2.0 */
/* producer-test.c: producers.  Bindings: those a stage declares are checked
 * before anything runs, a lookup of one it did not declare is a critical, a
 * stage's condition must be bound, and bound sizes are checked against the
 * allocation.  The rebind handler and counter.  A call from inside its own
 * stage fails, and so do a resolve and a stream binding; calls nest ten
 * deep.  The cases that run kernels check what they counted on the device. */
#include "config.h"
#include "tg-test.h"

#include <string.h>

/* Two device counters. */
TG_TEST_DEFINE_GPU_FIXTURE (guint32, counts, 2)

/* ------------------------------------------------------------------------ */
/* Bindings                                                                  */

#define BUF_MIN 64

static gboolean
count_mix_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_count_bound_stage (launch, data, error)
         && tg_test_launched (tgt_launch_mix (tg_launch_get_stream (launch),
                                              tg_launch_get_binding (launch, "buf"),
                                              BUF_MIN / sizeof (guint32), 3),
                              error);
}

static void
expect_unbound (Fixture *f, TgProducer *p, const char *why)
{
  g_autoptr (GError) error = NULL;

  g_assert_false (
      tg_producer_run (p, f->gpu.stream, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_UNBOUND);
  g_assert_nonnull (strstr (error->message, "stage 'count'"));
  g_assert_nonnull (strstr (error->message, "binding 'buf'"));
  g_assert_nonnull (strstr (error->message, why));
  g_assert_cmpstr (tg_error_get_producer (error), ==, tg_producer_get_name (p));
  g_assert_cmpstr (tg_error_get_stage (error), ==, "count");
  g_assert_cmpstr (tg_error_get_binding (error), ==, "buf");
  TG_TEST_CUDA (cudaStreamSynchronize (f->gpu.stream));
  g_assert_cmpuint (tg_test_read_u32 (&f->counts[0]), ==, 0);
}

static void
test_bindings_declared (Fixture *f, gconstpointer data)
{
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  gpointer small, right;

  TG_TEST_REQUIRE_GPU ();
  small = tg_test_device_alloc (BUF_MIN / 2);
  right = tg_test_device_alloc (BUF_MIN);
  p = tg_test_counter_producer (f->counts, TG_STAGE_CAPTURE_SAFE, count_mix_stage);
  tg_producer_declare_binding (p, 0, "buf", BUF_MIN, NULL);
  expect_unbound (f, p, "not bound");
  g_assert_true (tg_producer_bind (p, "buf", small, BUF_MIN / 2, &error));
  expect_unbound (f, p, "too small");
  g_assert_true (tg_producer_bind (p, "buf", right, BUF_MIN, &error));
  g_assert_true (
      tg_producer_run (p, f->gpu.stream, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (f->gpu.stream));
  g_assert_cmpuint (tg_test_read_u32 (&f->counts[0]), ==, 1);
  g_clear_pointer (&p, tg_producer_unref);
  tg_test_device_free (small);
  tg_test_device_free (right);
}

static gboolean
undeclared_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  /* Asking for the size is no misuse: 0, and no critical. */
  g_assert_cmpuint (tg_launch_get_binding_size (launch, "counter"), ==, 0);
  /* The lookup's critical is fatal in a test program. */
  return tg_launch_get_binding (launch, "counter") != NULL;
}

static void
test_bindings_undeclared (Fixture *f, gconstpointer data)
{
  TG_TEST_REQUIRE_GPU ();
  if (g_test_subprocess ())
    {
      g_autoptr (TgProducer) p = tg_producer_new ("typo", 0);

      /* Bound but not declared: the lookup fails for the declaration alone. */
      tg_producer_add_device_stage (p, "lookup", TG_STAGE_CAPTURE_SAFE,
                                    undeclared_stage, NULL, NULL, NULL);
      g_assert_true (
          tg_producer_bind (p, "counter", &f->counts[0], sizeof (guint32), NULL));
      tg_producer_run (p, f->gpu.stream, TG_POLICY_EAGER, tg_unconditional (), NULL);
      return;
    }
  g_test_trap_subprocess (NULL, 0, 0);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*CRITICAL*'lookup'*'counter'*did not declare*");
}

/* Runs @p eagerly and expects UNBOUND naming @why, or success. */
static void
run_expecting_unbound (TgProducer *p, cudaStream_t stream, const char *why)
{
  g_autoptr (GError) error = NULL;
  gboolean ok
      = tg_producer_run (p, stream, TG_POLICY_EAGER, tg_unconditional (), &error);

  if (why == NULL)
    {
      g_assert_no_error (error);
      g_assert_true (ok);
      return;
    }
  g_assert_false (ok);
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_UNBOUND);
  g_assert_nonnull (strstr (error->message, "'flag'"));
  g_assert_nonnull (strstr (error->message, why));
}

static void
test_unbound_binding (TgTestGpu *f, gconstpointer data)
{
  const gint32 on = 1;
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  guint32 *counter, count = 0;
  gint32 *flag;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (4);
  flag = tg_test_device_alloc (4);
  tg_test_upload (flag, &on, sizeof on);
  p = tg_producer_new ("guarded", 0);
  tg_producer_add_device_stage (p, "count", TG_STAGE_CAPTURE_SAFE, tg_test_count_stage,
                                counter, NULL, NULL);
  tg_producer_set_stage_condition (p, 0, "flag", NULL);
  run_expecting_unbound (p, f->stream, "not bound");
  g_assert_false (tg_producer_bind (p, "flag", &error, 4, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_clear_error (&error);

  /* Bindings are checked once per change: every change is seen. */
  g_assert_true (tg_producer_bind (p, "flag", flag, 2, &error));
  run_expecting_unbound (p, f->stream, "too small");
  g_assert_true (tg_producer_bind (p, "flag", flag, 4, &error));
  run_expecting_unbound (p, f->stream, NULL);
  run_expecting_unbound (p, f->stream, NULL);
  g_assert_true (tg_producer_bind (p, "flag", NULL, 0, &error));
  run_expecting_unbound (p, f->stream, "not bound");
  g_assert_true (tg_producer_bind (p, "flag", flag, 4, &error));
  run_expecting_unbound (p, f->stream, NULL);
  g_assert_no_error (error);
  tg_test_download (&count, counter, sizeof count);
  g_assert_cmpuint (count, ==, 3);

  g_clear_pointer (&p, tg_producer_unref);
  tg_test_device_free (flag);
  tg_test_device_free (counter);
}

static void
test_bind_checks_allocation (TgTestGpu *f, gconstpointer data)
{
  g_autoptr (TgProducer) p = tg_producer_new ("bound", 0);
  guint8 *small, *big;
  gpointer pinned;
  g_autofree guint8 *host = g_new0 (guint8, 64);
  GError *error = NULL;

  TG_TEST_REQUIRE_GPU ();
  small = tg_test_device_alloc (4);
  big = tg_test_device_alloc (4096);
  TG_TEST_CUDA (cudaMallocHost (&pinned, 64));

  /* Before: both passed, and a readback of 8 bytes overran the buffer. */
  g_assert_false (tg_producer_bind (p, "flag", small, 8, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  g_assert_false (tg_producer_bind (p, "flag", small, G_MAXSIZE, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  g_clear_error (&error);
  g_assert_false (tg_producer_bind (p, "flag", big + 4000, 200, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH);
  g_clear_error (&error);
  g_assert_false (tg_producer_bind (p, "flag", small, 0, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_EMPTY);
  g_clear_error (&error);
  g_assert_false (tg_producer_bind (p, "flag", host, 4, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (tg_producer_bind (p, "flag", pinned, 4, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_null (tg_producer_get_binding (p, "flag", NULL));

  /* What fits is bound: the whole, and the rest of it from an offset. */
  g_assert_true (tg_producer_bind (p, "flag", small, 4, &error));
  g_assert_true (tg_producer_bind (p, "tail", big + 4000, 96, &error));
  g_assert_no_error (error);

  g_clear_pointer (&p, tg_producer_unref);
  TG_TEST_CUDA (cudaFreeHost (pinned));
  tg_test_device_free (small);
  tg_test_device_free (big);
}

/* ------------------------------------------------------------------------ */
/* Rebinds                                                                   */

typedef struct
{
  gboolean taken; /* what the handler answers */
  guint calls, destroyed;
  char *binding;
  gpointer old_ptr, new_ptr;
} Rebinds;

static gboolean
on_rebind (TgProducer *p, const char *binding, gpointer old_ptr, gpointer new_ptr,
           gpointer data)
{
  Rebinds *r = data;

  r->calls++;
  g_free (r->binding);
  r->binding = g_strdup (binding);
  r->old_ptr = old_ptr;
  r->new_ptr = new_ptr;
  return r->taken;
}

static void
rebinds_destroyed (gpointer data)
{
  ((Rebinds *)data)->destroyed++;
}

static void
rebind_and_run (Fixture *f, TgProducer *p, guint to, Rebinds *r, guint64 n_rebinds)
{
  g_autoptr (GError) error = NULL;
  TgRunnerStats stats;
  guint from = 1 - to;

  g_assert_true (
      tg_producer_bind (p, "counter", &f->counts[to], sizeof (guint32), &error));
  g_assert_cmpuint (r->calls, ==, 1);
  g_assert_cmpstr (r->binding, ==, "counter");
  g_assert_true (r->old_ptr == &f->counts[from]);
  g_assert_true (r->new_ptr == &f->counts[to]);
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_rebinds, ==, n_rebinds);
  g_assert_true (tg_producer_run (p, f->gpu.stream, TG_POLICY_REPLAY,
                                  tg_unconditional (), &error));
  g_assert_no_error (error);
  g_clear_pointer (&r->binding, g_free);
}

static void
test_rebind_handler (Fixture *f, gconstpointer data)
{
  Rebinds taken = { .taken = TRUE }, logged = { .taken = FALSE };
  g_autoptr (GError) error = NULL;
  TgRunnerStats stats;
  TgProducer *p;

  TG_TEST_REQUIRE_GPU ();
  p = tg_test_counter_producer (f->counts, TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_bound_stage);
  g_assert_true (tg_producer_run (p, f->gpu.stream, TG_POLICY_REPLAY,
                                  tg_unconditional (), &error));
  g_assert_no_error (error);
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_rebinds, ==, 0);

  /* Taken: no warning, which would be fatal here. */
  tg_producer_set_rebind_handler (p, on_rebind, &taken, rebinds_destroyed);
  rebind_and_run (f, p, 1, &taken, 1);
  tg_producer_set_rebind_handler (p, on_rebind, &logged, rebinds_destroyed);
  g_assert_cmpuint (taken.destroyed, ==, 1);

  /* Not taken: the warning stays. */
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_WARNING, "RebindAfterCaptureWarning*");
  rebind_and_run (f, p, 0, &logged, 2);
  g_test_assert_expected_messages ();

  /* Each replay counted in the buffer bound at the time. */
  TG_TEST_CUDA (cudaStreamSynchronize (f->gpu.stream));
  g_assert_cmpuint (tg_test_read_u32 (&f->counts[0]), ==, 2);
  g_assert_cmpuint (tg_test_read_u32 (&f->counts[1]), ==, 1);
  tg_producer_unref (p);
  g_assert_cmpuint (logged.destroyed, ==, 1);
  g_assert_cmpuint (taken.destroyed, ==, 1);
}

/* ------------------------------------------------------------------------ */
/* Calls                                                                     */

static gboolean
reentrant_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_producer_run (tg_launch_get_producer (launch),
                          tg_launch_get_stream (launch), TG_POLICY_EAGER,
                          tg_unconditional (), error);
}

static void
test_reentrant_call_fails (TgTestGpu *f, gconstpointer data)
{
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  p = tg_producer_new ("reentrant", 0);
  tg_producer_add_device_stage (p, "again", TG_STAGE_NONE, reentrant_stage, NULL, NULL,
                                NULL);
  g_assert_false (
      tg_producer_run (p, f->stream, TG_POLICY_EAGER, tg_unconditional (), &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_BUSY);
}

/* A stage that asks its own producer to resolve a call, and to bind a
 * stream (named, or TG_STREAM_AUTO): BUSY each time, nothing resolved or
 * bound.  Counts its calls in *@data. */
static gboolean
resolving_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  TgProducer *p = tg_launch_get_producer (launch);
  const cudaStream_t streams[] = { tg_launch_get_stream (launch), TG_STREAM_AUTO };
  TgPolicy policy = (TgPolicy)-1;
  cudaStream_t resolved = (cudaStream_t)&policy;
  g_autoptr (GError) local = NULL;

  (*(guint *)data)++;
  g_assert_false (tg_producer_resolve (p, tg_launch_get_stream (launch), TG_POLICY_AUTO,
                                       tg_unconditional (), &policy, &resolved,
                                       &local));
  g_assert_error (local, TG_STATE_ERROR, TG_STATE_ERROR_BUSY);
  g_assert_cmpstr (tg_error_get_producer (local), ==, tg_producer_get_name (p));
  g_assert_cmpint (policy, ==, (TgPolicy)-1);
  g_assert_true (resolved == (cudaStream_t)&policy);
  g_clear_error (&local);
  for (guint i = 0; i < G_N_ELEMENTS (streams); i++)
    {
      g_assert_false (tg_producer_set_stream (p, streams[i], &local));
      g_assert_error (local, TG_STATE_ERROR, TG_STATE_ERROR_BUSY);
      g_clear_error (&local);
    }
  return TRUE;
}

static void
test_resolve_set_stream_from_own_stage (Fixture *f, gconstpointer data)
{
  const TgPolicy policies[] = { TG_POLICY_EAGER, TG_POLICY_REPLAY };
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  guint calls = 0;

  TG_TEST_REQUIRE_GPU ();
  p = tg_test_counter_producer (f->counts, TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_bound_stage);
  tg_producer_add_device_stage (p, "resolving", TG_STAGE_CAPTURE_SAFE, resolving_stage,
                                &calls, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      g_assert_true (
          tg_producer_run (p, f->gpu.stream, policies[i], tg_unconditional (), &error));
      g_assert_no_error (error);
    }
  TG_TEST_CUDA (cudaStreamSynchronize (f->gpu.stream));
  /* The stage ran under EAGER and in REPLAY's capture, and each call's
   * work ran once. */
  g_assert_cmpuint (calls, ==, 2);
  g_assert_cmpuint (tg_test_read_u32 (&f->counts[0]), ==, 2);
  /* Nothing was bound: the calls still resolve as before. */
  g_assert_true (tg_producer_get_stream (p) == TG_STREAM_AUTO);
}

/* Calls nested deeper than a thread's record holds inline: each stage runs
 * the next producer, the last one counts; every producer is released on the
 * way out (a second call takes them again), and a call back into one of the
 * outer producers from deep inside fails BUSY. */
#define DEPTH 10

typedef struct
{
  TgProducer *next;  /* NULL for the last one */
  TgProducer *outer; /* called back into when set */
} Nest;

static gboolean
nested_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  Nest *n = data;
  TgProducer *callee = n->outer != NULL ? n->outer : n->next;

  if (callee == NULL)
    return tg_test_count_bound_stage (launch, NULL, error);
  return tg_producer_run (callee, tg_launch_get_stream (launch), TG_POLICY_EAGER,
                          tg_unconditional (), error);
}

static void
test_nested_calls (TgTestGpu *f, gconstpointer data)
{
  guint32 *counter;
  TgProducer *p[DEPTH];
  Nest nest[DEPTH] = { { NULL, NULL } };
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (sizeof (guint32));
  for (guint d = DEPTH; d-- > 0;)
    {
      guint stage;

      nest[d].next = d + 1 < DEPTH ? p[d + 1] : NULL;
      p[d] = tg_producer_new ("nested", 0);
      stage = tg_producer_add_device_stage (p[d], "nest", TG_STAGE_NONE, nested_stage,
                                            &nest[d], NULL, NULL);
      tg_producer_declare_binding (p[d], stage, "counter", sizeof (guint32), NULL);
      g_assert_true (
          tg_producer_bind (p[d], "counter", counter, sizeof (guint32), NULL));
    }
  for (guint call = 0; call < 2; call++)
    {
      g_assert_true (tg_producer_run (p[0], f->stream, TG_POLICY_EAGER,
                                      tg_unconditional (), &error));
      g_assert_no_error (error);
    }
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  g_assert_cmpuint (tg_test_read_u32 (counter), ==, 2);
  nest[DEPTH - 1].outer = p[1];
  g_assert_false (
      tg_producer_run (p[0], f->stream, TG_POLICY_EAGER, tg_unconditional (), &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_BUSY);
  g_clear_error (&error);
  /* Released: the nest runs again. */
  nest[DEPTH - 1].outer = NULL;
  g_assert_true (
      tg_producer_run (p[0], f->stream, TG_POLICY_EAGER, tg_unconditional (), &error));
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  g_assert_cmpuint (tg_test_read_u32 (counter), ==, 3);
  for (guint d = 0; d < DEPTH; d++)
    tg_producer_unref (p[d]);
  tg_test_device_free (counter);
}

/* NVTX ranges: off by default, TG_NVTX=1 turns them on until tg_set_nvtx(). */
static void
test_nvtx_switch (void)
{
  if (g_test_subprocess ())
    {
      g_assert_true (g_setenv ("TG_NVTX", "1", TRUE));
      g_assert_true (tg_get_nvtx ());
      tg_set_nvtx (FALSE);
      g_assert_false (tg_get_nvtx ());
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
  g_unsetenv ("TG_NVTX");
  g_assert_false (tg_get_nvtx ());
  tg_set_nvtx (TRUE);
  g_assert_true (tg_get_nvtx ());
  tg_set_nvtx (FALSE);
}

/* With ranges on, every policy gives the same results (no tool attached:
 * NVTX's calls are its own no-ops; under nsys the ranges show). */
static void
test_nvtx_ranges_change_nothing (TgTestGpu *f, gconstpointer data)
{
  const TgPolicy policies[] = { TG_POLICY_EAGER, TG_POLICY_REPLAY, TG_POLICY_AUTO };
  g_autoptr (GError) error = NULL;
  TgTestCounted c;
  TgProducer *p;

  TG_TEST_REQUIRE_GPU ();
  tg_set_nvtx (TRUE);
  tg_test_counted_init (&c, 5);
  p = tg_test_counted_new (&c, TG_STAGE_CAPTURE_SAFE);
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    g_assert_true (
        tg_producer_run (p, f->stream, policies[i], tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  tg_test_counted_expect (&c, 5);
  g_assert_cmpint (c.calls, ==, 2); /* EAGER, REPLAY's capture; AUTO replays */
  tg_set_nvtx (FALSE);
  tg_producer_unref (p);
  tg_test_counted_clear (&c);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  TG_TEST_ADD_FIXTURE ("/producer/bindings/declared-unbound-small-bound", NULL,
                       test_bindings_declared);
  TG_TEST_ADD_FIXTURE ("/producer/bindings/undeclared-lookup-critical", NULL,
                       test_bindings_undeclared);
  TG_TEST_ADD_GPU ("/producer/bindings/unbound-and-invalid", test_unbound_binding);
  TG_TEST_ADD_GPU ("/producer/bindings/checked-against-allocation",
                   test_bind_checks_allocation);
  TG_TEST_ADD_FIXTURE ("/producer/rebind/handler-counter-destroy", NULL,
                       test_rebind_handler);
  TG_TEST_ADD_GPU ("/producer/run/reentrant-call-fails", test_reentrant_call_fails);
  TG_TEST_ADD_FIXTURE ("/producer/run/resolve-set-stream-from-own-stage-busy", NULL,
                       test_resolve_set_stream_from_own_stage);
  TG_TEST_ADD_GPU ("/producer/run/nested-ten-deep", test_nested_calls);
  g_test_add_func ("/producer/nvtx/env-and-switch", test_nvtx_switch);
  TG_TEST_ADD_GPU ("/producer/nvtx/ranges-change-nothing",
                   test_nvtx_ranges_change_nothing);
  return g_test_run ();
}
