/* SPDX-License-Identifier: Apache-2.0 */
/* errors-test-fields.c: errors carry the producer, stage and binding they
 * concern as fields: set by C and by a stage's error, kept by copies, in
 * TrackGen's domains and the caller's registered ones, never in a domain
 * GLib's extended errors registered first. */
#include "config.h"
#include "errors-test.h"

/* A caller's domain registered with fields, as the Python package's is. */
static GQuark
own_error_quark (void)
{
  return tg_error_domain_register ("tgt-own-error-quark");
}

static gboolean
own_error_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  g_set_error_literal (error, data == NULL ? own_error_quark () : G_FILE_ERROR, 7,
                       "no track today");
  return FALSE;
}

/* The fields set by C: a builder's refusal names its producer, stage and
 * binding; g_error_copy() keeps them; a domain without fields has none. */
static void
test_fields_set_by_c (void)
{
  g_autoptr (TgProducer) p = tg_producer_new ("fields", 0);
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) copy = NULL;
  g_autoptr (GError) foreign = g_error_new_literal (G_FILE_ERROR, 1, "producer 'x'");
  guint s;

  s = tg_producer_add_device_stage (p, "first", TG_STAGE_NONE,
                                    errors_test_silent_failure, NULL, NULL, NULL);
  g_assert_false (tg_producer_declare_binding (p, s, "buf", 0, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_EMPTY);
  copy = g_error_copy (error);
  g_assert_cmpstr (tg_error_get_producer (copy), ==, "fields");
  g_assert_cmpstr (tg_error_get_stage (copy), ==, "first");
  g_assert_cmpstr (tg_error_get_binding (copy), ==, "buf");
  g_clear_error (&error);
  g_assert_false (tg_producer_set_stage_condition (p, 9, "go", &error));
  g_assert_cmpstr (tg_error_get_producer (error), ==, "fields");
  g_assert_null (tg_error_get_stage (error));
  g_assert_null (tg_error_get_binding (error));
  /* Set by whoever makes the error (a binding's own checks), and cleared;
   * the message is never parsed. */
  tg_error_set_fields (error, NULL, "s", "b");
  g_assert_null (tg_error_get_producer (error));
  g_assert_cmpstr (tg_error_get_stage (error), ==, "s");
  g_assert_cmpstr (tg_error_get_binding (error), ==, "b");
  tg_error_set_fields (foreign, "x", NULL, NULL);
  g_assert_null (tg_error_get_producer (foreign));
  /* Registering is idempotent; the quark name is kept. */
  g_assert_cmpuint (own_error_quark (), ==, own_error_quark ());
  g_assert_cmpstr (g_quark_to_string (own_error_quark ()), ==, "tgt-own-error-quark");
  g_assert_cmpstr (g_quark_to_string (TG_STATE_ERROR), ==, "tg-state-error-quark");
}

/* Fields set from another field's own string: every value is copied
 * before any old one is freed (producer and stage swapped read freed memory
 * until 0.5). */
static void
test_fields_swapped (void)
{
  g_autoptr (GError) error
      = g_error_new_literal (TG_STATE_ERROR, TG_STATE_ERROR_FAILED, "swap");

  tg_error_set_fields (error, "the-producer", "the-stage", "the-binding");
  tg_error_set_fields (error, tg_error_get_stage (error), tg_error_get_producer (error),
                       tg_error_get_binding (error));
  g_assert_cmpstr (tg_error_get_producer (error), ==, "the-stage");
  g_assert_cmpstr (tg_error_get_stage (error), ==, "the-producer");
  g_assert_cmpstr (tg_error_get_binding (error), ==, "the-binding");
  tg_error_set_fields (error, tg_error_get_binding (error), NULL,
                       tg_error_get_binding (error));
  g_assert_cmpstr (tg_error_get_producer (error), ==, "the-binding");
  g_assert_null (tg_error_get_stage (error));
  g_assert_cmpstr (tg_error_get_binding (error), ==, "the-binding");
}

/* A domain of GLib's extended errors, with private data smaller than
 * TrackGen's fields. */
static void
glib_fields_init (GError *error)
{
}

static void
glib_fields_copy (const GError *src, GError *dest)
{
}

static void
glib_fields_clear (GError *error)
{
}

/* A name GLib's extended errors registered first is not TrackGen's: GLib
 * says so in a critical, and its errors are never read nor written as
 * having TrackGen's fields (written outside the error's memory until 0.5). */
static void
test_domain_registered_by_glib (void)
{
  GQuark glib = g_error_domain_register_static ("tgt-glib-error-quark", sizeof (gint),
                                                glib_fields_init, glib_fields_copy,
                                                glib_fields_clear);
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) copy = NULL;
  GQuark q;

  g_test_expect_message ("GLib", G_LOG_LEVEL_CRITICAL, "*tgt-glib-error-quark*");
  q = tg_error_domain_register ("tgt-glib-error-quark");
  g_test_assert_expected_messages ();
  g_assert_cmpuint (q, ==, glib);
  error = g_error_new_literal (q, 3, "theirs");
  tg_error_set_fields (error, "p", "s", "b");
  g_assert_null (tg_error_get_producer (error));
  g_assert_null (tg_error_get_stage (error));
  g_assert_null (tg_error_get_binding (error));
  copy = g_error_copy (error);
  g_assert_error (copy, glib, 3);
  g_assert_null (tg_error_get_producer (copy));
}

/* 12 domains of the caller's get fields, registered in a process where no
 * domain of TrackGen's is yet; the 13th is refused with a critical and its
 * errors carry none; TrackGen's four have theirs (the 13th was accepted
 * and took one of their places until 0.5). */
static void
test_domain_limit (void)
{
  GQuark (*const own[]) (void) = { tg_capture_error_quark, tg_cuda_error_quark,
                                   tg_argument_error_quark, tg_state_error_quark };
  GQuark extra;

  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
      g_test_trap_assert_passed ();
      return;
    }
  for (guint i = 0; i < 12; i++)
    {
      g_autofree char *name = g_strdup_printf ("tgt-domain-%u-error-quark", i);
      g_autoptr (GError) error = g_error_new_literal (
          tg_error_domain_register (g_intern_string (name)), 1, "mine");

      tg_error_set_fields (error, "p", NULL, NULL);
      g_assert_cmpstr (tg_error_get_producer (error), ==, "p");
    }
  g_test_expect_message ("TrackGen", G_LOG_LEVEL_CRITICAL, "*already 12 domains*");
  extra = tg_error_domain_register ("tgt-domain-12-error-quark");
  g_test_assert_expected_messages ();
  g_assert_cmpuint (extra, ==, g_quark_try_string ("tgt-domain-12-error-quark"));
  for (guint i = 0; i <= G_N_ELEMENTS (own); i++)
    {
      g_autoptr (GError) error
          = g_error_new_literal (i < G_N_ELEMENTS (own) ? own[i]() : extra, 1, "whose");

      tg_error_set_fields (error, "p", NULL, NULL);
      if (i < G_N_ELEMENTS (own))
        g_assert_cmpstr (tg_error_get_producer (error), ==, "p");
      else
        g_assert_null (tg_error_get_producer (error));
    }
}

/* A call refused before its stages ran names its producer, in its fields
 * and its message: here RECORD outside a capture (a policy refusal), or,
 * without a GPU, the CUDA error of the call's first driver query (neither
 * named it until 0.5). */
static void
test_call_names_producer (void)
{
  g_autoptr (TgProducer) p = tg_producer_new ("named", 0);
  TgPolicy policy;

  tg_producer_add_device_stage (p, "s", TG_STAGE_CAPTURE_SAFE,
                                errors_test_silent_failure, NULL, NULL, NULL);
  for (guint resolve = 0; resolve <= 1; resolve++)
    {
      g_autoptr (GError) error = NULL;

      if (resolve)
        g_assert_false (tg_producer_resolve (p, TG_STREAM_AUTO, TG_POLICY_RECORD,
                                             tg_unconditional (), &policy, NULL,
                                             &error));
      else
        g_assert_false (tg_producer_run (p, TG_STREAM_AUTO, TG_POLICY_RECORD,
                                         tg_unconditional (), &error));
      g_assert_nonnull (error);
      g_test_message ("%s", error->message);
      if (tg_test_have_gpu ())
        g_assert_error (error, TG_STATE_ERROR, TG_STATE_ERROR_POLICY);
      else
        g_assert_true (error->domain == TG_CUDA_ERROR);
      g_assert_true (g_str_has_prefix (error->message, "producer 'named': "));
      g_assert_cmpstr (tg_error_get_producer (error), ==, "named");
      g_assert_null (tg_error_get_stage (error));
    }
}

/* A stage's error gets the producer and the stage as fields when its
 * domain has them, and keeps its domain and code either way. */
static void
test_stage_error_fields (Fixture *fx, gconstpointer data)
{
  g_autoptr (TgProducer) p = tg_producer_new ("own", 0);
  g_autoptr (TgProducer) io = tg_producer_new ("io", 0);
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  tg_producer_add_device_stage (p, "boom", TG_STAGE_NONE, own_error_stage, NULL, NULL,
                                NULL);
  tg_producer_add_device_stage (io, "boom", TG_STAGE_NONE, own_error_stage, io, NULL,
                                NULL);
  g_assert_false (
      tg_producer_run (p, fx->stream, TG_POLICY_EAGER, tg_unconditional (), &error));
  g_assert_error (error, own_error_quark (), 7);
  g_assert_cmpstr (tg_error_get_producer (error), ==, "own");
  g_assert_cmpstr (tg_error_get_stage (error), ==, "boom");
  g_clear_error (&error);
  g_assert_false (
      tg_producer_run (io, fx->stream, TG_POLICY_EAGER, tg_unconditional (), &error));
  g_assert_error (error, G_FILE_ERROR, 7);
  g_assert_cmpstr (error->message, ==, "producer 'io', stage 'boom': no track today");
  g_assert_null (tg_error_get_stage (error));
}

void
errors_test_add_fields (void)
{
  g_test_add_func ("/errors/fields/set-by-c", test_fields_set_by_c);
  g_test_add_func ("/errors/fields/swapped", test_fields_swapped);
  g_test_add_func ("/errors/fields/domain-registered-by-glib",
                   test_domain_registered_by_glib);
  g_test_add_func ("/errors/fields/domain-limit", test_domain_limit);
  g_test_add_func ("/errors/fields/call-names-producer", test_call_names_producer);
  TG_TEST_ADD_GPU ("/errors/fields/stage-error", test_stage_error_fields);
}
