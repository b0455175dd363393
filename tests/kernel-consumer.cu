/* SPDX-License-Identifier: Apache-2.0 */
// kernel-consumer.cu: device code as a user writes it, on <trackgen/kernel.h>
// alone.  make check compiles it with nvcc's warnings as errors and nothing
// suppressed: the header device code includes must stay GLib-free and clean.
// Nothing links or runs it.
#include <trackgen/kernel.h>

// out[i] = the effective seed of env i; one thread records the loop outcome
// the way a WHILE body's last iteration would.
static __global__ void
effective_kernel (const uint64_t *seeds, const uint32_t *epochs, uint64_t *out,
                  uint32_t n, TgLoopStatus *status)
{
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i < n)
    out[i] = tg_effective_seed (seeds[i], epochs[i]);
  if (i == 0)
    {
      status->iterations = 1;
      status->end = TG_LOOP_END_CONVERGED;
    }
}

// A kernel that decides an IF and ends a loop's iteration, through the
// values its launcher was given (kernel.h's device functions).
static __global__ void
deciding_kernel (const int32_t *in, TgDeviceCondition c, TgDeviceLoop loop)
{
  if (threadIdx.x == 0)
    {
      tg_condition_set (c, *in != 0);
      (void)tg_loop_next (loop, *in == 0);
    }
}

extern "C" cudaError_t tgk_launch_deciding (cudaStream_t s, const int32_t *in,
                                            TgDeviceCondition c, TgDeviceLoop loop);

extern "C" cudaError_t
tgk_launch_deciding (cudaStream_t s, const int32_t *in, TgDeviceCondition c,
                     TgDeviceLoop loop)
{
  deciding_kernel<<<1, 32, 0, s>>> (in, c, loop);
  return cudaGetLastError ();
}

extern "C" cudaError_t tgk_launch_effective (cudaStream_t s, const uint64_t *seeds,
                                             const uint32_t *epochs, uint64_t *out,
                                             uint32_t n, TgLoopStatus *status);

extern "C" cudaError_t
tgk_launch_effective (cudaStream_t s, const uint64_t *seeds, const uint32_t *epochs,
                      uint64_t *out, uint32_t n, TgLoopStatus *status)
{
  effective_kernel<<<(n + 255) / 256, 256, 0, s>>> (seeds, epochs, out, n, status);
  return cudaGetLastError ();
}
