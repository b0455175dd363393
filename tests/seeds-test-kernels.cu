/* SPDX-License-Identifier: Apache-2.0 */
// seeds-test-kernels.cu: the device side of seeds-test: tg_effective_seed on
// arrays (compiled here by nvcc, apart from the library), a mask that
// depends on a device-side replay counter, for the graph test, and a
// deliberately slow kernel, for the stream-order test.
#include "seeds-test.h"

// The mask byte of @env at replay @replay: 0, or a non-zero value other than
// 1, so that the test also checks "non-zero means advance".
static inline __host__ __device__ guint8
mask_value (guint32 env, guint32 replay)
{
  guint64 h = tg_mix64 ((((guint64) replay << 32) | env) ^ 0x632BE59BD9B4E019ull);

  return (h >> 63) ? (guint8) (1 + (h & 0xFE)) : 0;
}

extern "C" guint8
tgs_mask_value (guint32 env, guint32 replay)
{
  return mask_value (env, replay);
}

static __global__ void
effective_kernel (const guint64 *seeds, const guint32 *epochs, guint64 *out, guint n)
{
  guint i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = tg_effective_seed (seeds[i], epochs[i]);
}

static __global__ void
replay_mask_kernel (guint8 *mask, guint n, const guint32 *counter)
{
  guint i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    mask[i] = mask_value (i, *counter);
}

extern "C" cudaError_t
tgs_launch_effective (cudaStream_t s, const guint64 *seeds, const guint32 *epochs,
                      guint64 *out, guint n)
{
  effective_kernel<<<(n + 255) / 256, 256, 0, s>>> (seeds, epochs, out, n);
  return cudaGetLastError ();
}

extern "C" cudaError_t
tgs_launch_replay_mask (cudaStream_t s, guint8 *mask, guint n, const guint32 *counter)
{
  replay_mask_kernel<<<(n + 255) / 256, 256, 0, s>>> (mask, n, counter);
  return cudaGetLastError ();
}

static __global__ void
spin_kernel (guint64 cycles)
{
  long long start = clock64 ();

  while ((guint64) (clock64 () - start) < cycles)
    ;
}

extern "C" cudaError_t
tgs_launch_spin (cudaStream_t s, guint64 cycles)
{
  spin_kernel<<<1, 1, 0, s>>> (cycles);
  return cudaGetLastError ();
}
