// api-test-kernels.cu: the kernel of seeds-api-test that test-kernels.cu
// lacks: a deliberately slow one.
#include "api-test.h"

static __global__ void
spin_kernel (uint64_t cycles)
{
  long long start = clock64 ();

  while ((uint64_t) (clock64 () - start) < cycles)
    ;
}

extern "C" cudaError_t
tga_launch_spin (cudaStream_t s, uint64_t cycles)
{
  spin_kernel<<<1, 1, 0, s>>> (cycles);
  return cudaGetLastError ();
}
