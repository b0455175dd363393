/* SPDX-License-Identifier: Apache-2.0 */
/* replay-test.c: REPLAY, a producer's own graphs: captured once per
 * segment around its HOST stages and then only launched; a rebind updates
 * them in place, or re-captures them when the topology changed; a stage
 * that allocates keeps working from one replay to the next; what a stage
 * keeps (tg_launch_keep) lives as long as the own graph holding its work,
 * and an EAGER call's only as long as the call; the common call only
 * launches its current graph, and a freed producer's capture stream serves
 * the next producer.  A conditional call of a producer with a HOST stage
 * runs all its stages or none; a conditional call's flag pointer is baked
 * in (another one captures again); the same binding again is no rebind; a
 * stage that synchronizes fails its call, breaking only its own capture. */
#include "config.h"
#include "tg-test.h"

#include <string.h>

#define CHAIN_N 4096 /* elements of the chain producer */
#define N 1024       /* elements of the other buffers */

typedef TgTestGpu Fixture;

static void
test_replay_captures_once (Fixture *f, gconstpointer data)
{
  TgTestChain *c;
  TgRunnerStats stats;
  g_autoptr (GError) error = NULL;
  g_autofree guint32 *out = g_new (guint32, CHAIN_N),
                     *expected = g_new (guint32, CHAIN_N);

  TG_TEST_REQUIRE_GPU ();
  c = tg_test_chain_new ("replay", CHAIN_N, TRUE, TG_STAGE_CAPTURE_SAFE);
  for (guint call = 0; call < 100; call++)
    {
      *c->host_k = tg_test_chain_k (call);
      g_assert_true (tg_producer_run (c->producer, f->stream, TG_POLICY_AUTO,
                                      tg_unconditional (), &error));
      g_assert_no_error (error);
      TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
    }
  tg_producer_get_runner_stats (c->producer, &stats);
  g_assert_cmpuint (stats.n_segments, ==, 2);
  g_assert_cmpuint (stats.n_captures, ==, stats.n_segments);
  g_assert_cmpuint (stats.n_replays, ==, 100);
  g_assert_cmpuint (stats.n_updates + stats.n_recaptures, ==, 0);
  g_assert_cmpint (c->host_runs, ==, 100);
  tg_test_chain_read (c, out);
  tg_test_chain_expect (CHAIN_N, 0, tg_test_chain_k (99), expected);
  g_assert_cmpmem (out, CHAIN_N * sizeof (guint32), expected,
                   CHAIN_N * sizeof (guint32));
  tg_test_chain_free (c);
}

/* Runs the chain once under REPLAY, guarded by @flag, set to @value on the
 * stream first; then b must hold @b, the host function must have run
 * @host_runs times in all and the segments been captured @n_captures
 * times. */
static void
run_conditional_chain (Fixture *f, TgTestChain *c, gint32 *flag, gint32 value,
                       const guint32 *b, gint host_runs, guint64 n_captures)
{
  g_autofree guint32 *out = g_new (guint32, CHAIN_N);
  g_autoptr (GError) error = NULL;
  TgRunnerStats stats;

  TG_TEST_CUDA (tgt_launch_set (f->stream, flag, value));
  g_assert_true (tg_producer_run (c->producer, f->stream, TG_POLICY_REPLAY,
                                  tg_conditional (flag), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  tg_test_chain_read (c, out);
  g_assert_cmpmem (out, CHAIN_N * sizeof (guint32), b, CHAIN_N * sizeof (guint32));
  g_assert_cmpint (c->host_runs, ==, host_runs);
  tg_producer_get_runner_stats (c->producer, &stats);
  g_assert_cmpuint (stats.n_captures, ==, n_captures);
}

/* A conditional call of a producer with a HOST stage: the flag is read back
 * once on the host, then all the stages run, or none.  The HOST stage
 * uploads a k the device does not hold yet, so b shows that it ran, and
 * ran before the stages after it. */
static void
test_conditional_with_host_stage (Fixture *f, gconstpointer data)
{
  const guint32 param = tg_test_chain_param (1), k = tg_test_chain_k (1);
  TgTestChain *c;
  TgRunnerStats stats;
  gint32 *flag;
  g_autofree guint32 *zero = g_new0 (guint32, CHAIN_N),
                     *expected = g_new (guint32, CHAIN_N);

  TG_TEST_REQUIRE_GPU ();
  c = tg_test_chain_new ("conditional-host", CHAIN_N, TRUE, TG_STAGE_CAPTURE_SAFE);
  flag = tg_test_device_alloc (sizeof (gint32));
  tg_test_chain_set_inputs (c, param, tg_test_chain_k (0));
  *c->host_k = k;
  tg_test_chain_expect (CHAIN_N, param, k, expected);

  /* Flag 0: no stage, and no graph captured. */
  run_conditional_chain (f, c, flag, 0, zero, 0, 0);
  /* Flag 1: every stage, the HOST one between the two segments. */
  run_conditional_chain (f, c, flag, 1, expected, 1, 2);
  tg_producer_get_runner_stats (c->producer, &stats);
  g_assert_cmpuint (stats.n_segments, ==, 2);
  /* Flag 0 again, with new inputs: b keeps the last call's result. */
  tg_test_chain_set_inputs (c, tg_test_chain_param (2), tg_test_chain_k (2));
  run_conditional_chain (f, c, flag, 0, expected, 1, 2);
  tg_test_device_free (flag);
  tg_test_chain_free (c);
}

/* A conditional call bakes its flag's pointer into its own graph: a call
 * with another flag captures again, one with the same flag does not, and
 * neither is a rebind (the flag is the call's, not a binding).  The flags
 * differ in value, so the counter shows which one each call read. */
static void
test_conditional_flag_pointer (Fixture *f, gconstpointer data)
{
  const gint32 values[2] = { 1, 0 };
  /* The flag of each call, and the captures made after it. */
  static const struct
  {
    guint flag;
    guint64 n_captures;
  } calls[] = { { 0, 1 }, { 0, 1 }, { 1, 2 }, { 1, 2 }, { 0, 3 } };
  guint32 *counter, counted = 0;
  gint32 *flags;
  g_autoptr (TgProducer) p = NULL;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (sizeof (guint32));
  flags = tg_test_device_alloc (sizeof values);
  tg_test_upload (flags, values, sizeof values);
  p = tg_test_counter_producer (counter, TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_bound_stage);
  for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
    {
      g_autoptr (GError) error = NULL;
      TgRunnerStats stats;

      g_assert_true (tg_producer_run (p, f->stream, TG_POLICY_REPLAY,
                                      tg_conditional (&flags[calls[i].flag]), &error));
      g_assert_no_error (error);
      TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
      counted += values[calls[i].flag];
      g_assert_cmpuint (tg_test_read_u32 (counter), ==, counted);
      tg_producer_get_runner_stats (p, &stats);
      g_assert_cmpuint (stats.n_captures, ==, calls[i].n_captures);
      g_assert_cmpuint (stats.n_replays, ==, i + 1);
      g_assert_cmpuint (stats.n_rebinds, ==, 0);
    }
  g_clear_pointer (&p, tg_producer_unref);
  tg_test_device_free (flags);
  tg_test_device_free (counter);
}

/* A rebind handler that counts the rebinds it takes. */
static gboolean
count_rebinds (TgProducer *p, const char *binding, gpointer old_ptr, gpointer new_ptr,
               gpointer data)
{
  (*(guint *)data)++;
  return TRUE;
}

/* Binding the same pointer and size again after the capture is no rebind:
 * not counted, no handler call, no warning (fatal here), and the next call
 * only replays.  The same pointer with another size is one. */
static void
test_same_binding_no_rebind (Fixture *f, gconstpointer data)
{
  guint32 *counter;
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  TgRunnerStats stats;
  guint handled = 0;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (2 * sizeof (guint32));
  p = tg_test_counter_producer (counter, TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_bound_stage);
  g_assert_true (
      tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  g_assert_no_error (error);
  for (guint i = 0; i < 3; i++)
    {
      g_assert_true (
          tg_producer_bind (p, "counter", counter, sizeof (guint32), &error));
      g_assert_no_error (error);
      g_assert_true (tg_producer_run (p, f->stream, TG_POLICY_REPLAY,
                                      tg_unconditional (), &error));
      g_assert_no_error (error);
    }
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  g_assert_cmpuint (tg_test_read_u32 (counter), ==, 4);
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_rebinds, ==, 0);
  g_assert_cmpint (stats.last_rebind, ==, TG_REBIND_NONE);
  g_assert_cmpuint (stats.n_captures, ==, 1);
  g_assert_cmpuint (stats.n_updates + stats.n_recaptures, ==, 0);
  g_assert_cmpuint (stats.n_replays, ==, 4);

  /* Not vacuous: a size that differs is a rebind, the handler's. */
  tg_producer_set_rebind_handler (p, count_rebinds, &handled, NULL);
  g_assert_true (tg_producer_bind (p, "counter", counter, sizeof (guint32), &error));
  g_assert_cmpuint (handled, ==, 0);
  g_assert_true (
      tg_producer_bind (p, "counter", counter, 2 * sizeof (guint32), &error));
  g_assert_no_error (error);
  g_assert_cmpuint (handled, ==, 1);
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_rebinds, ==, 1);
  g_clear_pointer (&p, tg_producer_unref);
  tg_test_device_free (counter);
}

static void
test_rebind (Fixture *f, gconstpointer data)
{
  guint32 *first, *second, *extra;
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  TgRunnerStats stats;

  TG_TEST_REQUIRE_GPU ();
  first = tg_test_device_alloc (4);
  second = tg_test_device_alloc (4);
  extra = tg_test_device_alloc (4);
  p = tg_producer_new ("rebind", 0);
  tg_producer_add_device_stage (p, "count", TG_STAGE_CAPTURE_SAFE,
                                tg_test_optional_count_stage, NULL, NULL, NULL);
  tg_producer_declare_binding (p, 0, "counter", sizeof (guint32), NULL);
  g_assert_true (tg_producer_bind (p, "counter", first, 4, &error));
  g_assert_true (
      tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));

  /* Same topology: the own graph is updated in place. */
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_WARNING, "RebindAfterCaptureWarning*");
  g_assert_true (tg_producer_bind (p, "counter", second, 4, &error));
  g_test_assert_expected_messages ();
  g_assert_true (tg_producer_bind (p, "counter", second, 4, &error)); /* no change */
  g_assert_true (
      tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpint (stats.last_rebind, ==, TG_REBIND_UPDATED);
  g_assert_cmpuint (stats.n_rebinds, ==, 1);
  g_assert_cmpuint (stats.n_updates, ==, 1);
  g_assert_cmpuint (tg_test_read_u32 (first), ==, 1);
  g_assert_cmpuint (tg_test_read_u32 (second), ==, 1);

  /* One kernel more: the topology changed, the graph is re-made. */
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_WARNING, "RebindAfterCaptureWarning*");
  g_assert_true (tg_producer_bind (p, "extra", extra, 4, &error));
  g_test_assert_expected_messages ();
  g_assert_true (
      tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpint (stats.last_rebind, ==, TG_REBIND_RECAPTURED);
  g_assert_cmpuint (stats.n_rebinds, ==, 2);
  g_assert_cmpuint (stats.n_recaptures, ==, 1);
  g_assert_cmpuint (tg_test_read_u32 (second), ==, 2);
  g_assert_cmpuint (tg_test_read_u32 (extra), ==, 1);

  g_clear_pointer (&p, tg_producer_unref);
  tg_test_device_free (first);
  tg_test_device_free (second);
  tg_test_device_free (extra);
}

/* ------------------------------------------------------------------------ */
/* A DEVICE stage declared capture-safe that synchronizes its stream: under  */
/* REPLAY it fails the call, its own capture broken and nobody else's.       */

static gboolean
syncing_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  const gboolean *syncs = data;

  if (!*syncs)
    return TRUE;
  return tg_test_launched (cudaStreamSynchronize (tg_launch_get_stream (launch)),
                           error);
}

static void
test_syncing_stage_fails_own_capture (Fixture *f, gconstpointer data)
{
  guint32 *counters; /* the syncing producer's, the other's */
  gboolean syncs = TRUE;
  TgProducer *p, *other;
  TgRunnerStats stats;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  counters = tg_test_device_alloc (2 * sizeof (guint32));
  other = tg_test_counter_producer (&counters[1], TG_STAGE_CAPTURE_SAFE,
                                    tg_test_count_bound_stage);
  g_assert_true (tg_producer_run (other, f->stream, TG_POLICY_REPLAY,
                                  tg_unconditional (), &error));
  g_assert_no_error (error);
  p = tg_test_counter_producer (&counters[0], TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_bound_stage);
  tg_producer_add_device_stage (p, "sync", TG_STAGE_CAPTURE_SAFE, syncing_stage, &syncs,
                                NULL, &error);
  g_assert_no_error (error);

  g_assert_false (
      tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
  g_test_message ("failed as expected: %s", error->message);
  g_assert_nonnull (strstr (error->message, "stage 'sync'"));
  g_assert_cmpstr (tg_error_get_producer (error), ==, "count");
  g_assert_cmpstr (tg_error_get_stage (error), ==, "sync");
  g_clear_error (&error);
  /* Nothing launched, no graph kept, the caller's stream free. */
  tg_test_assert_not_capturing (f->stream);
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  g_assert_cmpuint (tg_test_read_u32 (&counters[0]), ==, 0);
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_captures, ==, 0);
  g_assert_cmpuint (stats.n_replays, ==, 0);

  /* The other producer's own graph still replays, captured once; and the
   * stage, once it stops synchronizing, is captured and replayed. */
  syncs = FALSE;
  for (guint i = 0; i < 2; i++)
    {
      g_assert_true (tg_producer_run (other, f->stream, TG_POLICY_REPLAY,
                                      tg_unconditional (), &error));
      g_assert_true (tg_producer_run (p, f->stream, TG_POLICY_REPLAY,
                                      tg_unconditional (), &error));
      g_assert_no_error (error);
    }
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  g_assert_cmpuint (tg_test_read_u32 (&counters[0]), ==, 2);
  g_assert_cmpuint (tg_test_read_u32 (&counters[1]), ==, 3);
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_captures, ==, 1);
  tg_producer_get_runner_stats (other, &stats);
  g_assert_cmpuint (stats.n_captures, ==, 1);
  tg_producer_unref (p);
  tg_producer_unref (other);
  tg_test_device_free (counters);
}

/* ------------------------------------------------------------------------ */
/* REPLAY of a stage that allocates: AutoFreeOnLaunch keeps it working.      */

typedef struct
{
  guint32 *out, *param; /* device */
} Allocating;

static gboolean
allocating_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  Allocating *a = data;
  cudaStream_t s = tg_launch_get_stream (launch);
  guint32 *tmp = NULL;

  /* Allocated per launch, never freed by the stage. */
  return tg_test_launched (cudaMallocAsync ((void **)&tmp, N * sizeof (guint32), s),
                           error)
         && tg_test_launched (tgt_launch_seed (s, tmp, N, a->param), error)
         && tg_test_launched (cudaMemcpyAsync (a->out, tmp, N * sizeof (guint32),
                                               cudaMemcpyDeviceToDevice, s),
                              error);
}

static void
test_replay_allocating_stage (Fixture *fx, gconstpointer data)
{
  Allocating a;
  TgProducer *p;
  g_autoptr (GError) error = NULL;
  g_autofree guint32 *host = g_new (guint32, N);

  TG_TEST_REQUIRE_GPU ();
  a.out = tg_test_device_alloc (N * sizeof (guint32));
  a.param = tg_test_device_alloc (sizeof (guint32));
  p = tg_producer_new ("allocating", 0);
  tg_producer_add_device_stage (p, "alloc", TG_STAGE_CAPTURE_SAFE, allocating_stage, &a,
                                NULL, NULL);
  for (guint call = 0; call < 100; call++)
    {
      TG_TEST_CUDA (tgt_launch_set (fx->stream, (gint32 *)a.param, (gint32)call));
      g_assert_true (tg_producer_run (p, fx->stream, TG_POLICY_REPLAY,
                                      tg_unconditional (), &error));
      g_assert_no_error (error);
      if (call % 10 == 9)
        {
          TG_TEST_CUDA (cudaStreamSynchronize (fx->stream));
          tg_test_download (host, a.out, N * sizeof (guint32));
          for (guint i = 0; i < N; i++)
            g_assert_cmpuint (host[i], ==, tgt_hash (i, call));
        }
    }
  TG_TEST_CUDA (cudaStreamSynchronize (fx->stream));
  tg_producer_unref (p);
  tg_test_device_free (a.out);
  tg_test_device_free (a.param);
}

static void
test_keep (Fixture *f, gconstpointer data)
{
  guint32 *counter, *other;
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (sizeof (guint32));
  other = tg_test_device_alloc (sizeof (guint32));
  p = tg_test_counter_producer (counter, TG_STAGE_CAPTURE_SAFE, tg_test_keeping_stage);
  tg_test_kept_reset ();
  /* EAGER: released when the call returns. */
  g_assert_true (
      tg_producer_run (p, f->stream, TG_POLICY_EAGER, tg_unconditional (), &error));
  g_assert_cmpint (tg_test_kept_alive (), ==, 0);
  /* REPLAY: kept with the own graph, across replays. */
  for (guint i = 0; i < 3; i++)
    g_assert_true (
        tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  g_assert_cmpint (tg_test_kept_alive (), ==, 1);
  /* A rebind re-captures: the old graph's keep goes once the stream's work
   * before it has run, the new capture's stays. */
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_WARNING, "RebindAfterCaptureWarning*");
  g_assert_true (tg_producer_bind (p, "counter", other, sizeof (guint32), NULL));
  g_test_assert_expected_messages ();
  g_assert_true (
      tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  g_assert_true (tg_release_wait (10 * G_USEC_PER_SEC));
  g_assert_cmpint (tg_test_kept_alive (), ==, 1);
  /* Freeing the producer releases the rest. */
  g_clear_pointer (&p, tg_producer_unref);
  g_assert_cmpint (tg_test_kept_alive (), ==, 0);
  g_assert_cmpuint (tg_test_read_u32 (counter), ==, 4);
  g_assert_cmpuint (tg_test_read_u32 (other), ==, 1);
  tg_test_device_free (other);
  tg_test_device_free (counter);
}

/* ------------------------------------------------------------------------ */
/* The common call only launches (issue 20 item 5): unconditional calls of a */
/* producer with no HOST stage, between rebinds and conditional calls.       */

static void
test_launch_current (Fixture *f, gconstpointer data)
{
  guint32 *first, *second;
  gint32 *flag;
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  TgRunnerStats stats;

  TG_TEST_REQUIRE_GPU ();
  first = tg_test_device_alloc (sizeof (guint32));
  second = tg_test_device_alloc (sizeof (guint32));
  flag = tg_test_device_alloc (sizeof (gint32));
  p = tg_test_counter_producer (first, TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_bound_stage);
  for (guint i = 0; i < 50; i++)
    g_assert_true (
        tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  /* A conditional call in between, its flag 0 then 1: its own graph. */
  g_assert_true (
      tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_conditional (flag), &error));
  TG_TEST_CUDA (tgt_launch_set (f->stream, flag, 1));
  g_assert_true (
      tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_conditional (flag), &error));
  for (guint i = 0; i < 50; i++)
    g_assert_true (
        tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  g_assert_cmpuint (tg_test_read_u32 (first), ==, 101);
  /* A rebind: the next calls launch the updated graph, never the old one. */
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_WARNING, "RebindAfterCaptureWarning*");
  g_assert_true (tg_producer_bind (p, "counter", second, sizeof (guint32), &error));
  g_test_assert_expected_messages ();
  for (guint i = 0; i < 10; i++)
    g_assert_true (
        tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  g_assert_cmpuint (tg_test_read_u32 (first), ==, 101);
  g_assert_cmpuint (tg_test_read_u32 (second), ==, 10);
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_replays, ==, 112);
  /* The unconditional graph, the conditional one, the update after the
   * rebind. */
  g_assert_cmpuint (stats.n_captures, ==, 3);
  g_assert_cmpuint (stats.n_updates, ==, 1);
  g_clear_pointer (&p, tg_producer_unref);
  tg_test_device_free (flag);
  tg_test_device_free (second);
  tg_test_device_free (first);
}

/* A freed producer's capture stream is kept for the next producer's first
 * capture, which then creates none (issue 20 item 7). */
static void
test_stream_kept (Fixture *f, gconstpointer data)
{
  guint32 *counter;
  TgProducer *p;
  TgLiveObjects freed, next;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (sizeof (guint32));
  p = tg_test_counter_producer (counter, TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_bound_stage);
  g_assert_true (
      tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  tg_producer_unref (p);
  tg_get_live_objects (&freed);
  g_assert_cmpint (freed.idle_streams, >=, 1);
  p = tg_test_counter_producer (counter, TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_bound_stage);
  g_assert_true (
      tg_producer_run (p, f->stream, TG_POLICY_REPLAY, tg_unconditional (), &error));
  g_assert_no_error (error);
  tg_get_live_objects (&next);
  g_assert_cmpint (next.idle_streams, ==, freed.idle_streams - 1);
  g_assert_cmpint (next.streams, ==, freed.streams + 1);
  tg_producer_unref (p);
  TG_TEST_CUDA (cudaStreamSynchronize (f->stream));
  g_assert_cmpuint (tg_test_read_u32 (counter), ==, 2);
  tg_test_device_free (counter);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  TG_TEST_ADD_GPU ("/replay/segments/captures-once", test_replay_captures_once);
  TG_TEST_ADD_GPU ("/replay/segments/conditional-call-with-host-stage",
                   test_conditional_with_host_stage);
  TG_TEST_ADD_GPU ("/replay/own-graph/flag-pointer-captures-again",
                   test_conditional_flag_pointer);
  TG_TEST_ADD_GPU ("/replay/rebind/update-then-recapture", test_rebind);
  TG_TEST_ADD_GPU ("/replay/rebind/same-pointer-and-size-is-none",
                   test_same_binding_no_rebind);
  TG_TEST_ADD_GPU ("/replay/own-graph/syncing-stage-fails-own-capture",
                   test_syncing_stage_fails_own_capture);
  TG_TEST_ADD_GPU ("/replay/own-graph/allocating-stage", test_replay_allocating_stage);
  TG_TEST_ADD_GPU ("/replay/own-graph/keep-lives-with-the-graph", test_keep);
  TG_TEST_ADD_GPU ("/replay/own-graph/launch-current", test_launch_current);
  TG_TEST_ADD_GPU ("/replay/own-graph/stream-kept-for-the-next-producer",
                   test_stream_kept);
  return g_test_run ();
}
