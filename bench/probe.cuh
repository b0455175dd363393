/* SPDX-License-Identifier: Apache-2.0 */
// probe.cuh: what the plain-CUDA probes share (overlap-probe.cu,
// switch-probe.cu): CHECK, which names a CUDA call that fails, with PROBE
// before it, and returns false; the quantile of their step times.
#ifndef BENCH_PROBE_CUH
#define BENCH_PROBE_CUH

#include <algorithm>
#include <cstdio>
#include <vector>

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

static inline double
quantile (std::vector<float> v, double q)
{
  if (v.empty ())
    return 0;
  std::sort (v.begin (), v.end ());
  return v[std::min ((size_t)(q * v.size ()), v.size () - 1)];
}

#endif // BENCH_PROBE_CUH
