// condition-test-kernels.cu: the kernels of condition-test that
// test-kernels.cu lacks: a loop countdown.
#include "condition-test.h"

static __global__ void
countdown_kernel (gint32 *left, gint32 *flag)
{
  *left -= 1;
  *flag = *left > 0;
}

extern "C" cudaError_t
tgc_launch_countdown (cudaStream_t s, gint32 *left, gint32 *flag)
{
  countdown_kernel<<<1, 1, 0, s>>> (left, flag);
  return cudaGetLastError ();
}
