/* SPDX-License-Identifier: Apache-2.0 */
/* threads-test-misuse.c: a producer misused from several threads at once:
 * setup racing its first run, rebinding its stream while it runs, a capture
 * scope ended from a foreign thread.  Every case but the scope one runs
 * without a GPU. */
#include "config.h"
#include "threads-test.h"

#include <string.h>

typedef TgTestGpu Fixture;

/* ------------------------------------------------------------------------ */
/* Criticals the threads provoke on purpose: setup calls refused because the
 * producer already ran, and lookups of bindings a stage did not declare.
 * Counted, neither printed nor fatal; any other critical aborts.          */

static gint refusals, undeclared_lookups;
static _Thread_local guint refusals_here;

static gint *
expected_counter (const char *domain, GLogLevelFlags level, const char *message)
{
  if (g_strcmp0 (domain, "TrackGen") != 0 || !(level & G_LOG_LEVEL_CRITICAL))
    return NULL;
  if (strstr (message, "already ran, so its stages are fixed") != NULL)
    return &refusals;
  if (strstr (message, "which it did not declare") != NULL)
    return &undeclared_lookups;
  return NULL;
}

static void
quiet_expected (const char *domain, GLogLevelFlags level, const char *message,
                gpointer data)
{
  if (expected_counter (domain, level, message) == NULL)
    g_log_default_handler (domain, level, message, data);
}

static gboolean
count_expected (const char *domain, GLogLevelFlags level, const char *message,
                gpointer data)
{
  gint *counter = expected_counter (domain, level, message);

  if (counter == NULL)
    return TRUE;
  g_atomic_int_inc (counter);
  if (counter == &refusals)
    refusals_here++;
  return FALSE;
}

static guint
expected_criticals_begin (void)
{
  g_atomic_int_set (&refusals, 0);
  g_atomic_int_set (&undeclared_lookups, 0);
  g_test_log_set_fatal_handler (count_expected, NULL);
  /* A handler takes a message only when its mask has every flag of it. */
  return g_log_set_handler ("TrackGen", G_LOG_LEVEL_CRITICAL | G_LOG_FLAG_FATAL,
                            quiet_expected, NULL);
}

static void
expected_criticals_end (guint handler)
{
  g_log_remove_handler ("TrackGen", handler);
  g_test_log_set_fatal_handler (NULL, NULL);
}

/* Lets the threads of a case start together. */
static void
start_line (gint *waiting)
{
  g_atomic_int_add (waiting, -1);
  while (g_atomic_int_get (waiting) > 0)
    g_thread_yield ();
}

/* A call that reaches the device: it succeeds on a GPU, and fails with the
 * CUDA error of the missing device without one. */
static void
assert_device_call (gboolean ok, GError *error)
{
  if (tg_test_have_gpu ())
    {
      g_assert_no_error (error);
      g_assert_true (ok);
      return;
    }
  tg_test_assert_cuda_error (error);
  g_assert_false (ok);
  g_error_free (error);
}

/* ------------------------------------------------------------------------ */
/* Stages added, guarded and declared while another thread runs first.      */

#define N_ADDERS 3
#define N_SLOTS 200
#define N_BEFORE_RUN 24
#define N_MOST (N_ADDERS * N_SLOTS)

typedef struct
{
  char name[24];
  guint index;          /* G_MAXUINT: refused, or not tried */
  gboolean conditional; /* its condition was set */
  gboolean declared;    /* its binding was declared */
  gboolean saw_buf;     /* the binding was there when it ran */
  gint ran_at;          /* -1, or its position among the stages run */
  gint runs;
  gint destroyed;
} Slot;

typedef struct
{
  TgProducer *producer;
  gint waiting;
  gint attempts;
  gint calling; /* the first run is being called */
  gint ran;
  gint32 *flag; /* device, GPU only */
  guint8 *buf;  /* device, GPU only */
  Slot slots[N_ADDERS][N_SLOTS];
  guint last[N_ADDERS]; /* the slot tried after the run */
  guint n_refused[N_ADDERS];
} Setup;

typedef struct
{
  Setup *setup;
  guint thread;
} Adder;

/* Stages run in one call at a time, in index order. */
static gint run_sequence;

static gboolean
slot_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  Slot *s = data;

  g_assert_cmpstr (tg_launch_get_stage_name (launch), ==, s->name);
  /* Its adder may still be setting it up, unsuccessfully: touch only what
   * the stage itself owns. */
  s->saw_buf = tg_launch_get_binding (launch, "buf") != NULL;
  s->ran_at = run_sequence++;
  s->runs++;
  return TRUE;
}

static void
slot_destroy (gpointer data)
{
  ((Slot *)data)->destroyed++;
}

/* Adds stages, each guarded and declaring a binding, until it sees the run
 * done; then tries once more. */
static gpointer
adder_main (gpointer data)
{
  Adder *a = data;
  Setup *setup = a->setup;
  TgProducer *p = setup->producer;

  start_line (&setup->waiting);
  for (guint k = 0; k < N_SLOTS; k++)
    {
      Slot *s = &setup->slots[a->thread][k];
      gboolean last = k == N_SLOTS - 1 || g_atomic_int_get (&setup->ran);
      guint before;

      /* Past a few stages, go on only with the run under way beside. */
      while (k == N_BEFORE_RUN && !g_atomic_int_get (&setup->calling))
        g_thread_yield ();
      while (last && !g_atomic_int_get (&setup->ran))
        g_thread_yield ();
      g_snprintf (s->name, sizeof s->name, "t%u-%u", a->thread, k);
      before = refusals_here;
      g_atomic_int_inc (&setup->attempts);
      s->index = tg_producer_add_device_stage (p, s->name, TG_STAGE_CAPTURE_SAFE,
                                               slot_stage, s, slot_destroy, NULL);
      g_assert_cmpuint (refusals_here, ==, before + (s->index == G_MAXUINT));
      if (last)
        {
          setup->last[a->thread] = k;
          break;
        }
      if (s->index == G_MAXUINT)
        continue;
      /* Setup goes on call by call; the run may seal it in between. */
      before = refusals_here;
      tg_producer_set_stage_condition (p, s->index, k % 2 ? "flag" : NULL, NULL);
      s->conditional = k % 2 && refusals_here == before;
      before = refusals_here;
      tg_producer_declare_binding (p, s->index, "buf", k % 8 + 1, NULL);
      s->declared = refusals_here == before;
    }
  setup->n_refused[a->thread] = refusals_here;
  return NULL;
}

static gpointer
first_run_main (gpointer data)
{
  Setup *setup = data;
  GError *error = NULL;
  gboolean ok;

  start_line (&setup->waiting);
  /* Once the setup is under way. */
  while (g_atomic_int_get (&setup->attempts) < N_BEFORE_RUN)
    g_thread_yield ();
  g_atomic_int_set (&setup->calling, TRUE);
  /* Without a device it fails there, after it sealed the stages. */
  ok = tg_producer_run (setup->producer, TG_STREAM_AUTO, TG_POLICY_EAGER,
                        tg_unconditional (), &error);
  assert_device_call (ok, error);
  g_atomic_int_set (&setup->ran, TRUE);
  return NULL;
}

static void
test_setup_vs_first_run (Fixture *f, gconstpointer data)
{
  Setup *setup = g_new0 (Setup, 1);
  Adder adders[N_ADDERS];
  GThread *threads[N_ADDERS + 1];
  guint handler, n_added = 0, n_refused = 0;
  g_autofree const Slot **by_index = g_new0 (const Slot *, N_MOST);
  gint n_ran = 0, n_undeclared_ran = 0;

  run_sequence = 0;
  for (guint t = 0; t < N_ADDERS; t++)
    for (guint k = 0; k < N_SLOTS; k++)
      setup->slots[t][k] = (Slot){ .index = G_MAXUINT, .ran_at = -1 };
  setup->producer = tg_producer_new ("setup-race", 0);
  setup->waiting = N_ADDERS + 1;
  if (tg_test_have_gpu ())
    {
      /* Allocations start zeroed: the guarded stages are skipped. */
      setup->flag = tg_test_device_alloc (sizeof (gint32));
      setup->buf = tg_test_device_alloc (8);
      g_assert_true (tg_producer_bind (setup->producer, "flag", setup->flag,
                                       sizeof (gint32), NULL));
      g_assert_true (tg_producer_bind (setup->producer, "buf", setup->buf, 8, NULL));
    }

  handler = expected_criticals_begin ();
  for (guint t = 0; t < N_ADDERS; t++)
    {
      adders[t] = (Adder){ setup, t };
      threads[t] = g_thread_new ("adder", adder_main, &adders[t]);
    }
  threads[N_ADDERS] = g_thread_new ("first-run", first_run_main, setup);
  for (guint t = 0; t <= N_ADDERS; t++)
    g_thread_join (threads[t]);
  expected_criticals_end (handler);

  /* Every refusal was one critical, the attempt after the run one of them.
   * The stages taken have the indices 0 .. n - 1, increasing in each
   * thread's order. */
  for (guint t = 0; t < N_ADDERS; t++)
    {
      const Slot *previous = NULL;

      g_assert_cmpuint (setup->slots[t][setup->last[t]].index, ==, G_MAXUINT);
      n_refused += setup->n_refused[t];
      for (guint k = 0; k < N_SLOTS; k++)
        {
          const Slot *s = &setup->slots[t][k];

          if (s->index == G_MAXUINT)
            {
              g_assert_cmpint (s->runs, ==, 0);
              continue;
            }
          g_assert_cmpuint (s->index, <, N_MOST);
          g_assert_null (by_index[s->index]);
          g_assert_true (previous == NULL || s->index > previous->index);
          by_index[s->index] = previous = s;
          n_added++;
        }
    }
  g_assert_cmpuint (g_atomic_int_get (&refusals), ==, n_refused);
  g_assert_cmpuint (tg_producer_get_n_stages (setup->producer), ==, n_added);

  /* On a GPU the run ran each stage it sealed once, in order, but those
   * whose condition it sealed (the flag is 0), each seeing the binding if
   * it sealed its declaration; without a GPU nothing ran. */
  for (guint i = 0; i < n_added; i++)
    {
      const Slot *s = by_index[i];
      gboolean ran;

      g_assert_nonnull (s);
      ran = tg_test_have_gpu () && !s->conditional;
      g_assert_cmpint (s->runs, ==, ran);
      if (!ran)
        continue;
      g_assert_cmpint (s->ran_at, ==, n_ran++);
      g_assert_cmpint (s->saw_buf, ==, s->declared);
      n_undeclared_ran += !s->declared;
    }
  g_assert_cmpint (g_atomic_int_get (&undeclared_lookups), ==, n_undeclared_ran);
  g_test_message ("%u stages added, %u setup calls refused, %d stages ran", n_added,
                  n_refused, n_ran);

  /* The producer frees the data of the stages it took, and of no other. */
  tg_producer_unref (setup->producer);
  for (guint t = 0; t < N_ADDERS; t++)
    for (guint k = 0; k < N_SLOTS; k++)
      g_assert_cmpint (setup->slots[t][k].destroyed, ==,
                       setup->slots[t][k].index != G_MAXUINT);
  if (tg_test_have_gpu ())
    {
      tg_test_device_free (setup->flag);
      tg_test_device_free (setup->buf);
    }
  g_free (setup);
}

/* ------------------------------------------------------------------------ */
/* The bound stream changed while other threads run and read it.           */

#define N_ROUNDS 150

typedef struct
{
  TgProducer *producer;
  cudaStream_t mine;     /* GPU only: the fixture's stream */
  cudaStream_t fallback; /* GPU only: TrackGen's default stream */
  gint waiting;
  gint runs;
  gint wrong_streams;
} Rebinding;

/* A call runs on what was bound when it resolved: nothing (the default
 * stream), the legacy stream, or the test's stream; never anything else. */
static gboolean
stream_allowed (const Rebinding *r, cudaStream_t stream)
{
  return stream == r->fallback || stream == cudaStreamLegacy || stream == r->mine;
}

static gboolean
stream_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  Rebinding *r = data;

  if (!stream_allowed (r, tg_launch_get_stream (launch)))
    r->wrong_streams++;
  r->runs++;
  return TRUE;
}

static gpointer
setter_main (gpointer data)
{
  Rebinding *r = data;
  const cudaStream_t streams[] = { TG_STREAM_AUTO, NULL, r->mine };

  start_line (&r->waiting);
  for (guint i = 0; i < N_ROUNDS; i++)
    {
      /* Without a device only unbinding works: a stream cannot be checked. */
      cudaStream_t stream = streams[i % (tg_test_have_gpu () ? 3 : 2)];
      GError *error = NULL;
      gboolean ok = tg_producer_set_stream (r->producer, stream, &error);

      if (stream == TG_STREAM_AUTO)
        {
          g_assert_no_error (error);
          g_assert_true (ok);
        }
      else
        assert_device_call (ok, error);
    }
  return NULL;
}

static gpointer
getter_main (gpointer data)
{
  Rebinding *r = data;

  start_line (&r->waiting);
  for (guint i = 0; i < N_ROUNDS; i++)
    {
      cudaStream_t stream = tg_producer_get_stream (r->producer);

      if (stream != TG_STREAM_AUTO)
        {
          g_assert_true (tg_test_have_gpu ());
          g_assert_true (stream == NULL || stream == r->mine);
        }
    }
  return NULL;
}

static gpointer
runner_main (gpointer data)
{
  Rebinding *r = data;

  start_line (&r->waiting);
  for (guint i = 0; i < N_ROUNDS; i++)
    {
      GError *error = NULL;
      gboolean ok = tg_producer_run (r->producer, TG_STREAM_AUTO, TG_POLICY_EAGER,
                                     tg_unconditional (), &error);

      assert_device_call (ok, error);
    }
  return NULL;
}

static void
test_set_stream_vs_run (Fixture *f, gconstpointer data)
{
  Rebinding r = { NULL };
  GThread *threads[3];

  r.producer = tg_producer_new ("rebinding", 0);
  r.waiting = G_N_ELEMENTS (threads);
  if (tg_test_have_gpu ())
    {
      r.mine = f->stream;
      r.fallback = tg_default_stream (0, NULL);
      g_assert_nonnull (r.fallback);
    }
  g_assert_cmpuint (tg_producer_add_device_stage (r.producer, "stream", TG_STAGE_NONE,
                                                  stream_stage, &r, NULL, NULL),
                    ==, 0);
  threads[0] = g_thread_new ("setter", setter_main, &r);
  threads[1] = g_thread_new ("getter", getter_main, &r);
  threads[2] = g_thread_new ("runner", runner_main, &r);
  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    g_thread_join (threads[t]);

  g_assert_cmpint (r.runs, ==, tg_test_have_gpu () ? N_ROUNDS : 0);
  g_assert_cmpint (r.wrong_streams, ==, 0);
  g_assert_true (tg_producer_set_stream (r.producer, TG_STREAM_AUTO, NULL));
  g_assert_true (tg_producer_get_stream (r.producer) == TG_STREAM_AUTO);
  if (tg_test_have_gpu ())
    TG_TEST_CUDA (cudaDeviceSynchronize ());
  tg_producer_unref (r.producer);
}

/* ------------------------------------------------------------------------ */
/* A capture scope ended from threads other than its own.                  */

typedef struct
{
  TgCaptureScope *scope;
  cudaStream_t stream;
} Foreign;

static gpointer
end_elsewhere (gpointer data)
{
  Foreign *x = data;
  GError *error = NULL;

  g_assert_false (tg_capture_scope_end (x->scope, &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_THREAD);
  g_error_free (error);
  /* The scope is its thread's: here the capture is not registered, and a
   * call naming no stream does not go into it. */
  g_assert_false (tg_capture_is_registered (x->stream));
  g_assert_true (tg_stream_resolve (TG_STREAM_AUTO, 0, NULL)
                 == tg_default_stream (0, NULL));
  return NULL;
}

static void
test_scope_end_elsewhere (Fixture *f, gconstpointer data)
{
  Foreign x = { NULL, f->stream };
  GThread *threads[4];
  cudaGraph_t graph = NULL;
  GError *error = NULL;

  TG_TEST_REQUIRE_GPU ();
  TG_TEST_CUDA (cudaStreamBeginCapture (f->stream, cudaStreamCaptureModeThreadLocal));
  x.scope
      = tg_capture_scope_begin (f->stream, cudaStreamCaptureModeThreadLocal, &error);
  g_assert_no_error (error);
  g_assert_nonnull (x.scope);

  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    threads[t] = g_thread_new ("scope-ender", end_elsewhere, &x);
  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    g_thread_join (threads[t]);

  /* Still registered here, and still the stream of calls naming none. */
  g_assert_true (tg_capture_is_registered (f->stream));
  g_assert_true (tg_stream_resolve (TG_STREAM_AUTO, 0, &error) == f->stream);
  g_assert_no_error (error);
  g_assert_true (tg_capture_scope_end (x.scope, &error));
  g_assert_no_error (error);
  g_assert_false (tg_capture_is_registered (f->stream));
  g_assert_true (tg_capture_scope_end (x.scope, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (f->stream, &graph));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_capture_scope_free (x.scope);
}

void
threads_test_add_misuse (void)
{
  TG_TEST_ADD_GPU ("/threads/misuse/setup-vs-first-run", test_setup_vs_first_run);
  TG_TEST_ADD_GPU ("/threads/misuse/set-stream-vs-run", test_set_stream_vs_run);
  TG_TEST_ADD_GPU ("/threads/misuse/scope-end-elsewhere", test_scope_end_elsewhere);
}
