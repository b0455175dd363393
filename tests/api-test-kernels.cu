// api-test-kernels.cu: the kernels of the API 0.2 tests that test-kernels.cu
// lacks: a loop countdown and a deliberately slow kernel.
#include "api-test.h"

static __global__ void
countdown_kernel (int32_t *left, int32_t *flag)
{
  *left -= 1;
  *flag = *left > 0;
}

static __global__ void
spin_kernel (uint64_t cycles)
{
  long long start = clock64 ();

  while ((uint64_t) (clock64 () - start) < cycles)
    ;
}

extern "C" cudaError_t
tga_launch_countdown (cudaStream_t s, int32_t *left, int32_t *flag)
{
  countdown_kernel<<<1, 1, 0, s>>> (left, flag);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tga_launch_spin (cudaStream_t s, uint64_t cycles)
{
  spin_kernel<<<1, 1, 0, s>>> (cycles);
  return cudaGetLastError ();
}
