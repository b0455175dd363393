/* SPDX-License-Identifier: Apache-2.0 */
/* misuse-test.c: argument misuse, refused with a GError naming the argument
 * (a value a caller can get wrong at run time: the stage builders, a
 * policy, a graph or stream handle) or a critical (programming errors: a
 * NULL object), nothing changed.
 * Misuse from several threads at once is in threads-test. */
#include "config.h"
#include "tg-test.h"

#include <string.h>

static gboolean
noop_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return TRUE;
}

static gboolean
noop_host_stage (TgHostOps *ops, gpointer data, GError **error)
{
  return TRUE;
}

static gint destroyed;

static void
count_destroy (gpointer data)
{
  destroyed++;
}

static guint
add_loop (TgProducer *p, const char *name, TgStageFlags flags, const char *flag,
          const char *status, guint max_iters, GError **error)
{
  TgLoopSpec loop
      = { .flag_binding = flag, .status_binding = status, .max_iters = max_iters };

  return tg_producer_add_loop_stage (p, name, flags, &loop, noop_stage, NULL, NULL,
                                     error);
}

/* A stage builder's refusal: @call, which passes `error` (the macro's own
 * GError **), returns G_MAXUINT and sets @domain/@code with a message
 * naming the producer and @expect. */
#define ASSERT_REFUSED(call, domain, code, expect)                                     \
  G_STMT_START                                                                         \
  {                                                                                    \
    g_autoptr (GError) e_ = NULL;                                                      \
    GError **error = &e_;                                                              \
    g_assert_cmpuint ((call), ==, G_MAXUINT);                                          \
    g_assert_error (e_, domain, code);                                                 \
    g_assert_nonnull (strstr (e_->message, "producer 'misuse'"));                      \
    g_assert_nonnull (strstr (e_->message, expect));                                   \
  }                                                                                    \
  G_STMT_END

/* As ASSERT_REFUSED, for the calls that return a gboolean. */
#define ASSERT_FAILS(call, domain, code, expect)                                       \
  G_STMT_START                                                                         \
  {                                                                                    \
    g_autoptr (GError) e_ = NULL;                                                      \
    GError **error = &e_;                                                              \
    g_assert_false (call);                                                             \
    g_assert_error (e_, domain, code);                                                 \
    g_assert_nonnull (strstr (e_->message, "producer 'misuse'"));                      \
    g_assert_nonnull (strstr (e_->message, expect));                                   \
  }                                                                                    \
  G_STMT_END

/* The status write would overwrite the flag; the device counts iterations
 * in a gint32. */
static void
test_loop_spec (void)
{
  g_autoptr (TgProducer) p = tg_producer_new ("misuse", 0);
  g_autoptr (GError) error = NULL;

  ASSERT_REFUSED (
      add_loop (p, "same", TG_STAGE_CAPTURE_SAFE, "go", "go", 8, error),
      TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_DUPLICATE,
      "stage 'same': the flag binding and the status binding are both 'go'");
  ASSERT_REFUSED (add_loop (p, "over", TG_STAGE_CAPTURE_SAFE, "go", "status",
                            (guint)G_MAXINT32 + 1, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE,
                  "stage 'over': max_iters 2147483648 is not between 1 and");
  ASSERT_REFUSED (add_loop (p, "none", TG_STAGE_CAPTURE_SAFE, "go", "status", 0, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE, "max_iters 0");
  ASSERT_REFUSED (add_loop (p, "noflag", TG_STAGE_NONE, NULL, "status", 4, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID, "the flag binding");
  ASSERT_REFUSED (tg_producer_add_loop_stage (p, "nospec", TG_STAGE_NONE, NULL,
                                              noop_stage, NULL, NULL, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID, "loop spec is missing");
  g_assert_cmpuint (tg_producer_get_n_stages (p), ==, 0);
  /* The bound itself is fine. */
  g_assert_cmpuint (
      add_loop (p, "most", TG_STAGE_CAPTURE_SAFE, "go", "status", G_MAXINT32, &error),
      ==, 0);
  g_assert_no_error (error);
}

static void
test_stage_unknown_flag (void)
{
  const TgStageFlags unknown = TG_STAGE_CAPTURE_SAFE | (TgStageFlags)(1 << 5);
  const TgDeviceFunc cases[] = { noop_stage };
  const TgSwitchSpec sw = { .index_binding = "index", .n_cases = 1, .cases = cases };
  g_autoptr (TgProducer) p = tg_producer_new ("misuse", 0);

  ASSERT_REFUSED (tg_producer_add_device_stage (p, "device", unknown, noop_stage, NULL,
                                                NULL, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                  "stage 'device': flags 0x21 are not valid");
  ASSERT_REFUSED (tg_producer_add_host_stage (p, "host", unknown, noop_host_stage, NULL,
                                              NULL, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                  "stage 'host': flags 0x21");
  /* A HOST stage launches nothing: no legacy stream. */
  ASSERT_REFUSED (tg_producer_add_host_stage (p, "host", TG_STAGE_LEGACY_STREAM,
                                              noop_host_stage, NULL, NULL, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                  "stage 'host': flags 0x2");
  ASSERT_REFUSED (add_loop (p, "loop", unknown, "go", "status", 8, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID, "stage 'loop': flags");
  ASSERT_REFUSED (
      tg_producer_add_switch_stage (p, "switch", unknown, &sw, NULL, NULL, error),
      TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID, "stage 'switch': flags");
  g_assert_cmpuint (tg_producer_get_n_stages (p), ==, 0);
}

/* Missing functions and cases are the caller's data too. */
static void
test_stage_missing_function (void)
{
  const TgDeviceFunc holes[] = { noop_stage, NULL };
  TgSwitchSpec sw = { .index_binding = "index", .n_cases = 2, .cases = holes };
  g_autoptr (TgProducer) p = tg_producer_new ("misuse", 0);

  ASSERT_REFUSED (tg_producer_add_device_stage (p, "device", TG_STAGE_NONE, NULL, NULL,
                                                NULL, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                  "stage function is missing");
  ASSERT_REFUSED (
      tg_producer_add_host_stage (p, "host", TG_STAGE_NONE, NULL, NULL, NULL, error),
      TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID, "host function is missing");
  ASSERT_REFUSED (tg_producer_add_loop_stage (p, "loop", TG_STAGE_NONE,
                                              &(TgLoopSpec){ .flag_binding = "go",
                                                             .status_binding = "status",
                                                             .max_iters = 2 },
                                              NULL, NULL, NULL, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID, "loop body is missing");
  ASSERT_REFUSED (
      tg_producer_add_switch_stage (p, "switch", TG_STAGE_NONE, &sw, NULL, NULL, error),
      TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID, "case 1 is missing");
  sw.n_cases = 0;
  ASSERT_REFUSED (
      tg_producer_add_switch_stage (p, "switch", TG_STAGE_NONE, &sw, NULL, NULL, error),
      TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_EMPTY, "at least one case");
  ASSERT_REFUSED (tg_producer_add_switch_stage (p, "switch", TG_STAGE_NONE, NULL, NULL,
                                                NULL, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                  "switch spec is missing");
  g_assert_cmpuint (tg_producer_get_n_stages (p), ==, 0);
}

/* Setup calls on a stage that does not exist, and the else branch of a stage
 * that cannot have one. */
static void
test_stage_setup_refusals (void)
{
  g_autoptr (TgProducer) p = tg_producer_new ("misuse", 0);
  g_autoptr (GError) error = NULL;
  guint s, h;

  s = tg_producer_add_device_stage (p, "dev", TG_STAGE_NONE, noop_stage, NULL, NULL,
                                    &error);
  g_assert_no_error (error);
  h = tg_producer_add_host_stage (p, "host", TG_STAGE_NONE, noop_host_stage, NULL, NULL,
                                  &error);
  g_assert_no_error (error);
  ASSERT_FAILS (tg_producer_declare_binding (p, 7, "x", 4, error), TG_ARGUMENT_ERROR,
                TG_ARGUMENT_ERROR_OUT_OF_RANGE, "stage 7 does not exist");
  ASSERT_FAILS (tg_producer_set_stage_condition (p, 7, "go", error), TG_ARGUMENT_ERROR,
                TG_ARGUMENT_ERROR_OUT_OF_RANGE, "stage 7 does not exist");
  ASSERT_FAILS (tg_producer_set_stage_else (p, 7, noop_stage, error), TG_ARGUMENT_ERROR,
                TG_ARGUMENT_ERROR_OUT_OF_RANGE, "(the producer has 2 stages)");
  ASSERT_FAILS (tg_producer_declare_binding (p, s, "x", 0, error), TG_ARGUMENT_ERROR,
                TG_ARGUMENT_ERROR_EMPTY, "stage 'dev': binding 'x': min_size");
  /* An else branch needs a DEVICE stage with a condition. */
  ASSERT_FAILS (tg_producer_set_stage_else (p, s, noop_stage, error), TG_ARGUMENT_ERROR,
                TG_ARGUMENT_ERROR_INVALID, "stage 'dev': not a DEVICE stage with a");
  g_assert_true (tg_producer_set_stage_condition (p, h, "go", &error));
  g_assert_no_error (error);
  ASSERT_FAILS (tg_producer_set_stage_else (p, h, noop_stage, error), TG_ARGUMENT_ERROR,
                TG_ARGUMENT_ERROR_INVALID, "stage 'host'");
  g_assert_true (tg_producer_set_stage_condition (p, s, "go", &error));
  g_assert_true (tg_producer_set_stage_else (p, s, noop_stage, &error));
  g_assert_no_error (error);
}

/* Once a producer ran, its stages are fixed: every builder is refused with
 * SEALED and the caller keeps its data. */
static void
test_stage_after_run (void)
{
  g_autoptr (TgProducer) p = tg_producer_new ("misuse", 0);
  g_autoptr (GError) run_error = NULL;
  const TgDeviceFunc cases[] = { noop_stage };
  const TgSwitchSpec sw = { .index_binding = "index", .n_cases = 1, .cases = cases };
  guint s;

  s = tg_producer_add_device_stage (p, "first", TG_STAGE_NONE, noop_stage, NULL, NULL,
                                    NULL);
  /* Without a device the run fails after it sealed the stages. */
  (void)tg_producer_run (p, TG_STREAM_AUTO, TG_POLICY_EAGER, tg_unconditional (),
                         &run_error);
  destroyed = 0;
  ASSERT_REFUSED (tg_producer_add_device_stage (p, "late", TG_STAGE_NONE, noop_stage,
                                                NULL, count_destroy, error),
                  TG_STATE_ERROR, TG_STATE_ERROR_SEALED,
                  "stage 'late': the producer already ran");
  ASSERT_REFUSED (tg_producer_add_host_stage (p, "late", TG_STAGE_NONE, noop_host_stage,
                                              NULL, NULL, error),
                  TG_STATE_ERROR, TG_STATE_ERROR_SEALED, "already ran");
  ASSERT_REFUSED (add_loop (p, "late", TG_STAGE_NONE, "go", "status", 2, error),
                  TG_STATE_ERROR, TG_STATE_ERROR_SEALED, "already ran");
  ASSERT_REFUSED (
      tg_producer_add_switch_stage (p, "late", TG_STAGE_NONE, &sw, NULL, NULL, error),
      TG_STATE_ERROR, TG_STATE_ERROR_SEALED, "already ran");
  ASSERT_FAILS (tg_producer_declare_binding (p, s, "x", 4, error), TG_STATE_ERROR,
                TG_STATE_ERROR_SEALED, "already ran");
  ASSERT_FAILS (tg_producer_set_stage_condition (p, s, "go", error), TG_STATE_ERROR,
                TG_STATE_ERROR_SEALED, "already ran");
  ASSERT_FAILS (tg_producer_set_stage_else (p, s, NULL, error), TG_STATE_ERROR,
                TG_STATE_ERROR_SEALED, "already ran");
  g_assert_cmpint (destroyed, ==, 0);
  g_assert_cmpuint (tg_producer_get_n_stages (p), ==, 1);
}

static gboolean
calls_back_stage (TgHostOps *ops, gpointer data, GError **error)
{
  TgProducer *p = data;
  g_autoptr (GError) local = NULL;

  g_assert_cmpuint (tg_producer_add_device_stage (p, "inner", TG_STAGE_NONE, noop_stage,
                                                  NULL, NULL, &local),
                    ==, G_MAXUINT);
  g_assert_error (local, TG_STATE_ERROR, TG_STATE_ERROR_BUSY);
  g_assert_nonnull (strstr (local->message, "stage 'inner': the producer is running"));
  g_clear_error (&local);
  g_assert_false (tg_producer_declare_binding (p, 0, "x", 4, &local));
  g_assert_error (local, TG_STATE_ERROR, TG_STATE_ERROR_BUSY);
  g_clear_error (&local);
  g_assert_false (tg_producer_set_stage_condition (p, 0, "go", &local));
  g_assert_error (local, TG_STATE_ERROR, TG_STATE_ERROR_BUSY);
  g_clear_error (&local);
  g_assert_false (tg_producer_set_stage_else (p, 0, NULL, &local));
  g_assert_error (local, TG_STATE_ERROR, TG_STATE_ERROR_BUSY);
  return TRUE;
}

/* A stage that sets up its own producer: BUSY, nothing changed. */
static void
test_stage_from_own_stage (void)
{
  g_autoptr (TgProducer) p = tg_producer_new ("misuse", 0);
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  tg_producer_add_host_stage (p, "outer", TG_STAGE_NONE, calls_back_stage, p, NULL,
                              NULL);
  g_assert_true (tg_producer_run (p, TG_STREAM_AUTO, TG_POLICY_EAGER,
                                  tg_unconditional (), &error));
  g_assert_no_error (error);
  g_assert_cmpuint (tg_producer_get_n_stages (p), ==, 1);
}

/* A caller that passes no GError still sees the misuse, as a critical that
 * names the function. */
static void
test_refusal_without_error_is_critical (void)
{
  g_autoptr (TgProducer) p = tg_producer_new ("misuse", 0);

  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "tg_producer_add_device_stage: producer 'misuse', stage 'x': "
                         "flags 0x40 are not valid*");
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "tg_producer_set_stage_condition: producer 'misuse': stage 3 "
                         "does not exist*");
  g_assert_cmpuint (tg_producer_add_device_stage (p, "x", (TgStageFlags)(1 << 6),
                                                  noop_stage, NULL, NULL, NULL),
                    ==, G_MAXUINT);
  g_assert_false (tg_producer_set_stage_condition (p, 3, "go", NULL));
  g_test_assert_expected_messages ();
}

/* A policy a caller computes: a GError naming it, nothing entered; with no
 * GError, a critical too (0.4's rule for the builders). */
static void
test_unknown_policy (void)
{
  TgProducer *p = tg_producer_new ("misuse", 0);
  TgPolicy policy = TG_POLICY_AUTO;
  GError *error = NULL;

  g_assert_false (tg_producer_resolve (p, TG_STREAM_AUTO, (TgPolicy)99,
                                       tg_unconditional (), &policy, NULL, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
  g_assert_nonnull (strstr (error->message, "policy: 99"));
  g_assert_cmpstr (tg_error_get_producer (error), ==, "misuse");
  g_assert_cmpint (policy, ==, TG_POLICY_AUTO);
  g_clear_error (&error);
  g_assert_false (
      tg_producer_run (p, TG_STREAM_AUTO, (TgPolicy)-1, tg_unconditional (), &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
  g_assert_nonnull (strstr (error->message, "policy: -1"));
  g_clear_error (&error);
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "*tg_producer_run_full*producer 'misuse': policy: 99*");
  g_assert_false (
      tg_producer_run (p, TG_STREAM_AUTO, (TgPolicy)99, tg_unconditional (), NULL));
  g_test_assert_expected_messages ();
  /* Refused before the producer was entered: its setup is still open. */
  g_assert_cmpuint (tg_producer_add_device_stage (p, "after", TG_STAGE_NONE, noop_stage,
                                                  NULL, NULL, NULL),
                    ==, 0);
  tg_producer_unref (p);
}

/* A NULL graph or TG_STREAM_AUTO where a stream is needed: values a caller
 * computes, refused with a GError naming the argument before any CUDA
 * call, nothing taken (the data of a _full call released once). */
static void
test_retain_values (void)
{
  TgCaptureState state = TG_CAPTURE_ACTIVE;
  TgLiveObjects before;
  TgProducer *p;
  gint fake;
  GError *error = NULL;

  tg_test_live_snapshot (&before);
  p = tg_producer_new ("kept", 0);

  g_assert_false (tg_retain (NULL, p, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "graph: NULL"));
  g_clear_error (&error);
  destroyed = 0;
  g_assert_false (tg_retain_full (NULL, p, count_destroy, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "graph: NULL"));
  g_assert_cmpint (destroyed, ==, 1);
  g_clear_error (&error);
  g_assert_false (tg_retained_release ((TgRetained *)&fake, TG_STREAM_AUTO, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "stream: TG_STREAM_AUTO"));
  g_clear_error (&error);
  g_assert_false (tg_stream_get_capture_state (TG_STREAM_AUTO, &state, NULL, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "stream: TG_STREAM_AUTO"));
  g_assert_cmpint (state, ==, TG_CAPTURE_ACTIVE);
  g_clear_error (&error);
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL, "*tg_retain*graph: NULL*");
  g_assert_false (tg_retain (NULL, p, NULL));
  g_test_assert_expected_messages ();
  /* The producer gained no reference: this unref frees it. */
  tg_producer_unref (p);
  tg_test_assert_no_leaks (&before);
}

/* TG_STREAM_AUTO names no stream, and tg_stream_is_capturing() has no
 * GError to refuse it with: a critical, and FALSE. */
static void
test_is_capturing_auto (void)
{
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "*tg_stream_is_capturing*stream != TG_STREAM_AUTO*failed*");
  g_assert_false (tg_stream_is_capturing (TG_STREAM_AUTO));
  g_test_assert_expected_messages ();
}

static void
test_release_wait_negative (void)
{
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "*assertion*timeout_us*failed*");
  g_assert_false (tg_release_wait (-1));
  g_test_assert_expected_messages ();
}

/* An empty binding or stage name would read as a missing word in every
 * message about it. */
static void
test_empty_names (void)
{
  const TgDeviceFunc cases[] = { noop_stage };
  const TgSwitchSpec sw = { .index_binding = "", .n_cases = 1, .cases = cases };
  g_autoptr (TgProducer) p = tg_producer_new ("misuse", 0);
  g_autoptr (GError) bind_error = NULL;
  guint s;

  ASSERT_REFUSED (tg_producer_add_device_stage (p, "", TG_STAGE_NONE, noop_stage, NULL,
                                                NULL, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID, "a stage name must be");
  ASSERT_REFUSED (tg_producer_add_device_stage (p, NULL, TG_STAGE_NONE, noop_stage,
                                                NULL, NULL, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID, "a stage name must be");
  ASSERT_REFUSED (add_loop (p, "loop", TG_STAGE_NONE, "", "status", 4, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID, "the flag binding");
  ASSERT_REFUSED (add_loop (p, "loop", TG_STAGE_NONE, "go", "", 4, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID, "the status binding");
  ASSERT_REFUSED (
      tg_producer_add_switch_stage (p, "sw", TG_STAGE_NONE, &sw, NULL, NULL, error),
      TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID, "the index binding");
  s = tg_producer_add_device_stage (p, "ok", TG_STAGE_NONE, noop_stage, NULL, NULL,
                                    NULL);
  g_assert_cmpuint (s, ==, 0);
  ASSERT_FAILS (tg_producer_declare_binding (p, s, "", 4, error), TG_ARGUMENT_ERROR,
                TG_ARGUMENT_ERROR_INVALID, "stage 'ok': a binding name must be");
  ASSERT_FAILS (tg_producer_set_stage_condition (p, s, "", error), TG_ARGUMENT_ERROR,
                TG_ARGUMENT_ERROR_INVALID, "stage 'ok': the flag's binding name");
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (tg_producer_bind (p, "", NULL, 0, &bind_error));
  g_test_assert_expected_messages ();
  g_assert_no_error (bind_error);
  g_assert_cmpuint (tg_producer_get_n_stages (p), ==, 1);
}

/* A refused stage keeps the caller's data: its destroy notify is not
 * called, now or when the producer is freed. */
static void
test_refused_stage_keeps_data (void)
{
  TgProducer *p = tg_producer_new ("misuse", 0);

  destroyed = 0;
  g_assert_cmpuint (tg_producer_add_device_stage (p, "one", TG_STAGE_NONE, noop_stage,
                                                  NULL, count_destroy, NULL),
                    ==, 0);
  ASSERT_REFUSED (tg_producer_add_device_stage (p, "one", TG_STAGE_NONE, noop_stage,
                                                NULL, count_destroy, error),
                  TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_DUPLICATE,
                  "stage 'one': an earlier stage has this name");
  g_assert_cmpint (destroyed, ==, 0);
  tg_producer_unref (p);
  g_assert_cmpint (destroyed, ==, 1); /* the stage that was added */
}

/* A call given an error that is set already is a programming error (GLib's
 * rule), as the seed calls said: a critical, nothing done, the error as it
 * was.  Builders took it until 0.5.  (tg_launch_*() and tg_host_ops_*()
 * check the same, within a stage: GPU tests.) */
#define ASSERT_ERROR_SET_REFUSED(call, refused)                                        \
  G_STMT_START                                                                         \
  {                                                                                    \
    g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,                           \
                           "*assertion*error == NULL || *error == NULL*failed*");      \
    g_assert_true ((call) == (refused));                                               \
    g_test_assert_expected_messages ();                                                \
    g_assert_error (set, G_FILE_ERROR, G_FILE_ERROR_NOENT);                            \
    g_assert_cmpstr (set->message, ==, "first");                                       \
  }                                                                                    \
  G_STMT_END

static void
test_error_already_set (void)
{
  const TgDeviceFunc cases[] = { noop_stage };
  const TgSwitchSpec sw = { .index_binding = "i", .n_cases = 1, .cases = cases };
  const TgLoopSpec loop
      = { .flag_binding = "go", .status_binding = "st", .max_iters = 2 };
  g_autoptr (TgProducer) p = tg_producer_new ("misuse", 0);
  g_autoptr (GError) set
      = g_error_new_literal (G_FILE_ERROR, G_FILE_ERROR_NOENT, "first");
  cudaGraph_t graph = (cudaGraph_t)&set; /* never used: refused first */
  TgPolicy policy;
  guint s;

  destroyed = 0;
  ASSERT_ERROR_SET_REFUSED (tg_producer_add_device_stage (p, "d", TG_STAGE_NONE,
                                                          noop_stage, NULL,
                                                          count_destroy, &set),
                            G_MAXUINT);
  ASSERT_ERROR_SET_REFUSED (tg_producer_add_host_stage (p, "h", TG_STAGE_NONE,
                                                        noop_host_stage, NULL, NULL,
                                                        &set),
                            G_MAXUINT);
  ASSERT_ERROR_SET_REFUSED (tg_producer_add_loop_stage (p, "l", TG_STAGE_NONE, &loop,
                                                        noop_stage, NULL, NULL, &set),
                            G_MAXUINT);
  ASSERT_ERROR_SET_REFUSED (
      tg_producer_add_switch_stage (p, "s", TG_STAGE_NONE, &sw, NULL, NULL, &set),
      G_MAXUINT);
  g_assert_cmpuint (tg_producer_get_n_stages (p), ==, 0);
  g_assert_cmpint (destroyed, ==, 0);
  s = tg_producer_add_device_stage (p, "ok", TG_STAGE_NONE, noop_stage, NULL, NULL,
                                    NULL);
  ASSERT_ERROR_SET_REFUSED (tg_producer_declare_binding (p, s, "b", 4, &set), FALSE);
  ASSERT_ERROR_SET_REFUSED (tg_producer_set_stage_condition (p, s, "go", &set), FALSE);
  ASSERT_ERROR_SET_REFUSED (tg_producer_set_stage_else (p, s, noop_stage, &set), FALSE);
  ASSERT_ERROR_SET_REFUSED (tg_producer_bind (p, "b", NULL, 0, &set), FALSE);
  ASSERT_ERROR_SET_REFUSED (tg_producer_set_stream (p, TG_STREAM_AUTO, &set), FALSE);
  ASSERT_ERROR_SET_REFUSED (tg_producer_resolve (p, TG_STREAM_AUTO, TG_POLICY_AUTO,
                                                 tg_unconditional (), &policy, NULL,
                                                 &set),
                            FALSE);
  ASSERT_ERROR_SET_REFUSED (
      tg_producer_run (p, TG_STREAM_AUTO, TG_POLICY_AUTO, tg_unconditional (), &set),
      FALSE);
  ASSERT_ERROR_SET_REFUSED (tg_device_check (0, &set), FALSE);
  ASSERT_ERROR_SET_REFUSED (
      tg_capture_scope_begin (NULL, cudaStreamCaptureModeGlobal, &set) == NULL, TRUE);
  ASSERT_ERROR_SET_REFUSED (
      tg_capture_scope_begin_body (NULL, cudaStreamCaptureModeGlobal, &set) == NULL,
      TRUE);
  ASSERT_ERROR_SET_REFUSED (tg_retain (graph, p, &set), FALSE);
  ASSERT_ERROR_SET_REFUSED (tg_retain_full (graph, p, count_destroy, &set), FALSE);
  ASSERT_ERROR_SET_REFUSED (tg_retain_capture (NULL, p, &set), FALSE);
  ASSERT_ERROR_SET_REFUSED (tg_retain_capture_full (NULL, p, count_destroy, &set),
                            FALSE);
  ASSERT_ERROR_SET_REFUSED (tg_retained_new (NULL, &set) == NULL, TRUE);
  ASSERT_ERROR_SET_REFUSED (
      tg_retained_release ((TgRetained *)graph, cudaStreamPerThread, &set), FALSE);
  ASSERT_ERROR_SET_REFUSED (tg_set_checks (TRUE, &set), FALSE);
  /* Nothing was taken, nothing run, nothing set up. */
  g_assert_cmpint (destroyed, ==, 0);
  g_assert_cmpuint (tg_producer_get_n_stages (p), ==, 1);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  g_test_add_func ("/misuse/loop/flag-is-status-or-iters-out-of-range", test_loop_spec);
  g_test_add_func ("/misuse/stage/unknown-flag", test_stage_unknown_flag);
  g_test_add_func ("/misuse/stage/missing-function", test_stage_missing_function);
  g_test_add_func ("/misuse/stage/no-such-stage-or-no-else", test_stage_setup_refusals);
  g_test_add_func ("/misuse/stage/after-run-sealed", test_stage_after_run);
  g_test_add_func ("/misuse/stage/from-own-stage-busy", test_stage_from_own_stage);
  g_test_add_func ("/misuse/stage/no-error-is-critical",
                   test_refusal_without_error_is_critical);
  g_test_add_func ("/misuse/policy/unknown", test_unknown_policy);
  g_test_add_func ("/misuse/retain/null-graph-auto-stream", test_retain_values);
  g_test_add_func ("/misuse/stream/is-capturing-auto", test_is_capturing_auto);
  g_test_add_func ("/misuse/release-wait/negative", test_release_wait_negative);
  g_test_add_func ("/misuse/names/empty", test_empty_names);
  g_test_add_func ("/misuse/stage/refused-keeps-data", test_refused_stage_keeps_data);
  g_test_add_func ("/misuse/error/already-set", test_error_already_set);
  return g_test_run ();
}
