// The public headers compile as C++ and keep C linkage.
#include <trackgen/trackgen.h>

extern "C" int tg_test_header_cxx (void);

extern "C" int
tg_test_header_cxx (void)
{
  TgCondition c = tg_conditional (nullptr);
  auto fn = &tg_producer_run;
  return (fn != nullptr) + (c.conditional ? 1 : 0)
         + (tg_effective_seed (1, 2) != 0 ? 1 : 0);
}
