/* SPDX-License-Identifier: Apache-2.0 */
// condition-test-kernels.cu: the kernels of condition-test that
// test-kernels.cu lacks: a loop countdown, and kernels that decide their own
// conditions and loops (trackgen/kernel.h).
#include "condition-test.h"

static __global__ void
countdown_kernel (gint32 *left, gint32 *flag)
{
  *left -= 1;
  *flag = *left > 0;
}

extern "C" cudaError_t
tgc_launch_countdown (cudaStream_t s, gint32 *left, gint32 *flag)
{
  countdown_kernel<<<1, 1, 0, s>>> (left, flag);
  return cudaGetLastError ();
}

static __global__ void
decide_kernel (TgDeviceCondition c, const gint32 *steps, guint32 n, guint32 *at,
               gint32 *seen)
{
  gint32 v = steps[*at % n];

  *seen = v;
  *at += 1;
  tg_condition_set (c, (unsigned int)v);
}

static __global__ void
relax_next_kernel (TgDeviceLoop loop, gint32 *value, const gint32 *target)
{
  *value += 1;
  tg_loop_next (loop, *value >= *target);
}

static __global__ void
late_set_kernel (gint32 *dst, gint32 value, guint64 ns)
{
  guint64 start, now;

  asm volatile ("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do
    asm volatile ("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while (now - start < ns);
  *dst = value;
}

extern "C" cudaError_t
tgc_launch_decide (cudaStream_t s, TgDeviceCondition c, const gint32 *steps, guint32 n,
                   guint32 *at, gint32 *seen)
{
  decide_kernel<<<1, 1, 0, s>>> (c, steps, n, at, seen);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgc_launch_relax_next (cudaStream_t s, TgDeviceLoop loop, gint32 *value,
                       const gint32 *target)
{
  relax_next_kernel<<<1, 1, 0, s>>> (loop, value, target);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgc_launch_late_set (cudaStream_t s, gint32 *dst, gint32 value, guint32 us)
{
  late_set_kernel<<<1, 1, 0, s>>> (dst, value, (guint64)us * 1000u);
  return cudaGetLastError ();
}
