/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file kernel.h
 * @brief What device code includes: the effective seed, the loop status, and
 *        the conditions and loops a kernel decides, with no GLib, so `.cu`
 *        files compile without warnings.
 * @ingroup kernel
 */
#ifndef TRACKGEN_KERNEL_H
#define TRACKGEN_KERNEL_H

#include <stdint.h>

/* The device functions below call cudaGraphSetConditional(), which the CUDA
 * runtime declares for device code in cuda_device_runtime_api.h, through
 * cuda_runtime.h (nvcc includes it in every .cu file already; naming it here
 * keeps the header whole under other CUDA compilers).  Host-only C sees the
 * plain types alone. */
#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#include <cuda_runtime.h>
#endif

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

/**
 * @defgroup kernel-decisions Conditions and loops decided by a kernel
 * @ingroup kernel
 *
 * A stage's own kernel can decide the condition, the case or the loop
 * continuation that TrackGen would otherwise read from a device flag with a
 * kernel of its own (exec.h: tg_launch_if_by(), tg_launch_switch_by(),
 * tg_launch_while_by(), and loop stages with #TgLoopSpec `set_by_body`).
 * The launch context hands the stage a value, a #TgDeviceCondition
 * (tg_launch_get_condition()) or a #TgDeviceLoop (tg_launch_get_loop()),
 * which the stage passes to its kernel as a parameter, and one thread of that
 * kernel calls tg_condition_set() or tg_loop_next() with it.  The same
 * kernel works under every policy: under a capture the value carries the
 * conditional node's handle and the call is `cudaGraphSetConditional`;
 * eagerly it carries a word of mapped host memory that the call writes and
 * TrackGen waits for, so no copy and no set kernel is enqueued.
 *
 * Rules, the same under every policy (eagerly a decision no kernel set is
 * an error; under a capture a broken rule makes the graph misbehave):
 * - exactly one thread calls the function, once per decision: once per run
 *   of the condition, once per loop iteration;
 * - on the stream of the launch context the value came from, so that it is
 *   ordered with the work it decides on;
 * - a loop body that never calls tg_loop_next() runs forever under a
 *   capture (the WHILE node keeps its handle's last value): call it in every
 *   iteration, typically in the body's last kernel.
 *
 * The device functions exist only in device code compiled by nvcc; the
 * types are plain C, so host code passes the values through to its kernels'
 * launchers.
 * @{
 */

/** Private: what a #TgDeviceCondition writes through.  Set by TrackGen. */
enum
{
  TG_DEVICE_CONDITION_NONE = 0,  /**< nothing: writes are dropped */
  TG_DEVICE_CONDITION_GRAPH = 1, /**< a conditional node's handle */
  TG_DEVICE_CONDITION_HOST = 2,  /**< a word of mapped host memory (eager) */
};

/**
 * The decision of one condition, switch or loop continuation, as a kernel
 * sets it with tg_condition_set() (or, in a loop, tg_loop_next()).  A value
 * to pass to the kernel as it is: its fields are TrackGen's.
 */
typedef struct
{
  uint32_t how;              /**< private: a TG_DEVICE_CONDITION_ value */
  uint32_t seq;              /**< private: the sequence number of the host word */
  unsigned long long handle; /**< private: the `cudaGraphConditionalHandle` */
  unsigned long long *word;  /**< private: the host word's device address */
} TgDeviceCondition;

/**
 * The continuation of a bounded loop, as its body's kernel sets it with
 * tg_loop_next(): the loop's status, its cap, and the decision.  A value to
 * pass to the kernel as it is.
 */
typedef struct
{
  TgDeviceCondition next; /**< private: whether another iteration runs */
  TgLoopStatus *status;   /**< private: the loop's status, device memory */
  uint32_t max_iters;     /**< private: the cap */
} TgDeviceLoop;

#if (defined(__CUDACC__) && !defined(__CUDACC_RTC__)) || defined(DOXYGEN)

/**
 * Sets the decision @p c: for an IF, non-zero runs the then-body and 0 the
 * else-body (if any); for a SWITCH, the case to run (none when @p value is
 * not below the number of cases).  Device code only; one thread, once (see
 * @ref kernel-decisions).
 *
 * Under a capture this is `cudaGraphSetConditional`.  Eagerly it stores
 * @p value with its sequence number in one 64-bit word of mapped host
 * memory and fences at system scope (`__threadfence_system`), so that the
 * store is on its way to the host before the thread goes on, not held
 * until the kernel ends: TrackGen's host thread is waiting for it.
 * @param c     from tg_launch_get_condition(), passed to the kernel
 * @param value the decision
 */
static inline __device__ void
tg_condition_set (TgDeviceCondition c, unsigned int value)
{
  if (c.how == TG_DEVICE_CONDITION_GRAPH)
    cudaGraphSetConditional (c.handle, value);
  else if (c.how == TG_DEVICE_CONDITION_HOST)
    {
      /* One store: the host sees the sequence number and the value together,
       * never one without the other. */
      *(volatile unsigned long long *)c.word
          = ((unsigned long long)c.seq << 32) | (unsigned long long)value;
      __threadfence_system ();
    }
}

/**
 * Ends one iteration of a loop: counts it in the loop's #TgLoopStatus and
 * decides whether another one runs, folding the cap in exactly as
 * TrackGen's own loops do:
 * @code
 * it  = status->iterations + 1;
 * end = converged ? TG_LOOP_END_CONVERGED : it >= max_iters ? TG_LOOP_END_CAPPED
 *                                                           : TG_LOOP_END_NONE;
 * status = { it, end };  continue while end == TG_LOOP_END_NONE
 * @endcode
 * Device code only; one thread, once per iteration, after the work that
 * decides @p converged (see @ref kernel-decisions).
 * @param loop      from tg_launch_get_loop() in the loop's body, passed to the kernel
 * @param converged non-zero when the loop is done
 * @return non-zero when another iteration runs
 */
static inline __device__ int
tg_loop_next (TgDeviceLoop loop, int converged)
{
  int32_t it, end;

  /* The loop tg_launch_get_loop() gives outside a loop's body, after its
   * critical warning: nothing to count. */
  if (loop.status == NULL)
    return 0;
  it = loop.status->iterations + 1;
  end = converged                        ? TG_LOOP_END_CONVERGED
        : (uint32_t)it >= loop.max_iters ? TG_LOOP_END_CAPPED
                                         : TG_LOOP_END_NONE;
  loop.status->iterations = it;
  loop.status->end = end;
  tg_condition_set (loop.next, end == TG_LOOP_END_NONE);
  return end == TG_LOOP_END_NONE;
}

#endif

/** @} */

/** @} */

#endif /* TRACKGEN_KERNEL_H */
