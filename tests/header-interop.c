/* SPDX-License-Identifier: Apache-2.0 */
/* Compiles <trackgen/interop.h> on its own: it must include what it uses. */
#include <trackgen/interop.h>

const char *tg_test_header_interop (void);

const char *
tg_test_header_interop (void)
{
  return TG_VERSION_STRING;
}
