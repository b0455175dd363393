/**
 * @file seeds.h
 * @brief Seeds and epochs: per-env seed state on the device, one effective seed.
 * @ingroup seeds
 */
#ifndef TRACKGEN_SEEDS_H
#define TRACKGEN_SEEDS_H

#include <trackgen/exec.h>

G_BEGIN_DECLS

/**
 * @defgroup seeds Seeds and epochs (libtrackgen-seeds)
 *
 * Every generation of an env is keyed by its 64-bit seed and its 32-bit
 * epoch through tg_effective_seed(), so any track can be regenerated later
 * from (seed, epoch) alone.  A #TgSeedState keeps both for E envs on the
 * device; advancing the epochs of the envs in a device mask is a kernel, so
 * regeneration and auto-reset happen inside a graph.  Its device pointers
 * stay fixed for its lifetime, since graphs bake them in.
 *
 * Streams: a NULL stream resolves like a producer call without a stream (a
 * registered foreign capture's stream, else TrackGen's default stream).  The
 * blocking functions (new, set_seeds, read, snapshot, restore) run on
 * TrackGen's default stream of the state's device and are ordered after the
 * work enqueued there only: synchronize any other stream that advances or
 * reads the state first.  Every function restores the caller's current
 * device.
 * @{
 */

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
static inline TG_HOST_DEVICE guint64
tg_mix64 (guint64 z)
{
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
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
static inline TG_HOST_DEVICE guint64
tg_effective_seed (guint64 seed, guint32 epoch)
{
  return tg_mix64 (seed
                   ^ (((guint64)epoch + 1) * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15)));
}

/**
 * The seed tg_seed_state_new() gives env @p env from @p base_seed:
 * `tg_mix64(base_seed + (env + 1) * 0x9E3779B97F4A7C15)` (SplitMix64's
 * sequence).  Distinct envs get distinct seeds.
 * @param base_seed the state's base seed
 * @param env       the env's index
 * @return the env's seed
 */
static inline TG_HOST_DEVICE guint64
tg_env_seed (guint64 base_seed, guint32 env)
{
  return tg_mix64 (base_seed
                   + ((guint64)env + 1) * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));
}

/** Per-env seeds and epochs on one device; reference-counted. */
typedef struct _TgSeedState TgSeedState;

/**
 * Creates the state of @p n_envs envs on @p device, env i seeded
 * tg_env_seed(@p base_seed, i), every epoch 0.  Blocks until it is on the
 * device.
 * @param device    CUDA device ordinal
 * @param n_envs    the number of envs, at least 1
 * @param base_seed the seed every env's seed derives from
 * @param error #TG_ARGUMENT_ERROR_EMPTY (zero envs),
 *              #TG_ARGUMENT_ERROR_OUT_OF_RANGE (no such device), #TG_CUDA_ERROR
 * @return a new state (transfer full), or NULL
 */
TgSeedState *tg_seed_state_new (int device, guint n_envs, guint64 base_seed,
                                GError **error);

/**
 * Creates the state from explicit seeds (@p n_envs values, host memory),
 * every epoch 0.  Blocks until it is on the device.
 * @param device CUDA device ordinal
 * @param n_envs number of envs, at least 1
 * @param seeds  @p n_envs seeds in host memory (copied)
 * @param error  as tg_seed_state_new()
 * @return a new state (transfer full), or NULL
 */
TgSeedState *tg_seed_state_new_from_array (int device, guint n_envs,
                                           const guint64 *seeds, GError **error);

/**
 * Adds a reference.  Thread-safe.
 * @param state a seed state
 * @return @p state (the new reference: transfer full)
 */
TgSeedState *tg_seed_state_ref (TgSeedState *state);
/**
 * Drops a reference; the last one frees the device memory, so no graph that
 * recorded the state may run afterwards.
 * @param state a seed state (transfer full: the reference is consumed)
 */
void tg_seed_state_unref (TgSeedState *state);

/**
 * @param state a seed state
 * @return the number of envs
 */
guint tg_seed_state_get_n_envs (const TgSeedState *state);
/**
 * @param state a seed state
 * @return the state's CUDA device ordinal
 */
int tg_seed_state_get_device (const TgSeedState *state);
/**
 * @param state a seed state
 * @return the device array of seeds (n_envs `guint64`; transfer none), fixed
 *         for the state's life
 */
const guint64 *tg_seed_state_get_seeds (const TgSeedState *state);
/**
 * @param state a seed state
 * @return the device array of epochs (n_envs `guint32`; transfer none), fixed
 *         for the state's life
 */
guint32 *tg_seed_state_get_epochs (const TgSeedState *state);

/**
 * Sets the seeds of the envs @p env_ids (host arrays of @p n values) and
 * resets their epochs to 0; @p n may be 0.  Blocks; not for use inside a
 * capture.  The ids are checked on the host before the device is touched:
 * on error nothing changed.
 * @param state   the state
 * @param env_ids @p n distinct env ids, each below n_envs (host memory)
 * @param seeds   their new seeds (host memory)
 * @param n       the number of envs to set
 * @param error #TG_ARGUMENT_ERROR_OUT_OF_RANGE (an id >= n_envs),
 *              #TG_ARGUMENT_ERROR_DUPLICATE (an id twice), #TG_CUDA_ERROR
 * @return TRUE when the new seeds are on the device
 */
gboolean tg_seed_state_set_seeds (TgSeedState *state, const guint *env_ids,
                                  const guint64 *seeds, guint n, GError **error);

/**
 * Enqueues: the epoch of every env whose mask byte is non-zero grows by one
 * (wrapping from 2^32 - 1 to 0, so tg_effective_seed() repeats after 2^32
 * advances of one env).  A kernel on @p stream, so it can be recorded into a
 * graph and run at every replay; the mask is read when the kernel runs.
 * @param state       the state
 * @param stream      stream, or NULL (see @ref seeds)
 * @param device_mask one byte per env in device memory, or NULL for all envs
 * @param mask_len    the mask's length in bytes (ignored when it is NULL)
 * @param error #TG_ARGUMENT_ERROR_SIZE_MISMATCH (mask_len != n_envs), #TG_CUDA_ERROR
 * @return TRUE when the work is enqueued
 */
gboolean tg_seed_state_advance (TgSeedState *state, cudaStream_t stream,
                                const guint8 *device_mask, gsize mask_len,
                                GError **error);

/**
 * Enqueues: every epoch becomes 0.  Capturable.
 * @param state  a seed state
 * @param stream stream, or NULL (see @ref seeds)
 * @param error  #TG_CUDA_ERROR
 * @return TRUE when the work is enqueued
 */
gboolean tg_seed_state_reset_epochs (TgSeedState *state, cudaStream_t stream,
                                     GError **error);

/**
 * Enqueues: @p device_out[i] = tg_effective_seed(seed[i], epoch[i]) for every env.
 * Capturable.
 * @param state      the state
 * @param stream     stream, or NULL (see @ref seeds)
 * @param device_out device memory of the state's device
 * @param out_len    the length of @p device_out in elements
 * @param error #TG_ARGUMENT_ERROR_SIZE_MISMATCH (out_len < n_envs), #TG_CUDA_ERROR
 * @return TRUE when the work is enqueued
 */
gboolean tg_seed_state_fill_effective (TgSeedState *state, cudaStream_t stream,
                                       guint64 *device_out, gsize out_len,
                                       GError **error);

/**
 * Copies seeds and epochs to host arrays of n_envs elements (either may be
 * NULL), after the work enqueued on the state's default stream.  Blocks.
 * @param state  a seed state
 * @param seeds  (out, optional) host array of n_envs `guint64`
 * @param epochs (out, optional) host array of n_envs `guint32`
 * @param error  #TG_CUDA_ERROR
 * @return TRUE when the arrays are filled
 */
gboolean tg_seed_state_read (TgSeedState *state, guint64 *seeds, guint32 *epochs,
                             GError **error);

/**
 * Serializes the state to host bytes for a checkpoint.  Format (little
 * endian): "TGSEEDS\0", guint32 version (1), guint32 n_envs, n_envs guint64
 * seeds, n_envs guint32 epochs.  Blocks.
 * @param state a seed state
 * @param error #TG_CUDA_ERROR
 * @return the bytes (transfer full), or NULL with #TG_CUDA_ERROR
 */
GBytes *tg_seed_state_snapshot (TgSeedState *state, GError **error);

/**
 * Restores a snapshot taken from a state of the same size.  Blocks.  The
 * whole snapshot is checked before anything is written: on an argument error
 * nothing changed.
 * @param state    the state
 * @param snapshot bytes from tg_seed_state_snapshot() (transfer none)
 * @param error #TG_ARGUMENT_ERROR_VERSION (not a snapshot, or another version),
 *              #TG_ARGUMENT_ERROR_SIZE_MISMATCH (another number of envs, or
 *              truncated), #TG_CUDA_ERROR
 * @return TRUE when the state holds the snapshot's seeds and epochs
 */
gboolean tg_seed_state_restore (TgSeedState *state, GBytes *snapshot, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TgSeedState, tg_seed_state_unref)

/** @} */

G_END_DECLS

#endif /* TRACKGEN_SEEDS_H */
