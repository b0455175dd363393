/**
 * @file kernel.h
 * @brief What device code includes: the effective seed and the loop status,
 *        with no GLib, so `.cu` files compile without warnings.
 * @ingroup kernel
 */
#ifndef TRACKGEN_KERNEL_H
#define TRACKGEN_KERNEL_H

#include <stdint.h>

/**
 * @defgroup kernel Device code (trackgen/kernel.h)
 *
 * The part of libtrackgen's interface that kernels use, in a header that
 * includes only `<stdint.h>`: GLib's headers carry host-compiler attributes
 * that nvcc's device front end warns about (#1217), so a `.cu` file should
 * include this header, not seeds.h or exec.h, when it only needs these.  The
 * functions are `__host__ __device__` under nvcc and plain inline C
 * elsewhere, with bit-identical results.  seeds.h and exec.h include this
 * header, so host code sees the same definitions.
 * @{
 */

#if defined(__CUDACC__) || defined(DOXYGEN)
/** Marks an inline function compiled for both host and device by nvcc. */
#define TG_HOST_DEVICE __host__ __device__
#else
#define TG_HOST_DEVICE
#endif

/**
 * The 64-bit finalizer of SplitMix64 (Stafford's "Mix13"):
 * @code
 * z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
 * z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
 * return z ^ (z >> 31);          // all arithmetic modulo 2^64
 * @endcode
 * A bijection of 64-bit integers with full avalanche.
 * @param z any 64-bit value
 * @return the mixed value
 */
static inline TG_HOST_DEVICE uint64_t
tg_mix64 (uint64_t z)
{
  z = (z ^ (z >> 30)) * UINT64_C (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/**
 * The seed that keys generation number @p epoch of an env seeded @p seed,
 * bit-identical on host and device:
 * @code
 * tg_effective_seed(seed, epoch) = tg_mix64(seed ^ ((epoch + 1) * 0x9E3779B97F4A7C15))
 * @endcode
 * with `epoch + 1` computed in 64 bits and the product modulo 2^64.  For a
 * fixed seed, distinct epochs give distinct results (the mix is a bijection
 * and the odd multiplier keeps the products distinct).
 * @param seed  the env's seed
 * @param epoch the env's epoch (generation number)
 * @return the seed that keys that generation
 */
static inline TG_HOST_DEVICE uint64_t
tg_effective_seed (uint64_t seed, uint32_t epoch)
{
  return tg_mix64 (seed ^ (((uint64_t)epoch + 1) * UINT64_C (0x9E3779B97F4A7C15)));
}

/**
 * The seed tg_seed_state_new() gives env @p env from @p base_seed:
 * `tg_mix64(base_seed + (env + 1) * 0x9E3779B97F4A7C15)` (SplitMix64's
 * sequence).  Distinct envs get distinct seeds.  @p env is the env's global
 * index: a shard of envs (tg_seed_state_new_shard()) seeds its envs by
 * their global indices, so an env's seed does not depend on the sharding.
 * @param base_seed the population's base seed
 * @param env       the env's global index
 * @return the env's seed
 */
static inline TG_HOST_DEVICE uint64_t
tg_env_seed (uint64_t base_seed, uint32_t env)
{
  return tg_mix64 (base_seed + ((uint64_t)env + 1) * UINT64_C (0x9E3779B97F4A7C15));
}

/** Why a bounded loop ended, see #TgLoopStatus. */
typedef enum
{
  TG_LOOP_END_NONE = 0,      /**< not run yet, or still running */
  TG_LOOP_END_CONVERGED = 1, /**< the flag cleared after the last iteration */
  TG_LOOP_END_CAPPED = 2,    /**< the flag was still set after `max_iters` iterations */
  TG_LOOP_END_SKIPPED = 3,   /**< the flag was already 0 at entry: no iteration */
} TgLoopEnd;

/**
 * Device-resident outcome of a bounded loop, written on the device by every
 * run (so later device work or a readback can use it).  A loop inside a
 * skipped condition leaves it untouched.
 */
typedef struct
{
  int32_t iterations; /**< body executions in the last run */
  int32_t end;        /**< a #TgLoopEnd */
} TgLoopStatus;

/** @} */

#endif /* TRACKGEN_KERNEL_H */
