/* SPDX-License-Identifier: Apache-2.0 */
/* Compiles <trackgen/trackgen.h> on its own: it must include what it uses. */
#include <trackgen/trackgen.h>

const char *tg_test_header_trackgen (void);

const char *
tg_test_header_trackgen (void)
{
  return TG_VERSION_STRING;
}
