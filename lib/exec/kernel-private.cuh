/* SPDX-License-Identifier: Apache-2.0 */
// kernel-private.cuh: how libtrackgen's launchers launch.  C++, for the .cu
// files only.  Private to libtrackgen.
#ifndef TG_KERNEL_PRIVATE_CUH
#define TG_KERNEL_PRIVATE_CUH

#include <cuda_runtime.h>

// Launches @kernel and returns this launch's own status.  The <<<>>> form
// reports a launch error only through cudaGetLastError(), which would also
// take, and misreport as TrackGen's, an error the caller left pending.
template <typename... Params, typename... Args>
static inline cudaError_t
tg__launch (void (*kernel) (Params...), dim3 grid, dim3 block, cudaStream_t stream,
            Args... args)
{
  cudaLaunchConfig_t config = {};

  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  return cudaLaunchKernelEx (&config, kernel, args...);
}

#endif
