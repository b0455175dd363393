/* SPDX-License-Identifier: Apache-2.0 */
// record-test-kernels.cu: the kernels of record-test that test-kernels.cu
// lacks: the set kernels of a caller's hand-built IF and WHILE, and a loop
// body that decides its loop.
#include "record-test.h"
#include "../lib/exec/kernel-private.cuh"
#include <trackgen/kernel.h>

static __global__ void
if_set_kernel (cudaGraphConditionalHandle h, const gint32 *flag)
{
  cudaGraphSetConditional (h, *flag != 0);
}

static __global__ void
while_entry_kernel (cudaGraphConditionalHandle h, gint32 *it, const gint32 *iters)
{
  *it = 0;
  cudaGraphSetConditional (h, 0 < *iters);
}

static __global__ void
while_tail_kernel (cudaGraphConditionalHandle h, gint32 *it, const gint32 *iters)
{
  cudaGraphSetConditional (h, ++*it < *iters);
}

extern "C" cudaError_t
tgr_launch_if_set (cudaStream_t s, cudaGraphConditionalHandle h, const gint32 *flag)
{
  return tg__launch (if_set_kernel, 1, 1, s, h, flag);
}

extern "C" cudaError_t
tgr_launch_while_entry (cudaStream_t s, cudaGraphConditionalHandle h, gint32 *it,
                        const gint32 *iters)
{
  return tg__launch (while_entry_kernel, 1, 1, s, h, it, iters);
}

extern "C" cudaError_t
tgr_launch_while_tail (cudaStream_t s, cudaGraphConditionalHandle h, gint32 *it,
                       const gint32 *iters)
{
  return tg__launch (while_tail_kernel, 1, 1, s, h, it, iters);
}

static __global__ void
count_next_kernel (TgDeviceLoop loop, guint32 *count, guint32 every)
{
  tg_loop_next (loop, ++*count % every == 0);
}

extern "C" cudaError_t
tgr_launch_count_next (cudaStream_t s, TgDeviceLoop loop, guint32 *count, guint32 every)
{
  return tg__launch (count_next_kernel, 1, 1, s, loop, count, every);
}
