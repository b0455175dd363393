/* SPDX-License-Identifier: Apache-2.0 */
// device-kernels.cu: the kernel behind tg_device_check().
#include "device-kernels-private.h"
#include "kernel-private.cuh"

static __global__ void
check_pattern_kernel (uint32_t *out, uint32_t n, uint32_t salt)
{
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = tg__check_pattern (i, salt);
}

extern "C" cudaError_t
tg__launch_check_pattern (cudaStream_t stream, uint32_t *out, uint32_t n, uint32_t salt)
{
  return tg__launch (check_pattern_kernel, (n + 255) / 256, 256, stream, out, n, salt);
}
