/* SPDX-License-Identifier: Apache-2.0 */
/* Compiles <trackgen/kernel.h> on its own, and without GLib: it is what
 * device code includes. */
#include <trackgen/kernel.h>

#ifdef G_BEGIN_DECLS
#error "trackgen/kernel.h must not include GLib"
#endif

uint64_t tg_test_header_kernel (void);

uint64_t
tg_test_header_kernel (void)
{
  TgLoopStatus status = { 0, TG_LOOP_END_NONE };
  /* Host code passes these through to its kernels' launchers. */
  TgDeviceCondition c = { TG_DEVICE_CONDITION_NONE, 0, 0, 0 };
  TgDeviceLoop loop = { c, &status, 1 };

  return tg_effective_seed (0, (uint32_t)status.iterations + loop.max_iters - 1);
}
