// record-test-kernels.cu: the kernels of record-test that test-kernels.cu
// lacks: the set kernels of a caller's hand-built IF and WHILE.
#include "record-test.h"
#include "../lib/exec/kernel-private.cuh"

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
