/* SPDX-License-Identifier: Apache-2.0 */
/* headers-test.c: each public header compiles alone, in C and in C++. */
#include "config.h"
#include "tg-test.h"

const char *tg_test_header_exec (void);
const char *tg_test_header_seeds (void);
const char *tg_test_header_interop (void);
const char *tg_test_header_trackgen (void);
uint64_t tg_test_header_kernel (void);
int tg_test_header_cxx (void);

static void
test_standalone (void)
{
  g_assert_cmpstr (tg_test_header_exec (), ==, TG_VERSION_STRING);
  g_assert_cmpstr (tg_test_header_seeds (), ==, TG_VERSION_STRING);
  g_assert_cmpstr (tg_test_header_interop (), ==, TG_VERSION_STRING);
  g_assert_cmpstr (tg_test_header_trackgen (), ==, TG_VERSION_STRING);
  /* tg_effective_seed (0, 0), as seeds-test's known answers have it. */
  g_assert_cmphex (tg_test_header_kernel (), ==,
                   G_GUINT64_CONSTANT (0xE220A8397B1DCDAF));
}

static void
test_cxx (void)
{
  g_assert_cmpint (tg_test_header_cxx (), ==, 3 + TG_LOOP_END_SKIPPED);
}

static void
test_version (void)
{
  g_assert_true (TG_CHECK_VERSION (0, 0, 0));
  g_assert_true (
      TG_CHECK_VERSION (TG_VERSION_MAJOR, TG_VERSION_MINOR, TG_VERSION_MICRO));
  g_assert_false (TG_CHECK_VERSION (TG_VERSION_MAJOR + 1, 0, 0));
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  g_test_add_func ("/headers/standalone", test_standalone);
  g_test_add_func ("/headers/cxx", test_cxx);
  g_test_add_func ("/headers/version", test_version);
  return g_test_run ();
}
