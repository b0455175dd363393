/* SPDX-License-Identifier: Apache-2.0 */
// condition-kernels.cu: one-thread kernels that decide conditions and keep a
// loop's status on the device.  Each decides through the same device
// functions a user's kernel calls (trackgen/kernel.h), so TrackGen's own
// conditions and the ones a user's kernel sets cannot drift apart, and so
// each works captured (a handle) and eagerly (a mapped host word) alike.
#include "condition-kernels-private.h"
#include "kernel-private.cuh"

#include <climits>

static __global__ void
if_set_kernel (TgDeviceCondition c, const int32_t *flag)
{
  tg_condition_set (c, *flag != 0);
}

static __global__ void
switch_set_kernel (TgDeviceCondition c, const int32_t *index)
{
  tg_condition_set (c, *index >= 0 ? (unsigned int)*index : UINT_MAX);
}

static __global__ void
loop_entry_kernel (TgDeviceLoop loop, const int32_t *flag)
{
  int go = flag == NULL || *flag != 0;

  loop.status->iterations = 0;
  loop.status->end = go ? TG_LOOP_END_NONE : TG_LOOP_END_SKIPPED;
  tg_condition_set (loop.next, go);
}

static __global__ void
loop_tail_kernel (TgDeviceLoop loop, const int32_t *flag)
{
  tg_loop_next (loop, *flag == 0);
}

extern "C" cudaError_t
tg__launch_if_set (cudaStream_t stream, TgDeviceCondition c, const int32_t *flag)
{
  return tg__launch (if_set_kernel, 1, 1, stream, c, flag);
}

extern "C" cudaError_t
tg__launch_switch_set (cudaStream_t stream, TgDeviceCondition c, const int32_t *index)
{
  return tg__launch (switch_set_kernel, 1, 1, stream, c, index);
}

extern "C" cudaError_t
tg__launch_loop_entry (cudaStream_t stream, TgDeviceLoop loop, const int32_t *flag)
{
  return tg__launch (loop_entry_kernel, 1, 1, stream, loop, flag);
}

extern "C" cudaError_t
tg__launch_loop_tail (cudaStream_t stream, TgDeviceLoop loop, const int32_t *flag)
{
  return tg__launch (loop_tail_kernel, 1, 1, stream, loop, flag);
}
