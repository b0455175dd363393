/* SPDX-License-Identifier: Apache-2.0 */
/* smoke-test.c: the library launches a kernel and it computes the right values. */
#include "config.h"
#include "tg-test.h"

static void
test_device_check (void)
{
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  g_assert_true (tg_device_check (0, &error));
  g_assert_no_error (error);
}

static void
test_device_out_of_range (void)
{
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  g_assert_false (tg_device_check (4096, &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
}

static void
test_no_device (void)
{
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_NO_GPU ();
  g_assert_false (tg_device_check (0, &error));
  tg_test_assert_cuda_error (error);
}

static void
test_error_quarks (void)
{
  g_assert_cmpstr (g_quark_to_string (TG_CAPTURE_ERROR), ==, "tg-capture-error-quark");
  g_assert_cmpstr (g_quark_to_string (TG_CUDA_ERROR), ==, "tg-cuda-error-quark");
  g_assert_cmpstr (g_quark_to_string (TG_ARGUMENT_ERROR), ==,
                   "tg-argument-error-quark");
  g_assert_cmpstr (g_quark_to_string (TG_STATE_ERROR), ==, "tg-state-error-quark");
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  g_test_add_func ("/smoke/error-quarks", test_error_quarks);
  g_test_add_func ("/smoke/no-device-is-a-cuda-error", test_no_device);
  g_test_add_func ("/smoke/device-check", test_device_check);
  g_test_add_func ("/smoke/device-out-of-range", test_device_out_of_range);
  return g_test_run ();
}
