/* api-test.h: the kernels of seeds-api-test (api-test-kernels.cu).
 * GLib-free, so that nvcc compiles them without GLib's headers. */
#ifndef TG_API_TEST_H
#define TG_API_TEST_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C"
{
#endif

  /* One thread spins for at least @cycles clock cycles: slow work that later
   * work on the stream must be ordered after. */
  cudaError_t tga_launch_spin (cudaStream_t s, uint64_t cycles);

#ifdef __cplusplus
}
#endif

#endif
