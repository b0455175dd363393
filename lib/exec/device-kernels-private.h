/* SPDX-License-Identifier: Apache-2.0 */
/* device-kernels-private.h: the kernel behind tg_device_check()
 * (device-kernels.cu).  Plain C without GLib, so nvcc compiles it without
 * warnings.  Private to libtrackgen. */
#ifndef TG_DEVICE_KERNELS_PRIVATE_H
#define TG_DEVICE_KERNELS_PRIVATE_H

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <trackgen/kernel.h>

#ifdef __cplusplus
extern "C"
{
#endif

  /* out[i] = tg__check_pattern (i, salt) for i < n. */
  cudaError_t tg__launch_check_pattern (cudaStream_t stream, uint32_t *out, uint32_t n,
                                        uint32_t salt);

#ifdef __cplusplus
}
#endif

/* The pattern it writes, computed identically on the host. */
static inline TG_HOST_DEVICE uint32_t
tg__check_pattern (uint32_t i, uint32_t salt)
{
  uint32_t x = i * 0x9E3779B1u ^ salt;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  return x;
}

#endif
