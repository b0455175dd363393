/* SPDX-License-Identifier: Apache-2.0 */
// test-kernels.cu: small deterministic kernels for the test programs.
#include "tg-test.h"
// The library's launch helper: each launcher returns its own launch's
// status, never an error a caller left pending (errors-test checks that).
#include "../lib/exec/kernel-private.cuh"

static inline __host__ __device__ guint32
hash (guint32 i, guint32 param)
{
  guint32 x = (i + 0x68E31DA4u) * 0x9E3779B1u ^ param;
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  x ^= x >> 12;
  return x;
}

extern "C" guint32
tgt_hash (guint32 i, guint32 param)
{
  return hash (i, param);
}

static __global__ void
seed_kernel (guint32 *out, guint32 n, const guint32 *param)
{
  guint32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = hash (i, *param);
}

static __global__ void
mix_kernel (guint32 *buf, guint32 n, guint32 k)
{
  guint32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    buf[i] = buf[i] * k + ((buf[i] >> 7) ^ i);
}

static __global__ void
combine_kernel (const guint32 *a, guint32 *b, guint32 n)
{
  guint32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    b[i] += a[(guint64) i * 7 % n];
}

static __global__ void
set_kernel (gint32 *dst, gint32 value)
{
  *dst = value;
}

static __global__ void
count_kernel (guint32 *counter)
{
  *counter += 1;
}

static __global__ void
flag_pattern_kernel (gint32 *flag, guint32 *counter, guint32 pattern)
{
  *flag = (pattern >> (*counter % 32)) & 1;
  *counter += 1;
}

static __global__ void
relax_kernel (gint32 *value, gint32 *flag, const gint32 *target)
{
  *value += 1;
  *flag = *value < *target;
}

static __global__ void
loop_setup_kernel (gint32 *value, gint32 *flag, gint32 *target, guint32 *counter,
                   gint32 max)
{
  const gint32 targets[4] = { max - 2, max, max + 3, 0 };

  *target = targets[*counter % 4];
  *value = 0;
  *flag = *target > 0;
  *counter += 1;
}

static __global__ void
block_sum_kernel (const gint32 *value, guint32 *sum)
{
  __shared__ guint32 part[128];
  guint32 t = threadIdx.x;

  part[t] = (guint32) *value + t;
  __syncthreads ();
  for (guint32 half = 64; half > 0; half >>= 1)
    {
      if (t < half)
        part[t] += part[t + half];
      __syncthreads ();
    }
  if (t == 0)
    *sum += part[0];
}

static __global__ void
parity_kernel (const gint32 *value, gint32 *flag)
{
  *flag = *value & 1;
}

#define GRID(n) ((n) + 255) / 256, 256

extern "C" cudaError_t
tgt_launch_seed (cudaStream_t s, guint32 *out, guint32 n, const guint32 *param)
{
  return tg__launch (seed_kernel, GRID (n), s, out, n, param);
}

extern "C" cudaError_t
tgt_launch_mix (cudaStream_t s, guint32 *buf, guint32 n, guint32 k)
{
  return tg__launch (mix_kernel, GRID (n), s, buf, n, k);
}

extern "C" cudaError_t
tgt_launch_combine (cudaStream_t s, const guint32 *a, guint32 *b, guint32 n)
{
  return tg__launch (combine_kernel, GRID (n), s, a, b, n);
}

extern "C" cudaError_t
tgt_launch_set (cudaStream_t s, gint32 *dst, gint32 value)
{
  return tg__launch (set_kernel, 1, 1, s, dst, value);
}

extern "C" cudaError_t
tgt_launch_count (cudaStream_t s, guint32 *counter)
{
  return tg__launch (count_kernel, 1, 1, s, counter);
}

extern "C" cudaError_t
tgt_launch_flag_pattern (cudaStream_t s, gint32 *flag, guint32 *counter, guint32 pattern)
{
  return tg__launch (flag_pattern_kernel, 1, 1, s, flag, counter, pattern);
}

extern "C" cudaError_t
tgt_launch_relax (cudaStream_t s, gint32 *value, gint32 *flag, const gint32 *target)
{
  return tg__launch (relax_kernel, 1, 1, s, value, flag, target);
}

extern "C" cudaError_t
tgt_launch_loop_setup (cudaStream_t s, gint32 *value, gint32 *flag, gint32 *target,
                       guint32 *counter, gint32 max)
{
  return tg__launch (loop_setup_kernel, 1, 1, s, value, flag, target, counter, max);
}

extern "C" cudaError_t
tgt_launch_block_sum (cudaStream_t s, const gint32 *value, guint32 *sum)
{
  return tg__launch (block_sum_kernel, 1, 128, s, value, sum);
}

extern "C" cudaError_t
tgt_launch_parity (cudaStream_t s, const gint32 *value, gint32 *flag)
{
  return tg__launch (parity_kernel, 1, 1, s, value, flag);
}

extern "C" cudaError_t
tgt_launch_mix_legacy (guint32 *buf, guint32 n, guint32 k)
{
  return tg__launch (mix_kernel, GRID (n), cudaStreamLegacy, buf, n, k);
}
