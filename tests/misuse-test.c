/* misuse-test.c: argument misuse, refused with a critical, nothing changed.
 * Misuse from several threads at once is in threads-test. */
#include "config.h"
#include "tg-test.h"

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

static guint
add_loop (TgProducer *p, const char *name, TgStageFlags flags, const char *flag,
          const char *status, guint max_iters)
{
  TgLoopSpec loop
      = { .flag_binding = flag, .status_binding = status, .max_iters = max_iters };

  return tg_producer_add_loop_stage (p, name, flags, &loop, noop_stage, NULL, NULL);
}

/* The status write would overwrite the flag; the device counts iterations
 * in a gint32. */
static void
test_loop_spec (void)
{
  TgProducer *p = tg_producer_new ("misuse", 0);

  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "*assertion*flag_binding*status_binding*failed*");
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "*assertion*max_iters*failed*");
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "*assertion*max_iters*failed*");
  g_assert_cmpuint (add_loop (p, "same", TG_STAGE_CAPTURE_SAFE, "go", "go", 8), ==,
                    G_MAXUINT);
  g_assert_cmpuint (add_loop (p, "over", TG_STAGE_CAPTURE_SAFE, "go", "status",
                              (guint)G_MAXINT32 + 1),
                    ==, G_MAXUINT);
  g_assert_cmpuint (add_loop (p, "none", TG_STAGE_CAPTURE_SAFE, "go", "status", 0), ==,
                    G_MAXUINT);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (tg_producer_get_n_stages (p), ==, 0);
  /* The bound itself is fine. */
  g_assert_cmpuint (
      add_loop (p, "most", TG_STAGE_CAPTURE_SAFE, "go", "status", G_MAXINT32), ==, 0);
  tg_producer_unref (p);
}

static void
test_stage_unknown_flag (void)
{
  const TgStageFlags unknown = TG_STAGE_CAPTURE_SAFE | (TgStageFlags)(1 << 5);
  const TgDeviceFunc cases[] = { noop_stage };
  const TgSwitchSpec sw = { .index_binding = "index", .n_cases = 1, .cases = cases };
  TgProducer *p = tg_producer_new ("misuse", 0);
  guint index[4];

  for (guint i = 0; i < G_N_ELEMENTS (index); i++)
    g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                           "*assertion*flags*failed*");
  index[0]
      = tg_producer_add_device_stage (p, "device", unknown, noop_stage, NULL, NULL);
  index[1]
      = tg_producer_add_host_stage (p, "host", unknown, noop_host_stage, NULL, NULL);
  index[2] = add_loop (p, "loop", unknown, "go", "status", 8);
  index[3] = tg_producer_add_switch_stage (p, "switch", unknown, &sw, NULL, NULL);
  g_test_assert_expected_messages ();
  for (guint i = 0; i < G_N_ELEMENTS (index); i++)
    g_assert_cmpuint (index[i], ==, G_MAXUINT);
  g_assert_cmpuint (tg_producer_get_n_stages (p), ==, 0);
  tg_producer_unref (p);
}

static void
test_unknown_policy (void)
{
  TgProducer *p = tg_producer_new ("misuse", 0);
  TgPolicy policy = TG_POLICY_AUTO;
  GError *error = NULL;

  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "*assertion*requested*failed*");
  g_assert_false (tg_producer_resolve (p, TG_STREAM_AUTO, (TgPolicy)99,
                                       tg_unconditional (), &policy, NULL, &error));
  g_test_assert_expected_messages ();
  g_assert_no_error (error);
  g_assert_cmpint (policy, ==, TG_POLICY_AUTO);
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL,
                         "*assertion*requested*failed*");
  g_assert_false (
      tg_producer_run (p, TG_STREAM_AUTO, (TgPolicy)99, tg_unconditional (), &error));
  g_test_assert_expected_messages ();
  g_assert_no_error (error);
  /* Refused before the producer was entered: its setup is still open. */
  g_assert_cmpuint (
      tg_producer_add_device_stage (p, "after", TG_STAGE_NONE, noop_stage, NULL, NULL),
      ==, 0);
  tg_producer_unref (p);
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
  g_autoptr (TgProducer) p = tg_producer_new ("names", 0);
  g_autoptr (GError) error = NULL;
  guint s;

  for (guint i = 0; i < 7; i++)
    g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_cmpuint (
      tg_producer_add_device_stage (p, "", TG_STAGE_NONE, noop_stage, NULL, NULL), ==,
      G_MAXUINT);
  g_assert_cmpuint (add_loop (p, "loop", TG_STAGE_NONE, "", "status", 4), ==,
                    G_MAXUINT);
  g_assert_cmpuint (add_loop (p, "loop", TG_STAGE_NONE, "go", "", 4), ==, G_MAXUINT);
  g_assert_cmpuint (
      tg_producer_add_switch_stage (p, "sw", TG_STAGE_NONE, &sw, NULL, NULL), ==,
      G_MAXUINT);
  s = tg_producer_add_device_stage (p, "ok", TG_STAGE_NONE, noop_stage, NULL, NULL);
  g_assert_cmpuint (s, ==, 0);
  tg_producer_declare_binding (p, s, "", 4);
  tg_producer_set_stage_condition (p, s, "");
  g_assert_false (tg_producer_bind (p, "", NULL, 0, &error));
  g_test_assert_expected_messages ();
  g_assert_no_error (error);
  g_assert_cmpuint (tg_producer_get_n_stages (p), ==, 1);
}

static gint destroyed;

static void
count_destroy (gpointer data)
{
  destroyed++;
}

/* A refused stage keeps the caller's data: its destroy notify is not
 * called, now or when the producer is freed. */
static void
test_refused_stage_keeps_data (void)
{
  TgProducer *p = tg_producer_new ("refused", 0);

  destroyed = 0;
  g_assert_cmpuint (tg_producer_add_device_stage (p, "one", TG_STAGE_NONE, noop_stage,
                                                  NULL, count_destroy),
                    ==, 0);
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL, "*already has a stage*");
  g_assert_cmpuint (tg_producer_add_device_stage (p, "one", TG_STAGE_NONE, noop_stage,
                                                  NULL, count_destroy),
                    ==, G_MAXUINT);
  g_test_assert_expected_messages ();
  g_assert_cmpint (destroyed, ==, 0);
  tg_producer_unref (p);
  g_assert_cmpint (destroyed, ==, 1); /* the stage that was added */
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  g_test_add_func ("/misuse/loop/flag-is-status-or-iters-out-of-range", test_loop_spec);
  g_test_add_func ("/misuse/stage/unknown-flag", test_stage_unknown_flag);
  g_test_add_func ("/misuse/policy/unknown", test_unknown_policy);
  g_test_add_func ("/misuse/release-wait/negative", test_release_wait_negative);
  g_test_add_func ("/misuse/names/empty", test_empty_names);
  g_test_add_func ("/misuse/stage/refused-keeps-data", test_refused_stage_keeps_data);
  return g_test_run ();
}
