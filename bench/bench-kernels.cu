// bench-kernels.cu: kernels of the benchmarks and of their raw floors.
#include "bench-kernels.h"

static __global__ void
tiny_kernel (uint32_t *word)
{
  if (threadIdx.x == 0)
    atomicAdd (word, 1u);
}

static __global__ void
if_set_kernel (cudaGraphConditionalHandle h, const int32_t *flag)
{
  cudaGraphSetConditional (h, *flag != 0);
}

static __global__ void
switch_set_kernel (cudaGraphConditionalHandle h, const int32_t *index)
{
  cudaGraphSetConditional (h, (unsigned int)*index);
}

static __global__ void
relax_kernel (int32_t *value, int32_t *flag, const int32_t *target)
{
  *value += 1;
  *flag = *value < *target;
}

static __global__ void
reset_kernel (int32_t *value, int32_t *flag)
{
  *value = 0;
  *flag = 1;
}

static __global__ void
while_entry_kernel (cudaGraphConditionalHandle h, const int32_t *flag, int32_t *it)
{
  *it = 0;
  cudaGraphSetConditional (h, *flag != 0);
}

static __global__ void
while_tail_kernel (cudaGraphConditionalHandle h, const int32_t *flag, int32_t *it,
                   int32_t max)
{
  cudaGraphSetConditional (h, *flag != 0 && ++*it < max);
}

static __global__ void
alternate_kernel (uint32_t *counter, int32_t *go)
{
  *go = (int32_t)(++*counter & 1u);
}

extern "C" cudaError_t
tgb_launch_tiny (cudaStream_t s, uint32_t *word)
{
  tiny_kernel<<<1, 32, 0, s>>> (word);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_if_set (cudaStream_t s, cudaGraphConditionalHandle h, const int32_t *flag)
{
  if_set_kernel<<<1, 1, 0, s>>> (h, flag);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_switch_set (cudaStream_t s, cudaGraphConditionalHandle h,
                       const int32_t *index)
{
  switch_set_kernel<<<1, 1, 0, s>>> (h, index);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_relax (cudaStream_t s, int32_t *value, int32_t *flag, const int32_t *target)
{
  relax_kernel<<<1, 1, 0, s>>> (value, flag, target);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_reset (cudaStream_t s, int32_t *value, int32_t *flag)
{
  reset_kernel<<<1, 1, 0, s>>> (value, flag);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_while_entry (cudaStream_t s, cudaGraphConditionalHandle h,
                        const int32_t *flag, int32_t *it)
{
  while_entry_kernel<<<1, 1, 0, s>>> (h, flag, it);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_while_tail (cudaStream_t s, cudaGraphConditionalHandle h,
                       const int32_t *flag, int32_t *it, int32_t max)
{
  while_tail_kernel<<<1, 1, 0, s>>> (h, flag, it, max);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_alternate (cudaStream_t s, uint32_t *counter, int32_t *go)
{
  alternate_kernel<<<1, 1, 0, s>>> (counter, go);
  return cudaGetLastError ();
}
