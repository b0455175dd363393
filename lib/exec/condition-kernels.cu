// condition-kernels.cu: one-thread kernels that set conditional handles and
// keep a loop's status on the device.
#include "condition-kernels-private.h"
#include "kernel-private.cuh"

#include <climits>

static __global__ void
if_set_kernel (cudaGraphConditionalHandle handle, const int32_t *flag)
{
  cudaGraphSetConditional (handle, *flag != 0);
}

static __global__ void
switch_set_kernel (cudaGraphConditionalHandle handle, const int32_t *index)
{
  cudaGraphSetConditional (handle, *index >= 0 ? (unsigned int)*index : UINT_MAX);
}

static __global__ void
loop_entry_kernel (cudaGraphConditionalHandle handle, int in_graph, const int32_t *flag,
                   TgLoopStatus *status)
{
  int go = *flag != 0;

  status->iterations = 0;
  status->end = go ? TG_LOOP_END_NONE : TG_LOOP_END_SKIPPED;
  if (in_graph)
    cudaGraphSetConditional (handle, go);
}

static __global__ void
loop_tail_kernel (cudaGraphConditionalHandle handle, int in_graph, const int32_t *flag,
                  TgLoopStatus *status, uint32_t max_iters)
{
  int32_t it = status->iterations + 1;
  int32_t end = *flag == 0                  ? TG_LOOP_END_CONVERGED
                : (uint32_t)it >= max_iters ? TG_LOOP_END_CAPPED
                                            : TG_LOOP_END_NONE;

  status->iterations = it;
  status->end = end;
  if (in_graph)
    cudaGraphSetConditional (handle, end == TG_LOOP_END_NONE);
}

extern "C" cudaError_t
tg__launch_if_set (cudaStream_t stream, cudaGraphConditionalHandle handle,
                   const int32_t *flag)
{
  return tg__launch (if_set_kernel, 1, 1, stream, handle, flag);
}

extern "C" cudaError_t
tg__launch_switch_set (cudaStream_t stream, cudaGraphConditionalHandle handle,
                       const int32_t *index)
{
  return tg__launch (switch_set_kernel, 1, 1, stream, handle, index);
}

extern "C" cudaError_t
tg__launch_loop_entry (cudaStream_t stream, cudaGraphConditionalHandle handle,
                       int in_graph, const int32_t *flag, TgLoopStatus *status)
{
  return tg__launch (loop_entry_kernel, 1, 1, stream, handle, in_graph, flag, status);
}

extern "C" cudaError_t
tg__launch_loop_tail (cudaStream_t stream, cudaGraphConditionalHandle handle,
                      int in_graph, const int32_t *flag, TgLoopStatus *status,
                      uint32_t max_iters)
{
  return tg__launch (loop_tail_kernel, 1, 1, stream, handle, in_graph, flag, status,
                     max_iters);
}
