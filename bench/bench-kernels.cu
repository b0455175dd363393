/* SPDX-License-Identifier: Apache-2.0 */
// bench-kernels.cu: kernels of the benchmarks and of their raw floors.
#include "bench-kernels.h"

static __global__ void
tiny_kernel (uint32_t *word)
{
  if (threadIdx.x == 0)
    atomicAdd (word, 1u);
}

static __device__ uint64_t
global_ns (void)
{
  uint64_t t;

  asm volatile ("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

static __global__ void
long_kernel (uint32_t *word, uint32_t ns)
{
  uint64_t t0 = global_ns ();

  while (global_ns () - t0 < ns)
    ;
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

/* The minimal loop: the kernels the loop runs anyway set its handle, so no
 * set kernel runs.  The reset enters the loop; the relaxation folds the
 * cap into its own write. */
static __global__ void
reset_set_kernel (cudaGraphConditionalHandle h, int32_t *value, int32_t *flag,
                  int32_t *it)
{
  *value = 0;
  *flag = 1;
  *it = 0;
  cudaGraphSetConditional (h, 1);
}

static __global__ void
relax_set_kernel (cudaGraphConditionalHandle h, int32_t *value, int32_t *flag,
                  const int32_t *target, int32_t *it, int32_t max)
{
  int32_t go;

  *value += 1;
  go = *value < *target;
  *flag = go;
  cudaGraphSetConditional (h, go && ++*it < max);
}

/* NVIDIA Warp's set kernels (warp/native/warp.cu), launched on one thread
 * as Warp does: the handle takes the int32 flag as it is, or negated for an
 * ELSE branch, or both at once for Warp's IF/ELSE of two IF nodes. */
static __global__ void
warp_set_if_kernel (cudaGraphConditionalHandle h, const int32_t *flag)
{
  if (threadIdx.x + blockIdx.x * blockDim.x == 0)
    cudaGraphSetConditional (h, (unsigned int)*flag);
}

static __global__ void
warp_set_else_kernel (cudaGraphConditionalHandle h, const int32_t *flag)
{
  if (threadIdx.x + blockIdx.x * blockDim.x == 0)
    cudaGraphSetConditional (h, !*flag);
}

static __global__ void
warp_set_if_else_kernel (cudaGraphConditionalHandle h_if,
                         cudaGraphConditionalHandle h_else, const int32_t *flag)
{
  if (threadIdx.x + blockIdx.x * blockDim.x == 0)
    {
      cudaGraphSetConditional (h_if, (unsigned int)*flag);
      cudaGraphSetConditional (h_else, !*flag);
    }
}

// A user's kernel that decides, as the rows with user-set conditions need
// it: alone (the Warp-shaped floor reads its flag with a set kernel), through
// TrackGen's device API, through the raw handle, or into mapped host memory
// by hand (the eager floor: the store TrackGen's eager decisions wait for).
static __global__ void
decide_kernel (const int32_t *in, int32_t *out)
{
  *out = *in != 0;
}

static __global__ void
decide_set_kernel (TgDeviceCondition c, const int32_t *in, int32_t *out)
{
  int32_t go = *in != 0;

  *out = go;
  tg_condition_set (c, go);
}

static __global__ void
decide_raw_kernel (cudaGraphConditionalHandle h, const int32_t *in, int32_t *out)
{
  int32_t go = *in != 0;

  *out = go;
  cudaGraphSetConditional (h, go);
}

static __device__ void
store_mapped (uint64_t *word, uint32_t seq, uint32_t value)
{
  *(volatile uint64_t *)word = ((uint64_t)seq << 32) | value;
  __threadfence_system ();
}

static __global__ void
decide_mapped_kernel (const int32_t *in, int32_t *out, uint64_t *word, uint32_t seq)
{
  int32_t go = *in != 0;

  *out = go;
  store_mapped (word, seq, go);
}

static __global__ void
relax_next_kernel (TgDeviceLoop loop, int32_t *value, int32_t *flag,
                   const int32_t *target)
{
  int32_t go;

  *value += 1;
  go = *value < *target;
  *flag = go;
  tg_loop_next (loop, !go);
}

static __global__ void
relax_mapped_kernel (int32_t *value, int32_t *flag, const int32_t *target,
                     uint64_t *word, uint32_t seq)
{
  int32_t go;

  *value += 1;
  go = *value < *target;
  *flag = go;
  store_mapped (word, seq, go);
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
tgb_launch_long (cudaStream_t s, uint32_t *word, uint32_t ns)
{
  long_kernel<<<1, 32, 0, s>>> (word, ns);
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
tgb_launch_reset_set (cudaStream_t s, cudaGraphConditionalHandle h, int32_t *value,
                      int32_t *flag, int32_t *it)
{
  reset_set_kernel<<<1, 1, 0, s>>> (h, value, flag, it);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_relax_set (cudaStream_t s, cudaGraphConditionalHandle h, int32_t *value,
                      int32_t *flag, const int32_t *target, int32_t *it, int32_t max)
{
  relax_set_kernel<<<1, 1, 0, s>>> (h, value, flag, target, it, max);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_warp_set_if (cudaStream_t s, cudaGraphConditionalHandle h,
                        const int32_t *flag)
{
  warp_set_if_kernel<<<1, 1, 0, s>>> (h, flag);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_warp_set_else (cudaStream_t s, cudaGraphConditionalHandle h,
                          const int32_t *flag)
{
  warp_set_else_kernel<<<1, 1, 0, s>>> (h, flag);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_warp_set_if_else (cudaStream_t s, cudaGraphConditionalHandle h_if,
                             cudaGraphConditionalHandle h_else, const int32_t *flag)
{
  warp_set_if_else_kernel<<<1, 1, 0, s>>> (h_if, h_else, flag);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_decide (cudaStream_t s, const int32_t *in, int32_t *out)
{
  decide_kernel<<<1, 1, 0, s>>> (in, out);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_decide_set (cudaStream_t s, TgDeviceCondition c, const int32_t *in,
                       int32_t *out)
{
  decide_set_kernel<<<1, 1, 0, s>>> (c, in, out);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_decide_raw (cudaStream_t s, cudaGraphConditionalHandle h, const int32_t *in,
                       int32_t *out)
{
  decide_raw_kernel<<<1, 1, 0, s>>> (h, in, out);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_decide_mapped (cudaStream_t s, const int32_t *in, int32_t *out,
                          uint64_t *word, uint32_t seq)
{
  decide_mapped_kernel<<<1, 1, 0, s>>> (in, out, word, seq);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_relax_next (cudaStream_t s, TgDeviceLoop loop, int32_t *value,
                       int32_t *flag, const int32_t *target)
{
  relax_next_kernel<<<1, 1, 0, s>>> (loop, value, flag, target);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_relax_mapped (cudaStream_t s, int32_t *value, int32_t *flag,
                         const int32_t *target, uint64_t *word, uint32_t seq)
{
  relax_mapped_kernel<<<1, 1, 0, s>>> (value, flag, target, word, seq);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgb_launch_alternate (cudaStream_t s, uint32_t *counter, int32_t *go)
{
  alternate_kernel<<<1, 1, 0, s>>> (counter, go);
  return cudaGetLastError ();
}
