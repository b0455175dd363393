/* SPDX-License-Identifier: Apache-2.0 */
/* errors-test.c: errors leave nothing behind, and take nothing that is not
 * theirs.  A caller's pending CUDA error is neither taken nor reported by a
 * call that succeeds, under every policy, nor by the lookup of the driver's
 * entry points; a call refused for a device out of range leaves the
 * thread's current device as it was.  Hostile values (host memory as a
 * flag, a loop's cap out of range or its words NULL, a switch of no case,
 * a loop whose status overlaps its flag, a stage that fails without an
 * error) are refused with an error that says so, before anything ran.  The
 * fields errors carry are errors-test-fields.c's. */
#include "config.h"
#include "errors-test.h"
#include "../lib/exec/driver-private.h"

#include <string.h>

static void
test_pending_error_kept (Fixture *fx, gconstpointer data)
{
  const TgPolicy policies[] = { TG_POLICY_EAGER, TG_POLICY_REPLAY, TG_POLICY_RECORD };
  TgTestCounted c;
  TgProducer *p;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  tg_test_counted_init (&c, 9);
  p = tg_test_counted_new (&c, TG_STAGE_CAPTURE_SAFE);
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      cudaGraph_t graph = NULL;

      if (policies[i] == TG_POLICY_RECORD)
        TG_TEST_CUDA (cudaStreamBeginCapture (fx->stream, cudaStreamCaptureModeGlobal));
      /* The caller's own failed call leaves its error pending. */
      g_assert_cmpint (cudaSetDevice (1 << 20), !=, cudaSuccess);
      g_assert_true (
          tg_producer_run (p, fx->stream, policies[i], tg_unconditional (), &error));
      g_assert_no_error (error);
      g_assert_cmpint (cudaGetLastError (), ==, cudaErrorInvalidDevice);
      if (policies[i] == TG_POLICY_RECORD)
        {
          TG_TEST_CUDA (cudaStreamEndCapture (fx->stream, &graph));
          TG_TEST_CUDA (cudaGraphDestroy (graph));
        }
    }
  TG_TEST_CUDA (cudaStreamSynchronize (fx->stream));
  tg_test_counted_expect (&c, 9);
  tg_producer_unref (p);
  tg_test_counted_clear (&c);
}

static void
test_device_errors (Fixture *f, gconstpointer data)
{
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  int before = -1, after = -1;

  TG_TEST_REQUIRE_GPU ();
  TG_TEST_CUDA (cudaGetDevice (&before));
  p = tg_producer_new ("elsewhere", 64);
  tg_producer_add_device_stage (p, "count", TG_STAGE_CAPTURE_SAFE, tg_test_count_stage,
                                NULL, NULL, NULL);
  g_assert_false (
      tg_producer_run (p, TG_STREAM_AUTO, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
  TG_TEST_CUDA (cudaGetDevice (&after));
  g_assert_cmpint (before, ==, after);
}

/* A missing entry point leaves the caller's pending error alone. */
static void
test_entry_point_keeps_pending_error (Fixture *fx, gconstpointer data)
{
  TG_TEST_REQUIRE_GPU ();
  g_assert_cmpint (cudaSetDevice (1 << 20), !=, cudaSuccess);
  g_assert_null (tg__driver_entry_point ("cuNoSuchEntryPointOfTrackGen"));
  g_assert_cmpint (cudaGetLastError (), ==, cudaErrorInvalidDevice);
}

/* The flags, index and status a stage passes in host memory. */
typedef enum
{
  HOSTILE_IF,
  HOSTILE_IF_ELSE,
  HOSTILE_SWITCH,
  HOSTILE_WHILE_FLAG,
  HOSTILE_WHILE_STATUS,
  HOSTILE_WHILE_OVERLAP,
  HOSTILE_N
} Hostile;

static gint32 host_flag = 1;
static TgLoopStatus host_status;

static gboolean
hostile_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  const TgDeviceFunc counter[] = { tg_test_count_bound_stage };
  gint32 *dev = tg_launch_get_binding (launch, "words");

  switch (GPOINTER_TO_INT (data))
    {
    case HOSTILE_IF:
      return tg_launch_if (launch, tg_conditional (&host_flag),
                           tg_test_count_bound_stage, NULL, error);
    case HOSTILE_IF_ELSE:
      return tg_launch_if_else (launch, tg_conditional (&host_flag),
                                tg_test_count_bound_stage, tg_test_count_bound_stage,
                                NULL, error);
    case HOSTILE_SWITCH:
      return tg_launch_switch (launch, &host_flag, 1, counter, NULL, error);
    case HOSTILE_WHILE_FLAG:
      return tg_launch_while (launch, &host_flag, 4, (TgLoopStatus *)(dev + 2),
                              tg_test_count_bound_stage, NULL, error);
    case HOSTILE_WHILE_STATUS:
      return tg_launch_while (launch, dev, 4, &host_status, tg_test_count_bound_stage,
                              NULL, error);
    case HOSTILE_WHILE_OVERLAP:
    default:
      /* The status's second word is the flag. */
      return tg_launch_while (launch, dev + 1, 4, (TgLoopStatus *)dev,
                              tg_test_count_bound_stage, NULL, error);
    }
}

/* A producer @name of one capture-safe stage @stage (@func, @data) that
 * declares and binds a guint32 "counter" and four gint32 "words". */
static TgProducer *
words_producer (const char *name, const char *stage, TgDeviceFunc func, gpointer data,
                guint32 *counter, gint32 *words)
{
  TgProducer *p = tg_producer_new (name, 0);
  guint s = tg_producer_add_device_stage (p, stage, TG_STAGE_CAPTURE_SAFE, func, data,
                                          NULL, NULL);

  tg_producer_declare_binding (p, s, "counter", sizeof (guint32), NULL);
  tg_producer_declare_binding (p, s, "words", 4 * sizeof (gint32), NULL);
  g_assert_true (tg_producer_bind (p, "counter", counter, sizeof (guint32), NULL));
  g_assert_true (tg_producer_bind (p, "words", words, 4 * sizeof (gint32), NULL));
  return p;
}

static void
test_host_memory_flags (Fixture *fx, gconstpointer data)
{
  const TgPolicy policies[] = { TG_POLICY_EAGER, TG_POLICY_REPLAY };
  guint32 *counter;
  gint32 *words;
  TgLiveObjects before;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (sizeof (guint32));
  words = tg_test_device_alloc (4 * sizeof (gint32));
  tg_test_live_snapshot (&before);
  for (gint h = 0; h < HOSTILE_N; h++)
    for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
      {
        g_autoptr (TgProducer) p = words_producer ("hostile", "hostile", hostile_stage,
                                                   GINT_TO_POINTER (h), counter, words);
        g_autoptr (GError) error = NULL;

        g_assert_false (
            tg_producer_run (p, fx->stream, policies[i], tg_unconditional (), &error));
        g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
        g_test_message ("%s: %s", tg_policy_to_string (policies[i]), error->message);
        g_assert_nonnull (strstr (error->message, "stage 'hostile'"));
      }
  TG_TEST_CUDA (cudaStreamSynchronize (fx->stream));
  g_assert_cmpuint (tg_test_read_u32 (counter), ==, 0);
  tg_test_device_free (words);
  tg_test_device_free (counter);
  tg_test_assert_no_leaks (&before);
}

/* The arguments of a loop or a switch a stage computes: each refused with a
 * GError naming the argument, the producer and the stage, before anything
 * ran. */
typedef enum
{
  CALL_WHILE,
  CALL_WHILE_BY,
  CALL_SWITCH,
  CALL_SWITCH_BY,
} LaunchCall;

static const struct
{
  const char *arg;
  gint code;
  LaunchCall call;
  guint max_iters;
  gboolean no_flag, no_status;
} loop_cases[] = {
  { "max_iters", TG_ARGUMENT_ERROR_OUT_OF_RANGE, CALL_WHILE, 0, FALSE, FALSE },
  { "max_iters", TG_ARGUMENT_ERROR_OUT_OF_RANGE, CALL_WHILE, (guint)G_MAXINT32 + 1,
    FALSE, FALSE },
  { "max_iters", TG_ARGUMENT_ERROR_OUT_OF_RANGE, CALL_WHILE_BY, 0, FALSE, FALSE },
  { "max_iters", TG_ARGUMENT_ERROR_OUT_OF_RANGE, CALL_WHILE_BY, G_MAXUINT, FALSE,
    FALSE },
  { "flag", TG_ARGUMENT_ERROR_INVALID, CALL_WHILE, 4, TRUE, FALSE },
  { "status", TG_ARGUMENT_ERROR_INVALID, CALL_WHILE, 4, FALSE, TRUE },
  { "status", TG_ARGUMENT_ERROR_INVALID, CALL_WHILE_BY, 4, TRUE, TRUE },
  { "n_cases", TG_ARGUMENT_ERROR_EMPTY, CALL_SWITCH, 0, FALSE, FALSE },
  { "n_cases", TG_ARGUMENT_ERROR_EMPTY, CALL_SWITCH_BY, 0, FALSE, FALSE },
  { NULL, 0, CALL_WHILE, 4, FALSE, FALSE }, /* good: counts to the cap */
};

static gboolean
loop_args_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  const guint i = GPOINTER_TO_UINT (data);
  const TgDeviceFunc no_case[] = { NULL };
  gint32 *dev = tg_launch_get_binding (launch, "words");
  gint32 *flag = loop_cases[i].no_flag ? NULL : dev;
  TgLoopStatus *status = loop_cases[i].no_status ? NULL : (TgLoopStatus *)(dev + 2);

  switch (loop_cases[i].call)
    {
    case CALL_WHILE_BY:
      return tg_launch_while_by (launch, flag, loop_cases[i].max_iters, status,
                                 tg_test_count_bound_stage, NULL, error);
    case CALL_SWITCH:
      return tg_launch_switch (launch, dev, 0, no_case, NULL, error);
    case CALL_SWITCH_BY:
      return tg_launch_switch_by (launch, tg_test_count_bound_stage, 0, no_case, NULL,
                                  error);
    case CALL_WHILE:
    default:
      return tg_launch_while (launch, flag, loop_cases[i].max_iters, status,
                              tg_test_count_bound_stage, NULL, error);
    }
}

static void
test_loop_arguments (Fixture *fx, gconstpointer data)
{
  const TgPolicy policies[] = { TG_POLICY_EAGER, TG_POLICY_REPLAY };
  guint32 *counter;
  gint32 *words;
  TgLiveObjects before;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (sizeof (guint32));
  words = tg_test_device_alloc (4 * sizeof (gint32));
  tg_test_upload (words, &host_flag, sizeof (gint32));
  tg_test_live_snapshot (&before);
  for (guint c = 0; c < G_N_ELEMENTS (loop_cases); c++)
    for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
      {
        g_autoptr (TgProducer) p = words_producer (
            "loops", "loop", loop_args_stage, GUINT_TO_POINTER (c), counter, words);
        g_autoptr (GError) error = NULL;
        gboolean ok;

        ok = tg_producer_run (p, fx->stream, policies[i], tg_unconditional (), &error);
        if (loop_cases[c].arg == NULL)
          {
            g_assert_no_error (error);
            g_assert_true (ok);
            continue;
          }
        g_assert_false (ok);
        g_assert_error (error, TG_ARGUMENT_ERROR, loop_cases[c].code);
        g_test_message ("%s: %s", tg_policy_to_string (policies[i]), error->message);
        g_assert_nonnull (strstr (error->message, loop_cases[c].arg));
        /* Named once: by the stage's call, as every error of a stage. */
        g_assert_true (
            g_str_has_prefix (error->message, "producer 'loops', stage 'loop': "));
        g_assert_null (strstr (error->message + 1, "producer 'loops'"));
        g_assert_cmpstr (tg_error_get_producer (error), ==, "loops");
        g_assert_cmpstr (tg_error_get_stage (error), ==, "loop");
        TG_TEST_CUDA (cudaStreamSynchronize (fx->stream));
        g_assert_cmpuint (tg_test_read_u32 (counter), ==, 0); /* nothing ran */
      }
  /* The good case, once per policy, after every refusal: 4 iterations each. */
  TG_TEST_CUDA (cudaStreamSynchronize (fx->stream));
  g_assert_cmpuint (tg_test_read_u32 (counter), ==, 8);
  tg_test_device_free (words);
  tg_test_device_free (counter);
  tg_test_assert_no_leaks (&before);
}

/* A call's condition in host memory. */
static void
test_host_memory_condition (Fixture *fx, gconstpointer data)
{
  guint32 *counter;
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (sizeof (guint32));
  p = tg_test_counter_producer (counter, TG_STAGE_CAPTURE_SAFE,
                                tg_test_count_bound_stage);
  for (TgPolicy policy = TG_POLICY_AUTO; policy <= TG_POLICY_REPLAY; policy++)
    {
      g_assert_false (
          tg_producer_run (p, fx->stream, policy, tg_conditional (&host_flag), &error));
      g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, "not device memory"));
      g_clear_error (&error);
    }
  g_assert_cmpuint (tg_test_read_u32 (counter), ==, 0);
  tg_test_device_free (counter);
}

/* A loop stage whose status binding overlaps its flag binding. */
static void
test_loop_bindings_overlap (Fixture *fx, gconstpointer data)
{
  const TgLoopSpec loop
      = { .flag_binding = "go", .status_binding = "status", .max_iters = 4 };
  guint32 *counter;
  gint32 *words;
  g_autoptr (TgProducer) p = tg_producer_new ("overlap", 0);
  g_autoptr (GError) error = NULL;
  guint s;

  TG_TEST_REQUIRE_GPU ();
  counter = tg_test_device_alloc (sizeof (guint32));
  words = tg_test_device_alloc (4 * sizeof (gint32));
  s = tg_producer_add_loop_stage (p, "relax", TG_STAGE_CAPTURE_SAFE, &loop,
                                  tg_test_count_bound_stage, NULL, NULL, NULL);
  tg_producer_declare_binding (p, s, "counter", sizeof (guint32), NULL);
  g_assert_true (tg_producer_bind (p, "counter", counter, sizeof (guint32), NULL));
  g_assert_true (tg_producer_bind (p, "go", words + 1, sizeof (gint32), NULL));
  g_assert_true (tg_producer_bind (p, "status", words, sizeof (TgLoopStatus), NULL));
  g_assert_false (
      tg_producer_run (p, fx->stream, TG_POLICY_EAGER, tg_unconditional (), &error));
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_OVERLAP);
  g_assert_cmpstr (tg_error_get_producer (error), ==, "overlap");
  g_assert_cmpstr (tg_error_get_stage (error), ==, "relax");
  g_assert_cmpstr (tg_error_get_binding (error), ==, "go");
  g_clear_error (&error);
  /* Apart, it runs. */
  g_assert_true (tg_producer_bind (p, "go", words + 3, sizeof (gint32), NULL));
  tg_test_upload (words + 3, &host_flag, sizeof (gint32));
  g_assert_true (
      tg_producer_run (p, fx->stream, TG_POLICY_EAGER, tg_unconditional (), &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamSynchronize (fx->stream));
  g_assert_cmpuint (tg_test_read_u32 (counter), ==, 4); /* capped */
  tg_test_device_free (words);
  tg_test_device_free (counter);
}

gboolean
errors_test_silent_failure (const TgLaunch *launch, gpointer data, GError **error)
{
  return FALSE;
}

/* A stage that fails without an error: a critical, and a GError that says
 * so, in the state domain's catch-all. */
static void
test_stage_fails_silently (Fixture *fx, gconstpointer data)
{
  g_autoptr (TgProducer) p = tg_producer_new ("silent", 0);
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  tg_producer_add_device_stage (p, "mute", TG_STAGE_NONE, errors_test_silent_failure,
                                NULL, NULL, NULL);
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "*stage 'mute' failed without setting an error*");
  g_assert_false (
      tg_producer_run (p, fx->stream, TG_POLICY_EAGER, tg_unconditional (), &error));
  g_test_assert_expected_messages ();
  g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED);
  g_assert_cmpstr (tg_error_get_producer (error), ==, "silent");
  g_assert_cmpstr (tg_error_get_stage (error), ==, "mute");
  g_assert_null (tg_error_get_binding (error));
}

/* A CUDA error names its call site from the source tree's root, never the
 * build machine's directories (-fmacro-prefix-map): without a device, the
 * device check's first CUDA call fails on the host. */
static void
test_cuda_error_names_no_build_path (void)
{
  g_autoptr (GError) error = NULL;
  const char *at;

  if (tg_test_have_gpu ())
    {
      g_test_skip ("no CUDA call fails on a working device (faultsweep's "
                   "injected errors name their call sites there)");
      return;
    }
  g_assert_false (tg_device_check (0, &error));
  g_assert_true (error->domain == TG_CUDA_ERROR);
  at = strstr (error->message, " failed at ");
  g_assert_nonnull (at);
  g_assert_true (g_str_has_prefix (at + strlen (" failed at "), "lib/exec/device.c:"));
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  TG_TEST_ADD_GPU ("/errors/cuda/pending-error-kept", test_pending_error_kept);
  TG_TEST_ADD_GPU ("/errors/device/bad-device-restores-current", test_device_errors);
  TG_TEST_ADD_GPU ("/errors/cuda/entry-point-keeps-pending-error",
                   test_entry_point_keeps_pending_error);
  TG_TEST_ADD_GPU ("/errors/argument/host-memory-flags", test_host_memory_flags);
  TG_TEST_ADD_GPU ("/errors/argument/host-memory-condition",
                   test_host_memory_condition);
  TG_TEST_ADD_GPU ("/errors/argument/loop-arguments", test_loop_arguments);
  TG_TEST_ADD_GPU ("/errors/state/loop-bindings-overlap", test_loop_bindings_overlap);
  TG_TEST_ADD_GPU ("/errors/state/stage-fails-silently", test_stage_fails_silently);
  g_test_add_func ("/errors/cuda/no-build-path", test_cuda_error_names_no_build_path);
  errors_test_add_fields ();
  return g_test_run ();
}
