/* seeds-kernels-private.h: launchers of the seed-state kernels
 * (seeds-kernels.cu).  Plain C without GLib, so nvcc compiles it without
 * warnings.  Private to libtrackgen. */
#ifndef TG_SEEDS_KERNELS_PRIVATE_H
#define TG_SEEDS_KERNELS_PRIVATE_H

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <trackgen/kernel.h>

#ifdef __cplusplus
extern "C"
{
#endif

  /* seeds[i] = tg_env_seed(base_seed, first + i); epochs[i] = 0. */
  cudaError_t tg__launch_seeds_init (cudaStream_t stream, uint64_t *seeds,
                                     uint32_t *epochs, unsigned int n,
                                     unsigned int first, uint64_t base_seed);

  /* seeds[ids[k]] = values[k]; epochs[ids[k]] = 0, for k < n and ids[k] <
   * n_envs (ids read on the device). */
  cudaError_t tg__launch_seeds_scatter (cudaStream_t stream, uint64_t *seeds,
                                        uint32_t *epochs, unsigned int n_envs,
                                        const uint32_t *ids, const uint64_t *values,
                                        unsigned int n);

  /* epochs[i] = 0 where mask == NULL or mask[i] != 0. */
  cudaError_t tg__launch_seeds_reset (cudaStream_t stream, uint32_t *epochs,
                                      const uint8_t *mask, unsigned int n);

  /* epochs[i] += (mask == NULL || mask[i] != 0), wrapping. */
  cudaError_t tg__launch_seeds_advance (cudaStream_t stream, uint32_t *epochs,
                                        const uint8_t *mask, unsigned int n);

  /* out[i] = tg_effective_seed(seeds[i], epochs[i]). */
  cudaError_t tg__launch_seeds_fill (cudaStream_t stream, uint64_t *out,
                                     const uint64_t *seeds, const uint32_t *epochs,
                                     unsigned int n);

  /* epochs[i] += (mask == NULL || mask[i] != 0), wrapping; then out[i] =
   * tg_effective_seed(seeds[i], epochs[i]): advance then fill, one kernel.
   * @groups: the groups of 4 envs a thread takes (1, 2 or 4; 0: the
   * default), for bench/seeds-bench.c to compare. */
  cudaError_t tg__launch_seeds_advance_fill (cudaStream_t stream, uint64_t *out,
                                             const uint64_t *seeds, uint32_t *epochs,
                                             const uint8_t *mask, unsigned int n,
                                             unsigned int groups);

#ifdef __cplusplus
}
#endif

#endif
