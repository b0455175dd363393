/* SPDX-License-Identifier: Apache-2.0 */
// The public headers compile as C++ and keep C linkage; kernel.h comes first,
// so it compiles on its own in C++ too.
#include <trackgen/kernel.h>
#include <trackgen/trackgen.h>

extern "C" int tg_test_header_cxx (void);

extern "C" int
tg_test_header_cxx (void)
{
  static const gint32 on = 1;
  TgCondition c = tg_conditional (&on);
  TgLoopStatus status = { 0, TG_LOOP_END_SKIPPED };
  auto fn = &tg_producer_run;
  return (fn != nullptr) + (c.flag != nullptr ? 1 : 0)
         + (tg_effective_seed (1, 2) != 0 ? 1 : 0) + status.end;
}
