/* SPDX-License-Identifier: Apache-2.0 */
/* Compiles <trackgen/exec.h> on its own: it must include what it uses. */
#include <trackgen/exec.h>

const char *tg_test_header_exec (void);

const char *
tg_test_header_exec (void)
{
  return TG_VERSION_STRING;
}
