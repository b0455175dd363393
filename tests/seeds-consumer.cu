/* SPDX-License-Identifier: Apache-2.0 */
// seeds-consumer.cu: device code that includes <trackgen/seeds.h>, which
// brings GLib.  It builds; its only warnings are nvcc's #1217 on GLib's
// gnu_printf attributes, so make check compiles it with every other warning
// an error.  Nothing links or runs it.
#include <trackgen/seeds.h>

// out[i] = the effective seed of global env first + i at @epoch.
static __global__ void
env_kernel (guint64 base_seed, guint32 first, guint32 epoch, guint64 *out, guint n)
{
  guint i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i < n)
    out[i] = tg_effective_seed (tg_env_seed (base_seed, first + i), epoch);
}

extern "C" cudaError_t tgk_launch_env_seeds (cudaStream_t s, guint64 base_seed,
                                             guint32 first, guint32 epoch, guint64 *out,
                                             guint n);

extern "C" cudaError_t
tgk_launch_env_seeds (cudaStream_t s, guint64 base_seed, guint32 first, guint32 epoch,
                      guint64 *out, guint n)
{
  env_kernel<<<(n + 255) / 256, 256, 0, s>>> (base_seed, first, epoch, out, n);
  return cudaGetLastError ();
}
