/* SPDX-License-Identifier: Apache-2.0 */
// probe-check.cuh: the plain-CUDA probes' CHECK (overlap-probe.cu,
// switch-probe.cu): a CUDA call that fails is named, with PROBE before it,
// and the function returns false.
#ifndef BENCH_PROBE_CHECK_CUH
#define BENCH_PROBE_CHECK_CUH

#include <cstdio>

#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
  do                                                                                   \
    {                                                                                  \
      cudaError_t status_ = (call);                                                    \
      if (status_ != cudaSuccess)                                                      \
        {                                                                              \
          fprintf (stderr, "%s: %s failed: %s\n", PROBE, #call,                        \
                   cudaGetErrorString (status_));                                      \
          return false;                                                                \
        }                                                                              \
    }                                                                                  \
  while (0)

#endif // BENCH_PROBE_CHECK_CUH
