/* SPDX-License-Identifier: Apache-2.0 */
/* interop-test-retention.c: what a caller's graph holds for TrackGen (issue
 * 27): no user object where nothing is kept, one per capture however much
 * is kept, none where the graph's owner holds the references
 * (tg_retained_new), and tg_release_wait() waiting for what destroyed graphs
 * released, never for live ones. */
#include "config.h"
#include "interop-test.h"

#include <string.h>

#define CALLS 4
#define REPLAYS 10

/* A producer whose one stage bumps a counter on the device, and keeps
 * (tg_launch_keep) a token of the call when @keeps is set. */
typedef struct
{
  guint32 *counter; /* device */
  gint32 *flag;     /* device, 1: the conditional calls run */
  gboolean keeps;
  gint kept;
  gint released;
} Keeper;

static void
token_released (gpointer data)
{
  Keeper *k = data;

  g_atomic_int_inc (&k->released);
}

static gboolean
count_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  Keeper *k = data;

  if (k->keeps)
    {
      g_atomic_int_inc (&k->kept);
      tg_launch_keep (launch, k, token_released);
    }
  return tg_test_launched (tgt_launch_count (tg_launch_get_stream (launch), k->counter),
                           error);
}

static TgProducer *
keeper_producer (Keeper *k, const char *name)
{
  TgProducer *p = tg_producer_new (name, 0);

  tg_producer_add_device_stage (p, "count", TG_STAGE_CAPTURE_SAFE, count_stage, k,
                                NULL, NULL);
  return p;
}

static void
keeper_init (Keeper *k, gboolean keeps)
{
  const gint32 one = 1;

  *k = (Keeper){ 0 };
  k->keeps = keeps;
  k->counter = tg_test_device_alloc (sizeof (guint32));
  k->flag = tg_test_device_alloc (sizeof (gint32));
  tg_test_device_clear (k->counter, sizeof (guint32));
  tg_test_upload (k->flag, &one, sizeof one);
}

static void
keeper_clear (Keeper *k)
{
  tg_test_device_free (k->counter);
  tg_test_device_free (k->flag);
}

/* Records CALLS conditional calls of @p (flag set) into the capture on
 * @stream: a condition cannot be embedded, so each takes RECORD's second
 * pass, which before issue 27 tied a user object to the graph even when
 * nothing was kept. */
static void
record_calls (TgProducer *p, Keeper *k, cudaStream_t stream)
{
  g_autoptr (GError) error = NULL;

  for (guint i = 0; i < CALLS; i++)
    {
      g_assert_true (tg_producer_run (p, stream, TG_POLICY_RECORD,
                                      tg_conditional (k->flag), &error));
      g_assert_no_error (error);
    }
}

/* Launches @graph REPLAYS times; each launch runs every call once. */
static void
replay_and_count (cudaGraph_t graph, cudaStream_t stream, Keeper *k)
{
  cudaGraphExec_t exec = NULL;
  guint32 counted = 0;

  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  for (guint r = 0; r < REPLAYS; r++)
    TG_TEST_CUDA (cudaGraphLaunch (exec, stream));
  TG_TEST_CUDA (cudaStreamSynchronize (stream));
  tg_test_download (&counted, k->counter, sizeof counted);
  g_assert_cmpuint (counted, ==, CALLS * REPLAYS);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
}

static void
test_none_when_nothing_kept (TgTestGpu *f, gconstpointer data)
{
  g_autoptr (TgProducer) p = NULL;
  cudaGraph_t graph = NULL;
  Keeper k;
  gint before;

  TG_TEST_REQUIRE_GPU ();
  keeper_init (&k, FALSE);
  p = keeper_producer (&k, "keeps-nothing");
  before = tg_test_user_objects ();
  TG_TEST_CUDA (cudaStreamBeginCapture (f->stream, cudaStreamCaptureModeThreadLocal));
  record_calls (p, &k, f->stream);
  TG_TEST_CUDA (cudaStreamEndCapture (f->stream, &graph));
  g_assert_cmpint (tg_test_user_objects (), ==, before);
  replay_and_count (graph, f->stream, &k);
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  keeper_clear (&k);
}

/* Everything tied to the graph of one capture, by every path, shares one
 * user object, and lives exactly as long as the graph. */
static void
test_one_per_capture (TgTestGpu *f, gconstpointer data)
{
  g_autoptr (TgProducer) p = NULL, q = NULL;
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  TgCaptureScope *scope;
  Keeper k;
  gint before;

  TG_TEST_REQUIRE_GPU ();
  keeper_init (&k, TRUE);
  p = keeper_producer (&k, "keeps");
  q = tg_producer_new ("retained", 0);
  before = tg_test_user_objects ();
  TG_TEST_CUDA (cudaStreamBeginCapture (f->stream, cudaStreamCaptureModeGlobal));
  scope = tg_capture_scope_begin (f->stream, cudaStreamCaptureModeGlobal, &error);
  g_assert_no_error (error);
  /* Kept items, the producer the scope retains, an explicit retention. */
  record_calls (p, &k, TG_STREAM_AUTO);
  g_assert_true (tg_retain_capture (TG_STREAM_AUTO, q, &error));
  g_assert_no_error (error);
  g_atomic_int_inc (&k.kept);
  g_assert_true (tg_retain_capture_full (TG_STREAM_AUTO, &k, token_released, &error));
  g_assert_no_error (error);
  g_assert_true (tg_capture_scope_end (scope, &error));
  tg_capture_scope_free (scope);
  TG_TEST_CUDA (cudaStreamEndCapture (f->stream, &graph));
  g_assert_cmpint (tg_test_user_objects (), ==, before + 1);
  g_assert_cmpint (g_atomic_int_get (&k.kept), >=, CALLS);

  /* A live graph holds its references: nothing to release yet. */
  g_assert_false (tg_release_wait (0));
  g_clear_pointer (&p, tg_producer_unref);
  replay_and_count (graph, f->stream, &k);
  g_assert_cmpint (g_atomic_int_get (&k.released), ==, 0);

  TG_TEST_CUDA (cudaGraphDestroy (graph));
  g_assert_true (tg_release_wait (10 * G_USEC_PER_SEC));
  g_assert_cmpint (g_atomic_int_get (&k.released), ==, g_atomic_int_get (&k.kept));
  g_assert_cmpint (tg_test_user_objects (), ==, before);
  keeper_clear (&k);
}

/* A host function that holds the stream until the gate opens: the work
 * behind it is enqueued and not run. */
typedef struct
{
  GMutex lock;
  GCond cond;
  gint open; /* atomic: TSan does not see GLib's locks */
} Gate;

static void CUDART_CB
gate_wait (void *data)
{
  Gate *g = data;

  g_mutex_lock (&g->lock);
  while (!g_atomic_int_get (&g->open))
    g_cond_wait (&g->cond, &g->lock);
  g_mutex_unlock (&g->lock);
}

static gpointer
gate_open_later (gpointer data)
{
  Gate *g = data;

  g_usleep (200 * 1000);
  g_mutex_lock (&g->lock);
  g_atomic_int_set (&g->open, TRUE);
  g_cond_broadcast (&g->cond);
  g_mutex_unlock (&g->lock);
  return NULL;
}

/* The owner holds the references: the graph holds no user object, and
 * nothing is released before the last launch enqueued has run, even with
 * the graph destroyed right after it was launched. */
static void
test_owner_holds (TgTestGpu *f, gconstpointer data)
{
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  TgRetained *retained;
  Gate gate = { 0 };
  GThread *opener;
  guint32 counted = 0;
  gint64 start;
  Keeper k;
  gint before;

  TG_TEST_REQUIRE_GPU ();
  keeper_init (&k, TRUE);
  p = keeper_producer (&k, "owned");
  before = tg_test_user_objects ();
  TG_TEST_CUDA (cudaStreamBeginCapture (f->stream, cudaStreamCaptureModeThreadLocal));
  retained = tg_retained_new (f->stream, &error);
  g_assert_no_error (error);
  g_assert_nonnull (retained);
  /* Once per capture. */
  g_assert_null (tg_retained_new (f->stream, &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED);
  g_clear_error (&error);
  record_calls (p, &k, f->stream);
  /* Nothing can follow the launches from inside a capture. */
  g_assert_false (tg_retained_release (retained, f->stream, &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_POLICY);
  g_clear_error (&error);
  TG_TEST_CUDA (cudaStreamEndCapture (f->stream, &graph));
  g_assert_cmpint (tg_test_user_objects (), ==, before);
  g_clear_pointer (&p, tg_producer_unref);

  /* The launch waits behind the gate; the references are handed back at
   * once, as by an owner that will not launch the graph again. */
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  TG_TEST_CUDA (cudaLaunchHostFunc (f->stream, gate_wait, &gate));
  TG_TEST_CUDA (cudaGraphLaunch (exec, f->stream));
  g_assert_true (tg_retained_release (retained, f->stream, &error));
  g_assert_no_error (error);
  g_assert_false (tg_release_wait (50 * 1000));
  g_assert_cmpint (g_atomic_int_get (&k.released), ==, 0);

  /* The gate opens before anything that may wait for the gated launch (a
   * destroy of the executable graph may), so that nothing waits for ever.
   * "Forever" waits for the release (a deadline that overflowed once
   * returned at once). */
  start = g_get_monotonic_time ();
  opener = g_thread_new ("gate", gate_open_later, &gate);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  g_assert_true (tg_release_wait (G_MAXINT64));
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 150 * 1000);
  g_thread_join (opener);
  g_assert_cmpint (g_atomic_int_get (&k.released), ==, g_atomic_int_get (&k.kept));
  tg_test_download (&counted, k.counter, sizeof counted);
  g_assert_cmpuint (counted, ==, CALLS);
  keeper_clear (&k);
}

static void
test_owner_refusals (TgTestGpu *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TgProducer) q = tg_producer_new ("retained", 0);
  cudaGraph_t graph = NULL;
  cudaStream_t other;
  TgRetained *retained;

  TG_TEST_REQUIRE_GPU ();
  g_assert_null (tg_retained_new (f->stream, &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_NOT_CAPTURING);
  g_clear_error (&error);

  /* A capture whose graph holds a user object already cannot be taken
   * over. */
  TG_TEST_CUDA (cudaStreamBeginCapture (f->stream, cudaStreamCaptureModeThreadLocal));
  g_assert_true (tg_retain_capture (f->stream, q, &error));
  g_assert_no_error (error);
  g_assert_null (tg_retained_new (f->stream, &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED);
  g_clear_error (&error);
  TG_TEST_CUDA (cudaStreamEndCapture (f->stream, &graph));
  TG_TEST_CUDA (cudaGraphDestroy (graph));

  /* Handed back during its capture (on another stream: nothing can follow
   * a capturing one): what comes later gets a user object. */
  other = tg_test_stream_new ();
  TG_TEST_CUDA (cudaStreamBeginCapture (f->stream, cudaStreamCaptureModeThreadLocal));
  retained = tg_retained_new (f->stream, &error);
  g_assert_no_error (error);
  g_assert_true (tg_retained_release (retained, other, &error));
  g_assert_no_error (error);
  g_assert_true (tg_retain_capture (f->stream, q, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (f->stream, &graph));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  TG_TEST_CUDA (cudaStreamSynchronize (other));
  TG_TEST_CUDA (cudaStreamDestroy (other));
}

/* Host side: TG_STREAM_AUTO resolves to a registered capture, and none is;
 * what a refused retention was given is released at once. */
static void
test_auto_without_scope (void)
{
  g_autoptr (GError) error = NULL;
  Keeper k = { 0 };

  g_assert_null (tg_retained_new (TG_STREAM_AUTO, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (tg_retain_capture_full (TG_STREAM_AUTO, &k, token_released, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_cmpint (k.released, ==, 1);
}

void
interop_test_add_retention (void)
{
  TG_TEST_ADD_GPU ("/interop/retention/none-when-nothing-kept",
                   test_none_when_nothing_kept);
  TG_TEST_ADD_GPU ("/interop/retention/one-per-capture", test_one_per_capture);
  TG_TEST_ADD_GPU ("/interop/retention/owner-holds", test_owner_holds);
  TG_TEST_ADD_GPU ("/interop/retention/owner-refusals", test_owner_refusals);
  g_test_add_func ("/interop/retention/auto-without-scope", test_auto_without_scope);
}
