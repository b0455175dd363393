/* SPDX-License-Identifier: Apache-2.0 */
// launch.cuh: how the examples' launchers launch.  C++, for their .cu files.
#ifndef EXAMPLES_LAUNCH_CUH
#define EXAMPLES_LAUNCH_CUH

#include <cuda_runtime.h>

// Launches @kernel on @stream and returns this launch's own status.  The
// <<<>>> form reports a launch error only through cudaGetLastError(), which
// would also take, and misreport as this launch's, an error the caller left
// pending.
template <typename... Params, typename... Args>
static inline cudaError_t
launch_kernel (void (*kernel) (Params...), dim3 grid, dim3 block, size_t smem,
               cudaStream_t stream, Args... args)
{
  cudaLaunchConfig_t config = {};

  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  return cudaLaunchKernelEx (&config, kernel, args...);
}

#endif // EXAMPLES_LAUNCH_CUH
