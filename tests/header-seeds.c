/* SPDX-License-Identifier: Apache-2.0 */
/* Compiles <trackgen/seeds.h> on its own: it must include what it uses. */
#include <trackgen/seeds.h>

const char *tg_test_header_seeds (void);

const char *
tg_test_header_seeds (void)
{
  return TG_VERSION_STRING;
}
