/* SPDX-License-Identifier: Apache-2.0 */
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

  /* The shapes of the advance_fill kernel, for bench/seeds-bench.c to
   * compare; each takes envs by groups of 4 where the arrays are aligned. */
  typedef enum
  {
    TG_SEEDS_SHAPE_DEFAULT = 0, /* the one tg_seed_state_advance_fill() takes */
    TG_SEEDS_SHAPE_GROUPS_1,    /* a thread per group, a block per 256 */
    TG_SEEDS_SHAPE_GROUPS_2,    /* a thread per 2 groups, both loaded first */
    TG_SEEDS_SHAPE_GROUPS_4,    /* a thread per 4 groups, all loaded first */
    TG_SEEDS_SHAPE_STREAM_2,    /* 2 blocks an SM, each thread loading its next
                                 * group before storing the current one */
    TG_SEEDS_SHAPE_STREAM_4,    /* the same, 4 blocks an SM */
    TG_SEEDS_N_SHAPES
  } TgSeedsShape;

/* The shape tg_seed_state_advance_fill() takes: the fastest measured.  On
 * the H200 (bench/seeds-bench.c, 2026-12-02), a thread per group reached
 * 0.770, 0.933, 0.938 and 0.952 of a copy of the same bytes at E = 2^20,
 * 2^22, 2^24 and 2^26; the persistent shapes 0.661-0.927, the 4-blocks one
 * the least (0.661, 0.801, 0.785, 0.776). */
#define TG_SEEDS_ADVANCE_FILL_SHAPE TG_SEEDS_SHAPE_GROUPS_1

  /* epochs[i] += (mask == NULL || mask[i] != 0), wrapping; then out[i] =
   * tg_effective_seed(seeds[i], epochs[i]): advance then fill, one kernel,
   * of @shape (cudaErrorInvalidValue for a shape out of range). */
  cudaError_t tg__launch_seeds_advance_fill (cudaStream_t stream, uint64_t *out,
                                             const uint64_t *seeds, uint32_t *epochs,
                                             const uint8_t *mask, unsigned int n,
                                             TgSeedsShape shape);

#ifdef __cplusplus
}
#endif

#endif
