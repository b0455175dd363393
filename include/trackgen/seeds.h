/* SPDX-License-Identifier: Apache-2.0 */
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
 * epoch through tg_effective_seed() (trackgen/kernel.h), so any track can be
 * regenerated later from (seed, epoch) alone.  A #TgSeedState keeps both for
 * E envs on the device; advancing the epochs of the envs in a device mask is
 * a kernel, so regeneration and auto-reset happen inside a graph.  Its device
 * pointers stay fixed for its lifetime, since graphs bake them in.
 *
 * Shards: a state may hold envs [first, first + E) of a larger population
 * (tg_seed_state_new_shard()), one state per device.  Envs keep their global
 * identity: env e's seed is tg_env_seed(base_seed, e) whichever state holds
 * it, so its track at epoch k is the same however the population is sharded.
 * Env ids passed to a state are local: 0 to E - 1.
 *
 * Streams, as everywhere in libtrackgen (see @ref exec): NULL is CUDA's
 * legacy default stream, #TG_STREAM_AUTO resolves by the stream rule of
 * #TgCallStream (a registered foreign capture's stream, else the ambient
 * stream the `_full` variants are given, else TrackGen's default stream).  Every
 * function is ordered on the stream it is given, after what the caller enqueued there.
 * The enqueued ones (advance, reset_epochs, set_seeds_device, fill_effective,
 * advance_fill) can be captured; the blocking ones (set_seeds, read,
 * snapshot, restore) wait for their stream and refuse a capturing one.  Like
 * a producer run, every one refuses a stream whose capture is invalidated
 * (#TG_CAPTURE_ERROR_FAILED) and the legacy default stream while a blocking
 * stream captures (#TG_CAPTURE_ERROR_NOT_CAPTURABLE: work launched there
 * would invalidate that capture), before anything is enqueued.  Every
 * function restores the caller's current device.
 * @{
 */

/** Per-env seeds and epochs on one device; reference-counted. */
typedef struct _TgSeedState TgSeedState;

/** The most envs one #TgSeedState holds, 2^31 - 1 (24 GiB of seeds and
 * epochs): a count past it is far more often a negative number passed as
 * unsigned than a population, which shards over several states. */
#define TG_SEED_STATE_MAX_ENVS ((guint)G_MAXINT32)

/**
 * Creates the state of @p n_envs envs on @p device, env i seeded
 * tg_env_seed(@p base_seed, i), every epoch 0.  Blocks until it is on the
 * device, on TrackGen's default stream (never a registered capture's, never
 * the caller's), in relaxed capture mode: it may be called during a capture
 * in any mode, on the capturing thread or another, and leaves that capture
 * intact (nothing of it is recorded).
 * @param device    CUDA device ordinal
 * @param n_envs    the number of envs, 1 to #TG_SEED_STATE_MAX_ENVS
 * @param base_seed the seed every env's seed derives from
 * @param error #TG_ARGUMENT_ERROR_EMPTY (zero envs),
 *              #TG_ARGUMENT_ERROR_OUT_OF_RANGE (no such device, or more than
 *              #TG_SEED_STATE_MAX_ENVS envs), #TG_CUDA_ERROR
 * @return a new state (transfer full), or NULL
 */
TgSeedState *tg_seed_state_new (int device, guint n_envs, guint64 base_seed,
                                GError **error);

/**
 * Creates the state of envs [@p first_env, @p first_env + @p n_envs) of a
 * population seeded from @p base_seed: local env i is global env
 * @p first_env + i, seeded tg_env_seed(@p base_seed, @p first_env + i), every
 * epoch 0.  A population sharded over devices this way generates the same
 * tracks as one state of all its envs.  Blocks.
 * @param device    CUDA device ordinal
 * @param first_env the global index of the first env
 * @param n_envs    the number of envs, 1 to #TG_SEED_STATE_MAX_ENVS, with
 *                  @p first_env + @p n_envs at most 2^32
 * @param base_seed the population's base seed
 * @param error as tg_seed_state_new(), and #TG_ARGUMENT_ERROR_OUT_OF_RANGE
 *              when the envs pass global index 2^32 - 1
 * @return a new state (transfer full), or NULL
 */
TgSeedState *tg_seed_state_new_shard (int device, guint first_env, guint n_envs,
                                      guint64 base_seed, GError **error);

/**
 * Creates the state from explicit seeds (@p n_envs values, host memory),
 * every epoch 0.  Blocks until it is on the device.
 * @param device CUDA device ordinal
 * @param n_envs number of envs, 1 to #TG_SEED_STATE_MAX_ENVS
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
 * @return the global index of its first env (0 unless made by
 *         tg_seed_state_new_shard())
 */
guint tg_seed_state_get_first_env (const TgSeedState *state);
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
 *         for the state's life; kernels may write it
 */
guint32 *tg_seed_state_get_epochs (TgSeedState *state);

/**
 * Sets the seeds of the envs @p env_ids (host arrays of @p n values) and
 * resets their epochs to 0; @p n may be 0.  Ordered on @p stream, and waits
 * for it.  The ids are checked on the host before the device is touched: on
 * error nothing changed.
 * @param state   the state
 * @param stream  a stream, NULL or #TG_STREAM_AUTO; not capturing
 * @param env_ids @p n distinct local env ids, each below n_envs (host memory)
 * @param seeds   their new seeds (host memory)
 * @param n       the number of envs to set
 * @param error #TG_ARGUMENT_ERROR_OUT_OF_RANGE (an id >= n_envs),
 *              #TG_ARGUMENT_ERROR_DUPLICATE (an id twice),
 *              #TG_CAPTURE_ERROR_NOT_CAPTURABLE (a capturing stream),
 *              #TG_CUDA_ERROR
 * @return TRUE when the new seeds are on the device
 */
gboolean tg_seed_state_set_seeds (TgSeedState *state, cudaStream_t stream,
                                  const guint *env_ids, const guint64 *seeds, guint n,
                                  GError **error);

/**
 * Enqueues: env `device_env_ids[k]` gets seed `device_seeds[k]` and epoch 0,
 * for k < @p n.  Both arrays are read on the device when the kernel runs, so
 * this reseeds inside a graph: record it once, write new ids and seeds into
 * the arrays before each replay.  Ids not below n_envs are skipped; when an
 * id appears twice, which of its seeds wins is unspecified.  Neither array
 * may share memory with the state's own seeds or epochs, which the kernel
 * writes while it reads them.
 * @param state          the state
 * @param stream         a stream, NULL or #TG_STREAM_AUTO
 * @param device_env_ids @p n `guint32` local env ids in device memory
 * @param device_seeds   @p n `guint64` seeds in device memory
 * @param n              the number of entries (0: nothing is enqueued)
 * @param error #TG_ARGUMENT_ERROR_INVALID, _DEVICE_MISMATCH or _SIZE_MISMATCH
 *              (arrays that are not @p n elements of the state's device
 *              memory), #TG_ARGUMENT_ERROR_INVALID also for an array that
 *              overlaps the state's own seeds or epochs,
 *              #TG_CAPTURE_ERROR (see @ref seeds), #TG_CUDA_ERROR
 * @return TRUE when the work is enqueued
 */
gboolean tg_seed_state_set_seeds_device (TgSeedState *state, cudaStream_t stream,
                                         const guint32 *device_env_ids,
                                         const guint64 *device_seeds, guint n,
                                         GError **error);

/**
 * Enqueues: the epoch of every env whose mask byte is non-zero grows by one
 * (wrapping from 2^32 - 1 to 0, so tg_effective_seed() repeats after 2^32
 * advances of one env).  A kernel on @p stream, so it can be recorded into a
 * graph and run at every replay; the mask is read when the kernel runs.
 * @param state       the state
 * @param stream      a stream, NULL or #TG_STREAM_AUTO
 * @param device_mask one byte per env in device memory of the state's
 *                    device, or NULL for all envs
 * @param mask_len    the mask's length in bytes (ignored when it is NULL)
 * @param error #TG_ARGUMENT_ERROR_SIZE_MISMATCH (mask_len != n_envs, or a
 *              mask allocation shorter than that), #TG_ARGUMENT_ERROR_INVALID
 *              (not device memory, or a mask that overlaps the state's own
 *              seeds or epochs), #TG_ARGUMENT_ERROR_DEVICE_MISMATCH,
 *              #TG_CAPTURE_ERROR (see @ref seeds), #TG_CUDA_ERROR
 * @return TRUE when the work is enqueued
 */
gboolean tg_seed_state_advance (TgSeedState *state, cudaStream_t stream,
                                const guint8 *device_mask, gsize mask_len,
                                GError **error);

/**
 * Enqueues: the epoch of every env whose mask byte is non-zero becomes 0
 * (all envs when the mask is NULL).  Capturable, like tg_seed_state_advance().
 * @param state       a seed state
 * @param stream      a stream, NULL or #TG_STREAM_AUTO
 * @param device_mask one byte per env in device memory, or NULL for all envs
 * @param mask_len    the mask's length in bytes (ignored when it is NULL)
 * @param error       as tg_seed_state_advance()
 * @return TRUE when the work is enqueued
 */
gboolean tg_seed_state_reset_epochs (TgSeedState *state, cudaStream_t stream,
                                     const guint8 *device_mask, gsize mask_len,
                                     GError **error);

/**
 * Enqueues: @p device_out[i] = tg_effective_seed(seed[i], epoch[i]) for every env.
 * Capturable.
 * @param state      the state
 * @param stream     a stream, NULL or #TG_STREAM_AUTO
 * @param device_out device memory of the state's device
 * @param out_len    the length of @p device_out in elements
 * @param error #TG_ARGUMENT_ERROR_SIZE_MISMATCH (out_len < n_envs, or an
 *              allocation shorter than n_envs elements),
 *              #TG_ARGUMENT_ERROR_INVALID (not device memory, or an output
 *              that overlaps the state's own seeds or epochs),
 *              #TG_ARGUMENT_ERROR_DEVICE_MISMATCH,
 *              #TG_CAPTURE_ERROR (see @ref seeds), #TG_CUDA_ERROR
 * @return TRUE when the work is enqueued
 */
gboolean tg_seed_state_fill_effective (TgSeedState *state, cudaStream_t stream,
                                       guint64 *device_out, gsize out_len,
                                       GError **error);

/**
 * Enqueues tg_seed_state_advance() then tg_seed_state_fill_effective() as
 * one kernel: the epoch of every env whose mask byte is non-zero grows by
 * one, then @p device_out[i] = tg_effective_seed(seed[i], epoch[i]) for
 * every env, from the new epochs.  The same results as the two calls, with
 * one launch instead of two and each epoch read once (25 bytes an env
 * instead of 29): a simulator step's seed work at small sizes, where the
 * second launch costs more than the bytes.  Capturable.
 * @param state       the state
 * @param stream      a stream, NULL or #TG_STREAM_AUTO
 * @param device_mask one byte per env in device memory of the state's
 *                    device, or NULL for all envs
 * @param mask_len    the mask's length in bytes (ignored when it is NULL)
 * @param device_out  device memory of the state's device
 * @param out_len     the length of @p device_out in elements
 * @param error as tg_seed_state_advance() and tg_seed_state_fill_effective();
 *              #TG_ARGUMENT_ERROR_INVALID also for a mask that overlaps the
 *              output
 * @return TRUE when the work is enqueued
 */
gboolean tg_seed_state_advance_fill (TgSeedState *state, cudaStream_t stream,
                                     const guint8 *device_mask, gsize mask_len,
                                     guint64 *device_out, gsize out_len,
                                     GError **error);

/**
 * Copies seeds and epochs to host arrays of n_envs elements (either may be
 * NULL), ordered on @p stream after what was enqueued there.  Blocks.
 * @param state  a seed state
 * @param stream a stream, NULL or #TG_STREAM_AUTO; not capturing
 * @param seeds  (out, optional) host array of n_envs `guint64`
 * @param epochs (out, optional) host array of n_envs `guint32`
 * @param error  #TG_CAPTURE_ERROR_NOT_CAPTURABLE (a capturing stream),
 *               #TG_CUDA_ERROR
 * @return TRUE when the arrays are filled
 */
gboolean tg_seed_state_read (TgSeedState *state, cudaStream_t stream, guint64 *seeds,
                             guint32 *epochs, GError **error);

/**
 * Sets the seed and the epoch of every env from host arrays of n_envs
 * elements (either may be NULL: that half is kept), ordered on @p stream
 * after what was enqueued there: to put envs back at given (seed, epoch)
 * pairs, for example to regenerate given tracks standalone.  Blocks.  The
 * converse of tg_seed_state_read().
 * @param state  a seed state
 * @param stream a stream, NULL or #TG_STREAM_AUTO; not capturing
 * @param seeds  (optional) host array of n_envs `guint64`
 * @param epochs (optional) host array of n_envs `guint32`
 * @param error  #TG_CAPTURE_ERROR_NOT_CAPTURABLE (a capturing stream),
 *               #TG_CUDA_ERROR
 * @return TRUE when the state holds the arrays' values
 */
gboolean tg_seed_state_write (TgSeedState *state, cudaStream_t stream,
                              const guint64 *seeds, const guint32 *epochs,
                              GError **error);

/**
 * Serializes the state to host bytes for a checkpoint, ordered on @p stream.
 * Format (little endian): "TGSEEDS\0", guint32 version (2), guint32 n_envs,
 * guint32 first_env, guint32 0, n_envs guint64 seeds, n_envs guint32 epochs.
 * Blocks.
 * @param state  a seed state
 * @param stream a stream, NULL or #TG_STREAM_AUTO; not capturing
 * @param error  #TG_CAPTURE_ERROR_NOT_CAPTURABLE, #TG_CUDA_ERROR
 * @return the bytes (transfer full), or NULL
 */
GBytes *tg_seed_state_snapshot (TgSeedState *state, cudaStream_t stream,
                                GError **error);

/**
 * Restores a snapshot taken from a state of the same envs (same n_envs and
 * first env; version-1 snapshots of 0.1 have first env 0), ordered on
 * @p stream.  Blocks.  The whole snapshot is checked before anything is
 * written: on an argument error nothing changed.
 * @param state    the state
 * @param stream   a stream, NULL or #TG_STREAM_AUTO; not capturing
 * @param snapshot bytes from tg_seed_state_snapshot() (transfer none)
 * @param error #TG_ARGUMENT_ERROR_VERSION (not a snapshot, or another version),
 *              #TG_ARGUMENT_ERROR_SIZE_MISMATCH (other envs, or truncated),
 *              #TG_CAPTURE_ERROR_NOT_CAPTURABLE, #TG_CUDA_ERROR
 * @return TRUE when the state holds the snapshot's seeds and epochs
 */
gboolean tg_seed_state_restore (TgSeedState *state, cudaStream_t stream,
                                GBytes *snapshot, GError **error);

/**
 * @name With an ambient stream
 * The calls above with the call's stream as a framework's binding passes it
 * (#TgCallStream): a call that names no stream follows the stream rule, and
 * one that waits for its stream (set_seeds, read, write, snapshot, restore)
 * never runs beside a capture in progress on the ambient stream
 * (#TG_STATE_ERROR_POLICY).  Each takes what its plain call takes, and
 * @p call instead of the stream; the plain call is its variant with
 * #TG_CALL_STREAM(stream).
 * @{
 */
/** tg_seed_state_set_seeds() with an ambient stream. */
gboolean tg_seed_state_set_seeds_full (TgSeedState *state, const TgCallStream *call,
                                       const guint *env_ids, const guint64 *seeds,
                                       guint n, GError **error);
/** tg_seed_state_set_seeds_device() with an ambient stream. */
gboolean tg_seed_state_set_seeds_device_full (TgSeedState *state,
                                              const TgCallStream *call,
                                              const guint32 *device_env_ids,
                                              const guint64 *device_seeds, guint n,
                                              GError **error);
/** tg_seed_state_advance() with an ambient stream. */
gboolean tg_seed_state_advance_full (TgSeedState *state, const TgCallStream *call,
                                     const guint8 *device_mask, gsize mask_len,
                                     GError **error);
/** tg_seed_state_reset_epochs() with an ambient stream. */
gboolean tg_seed_state_reset_epochs_full (TgSeedState *state, const TgCallStream *call,
                                          const guint8 *device_mask, gsize mask_len,
                                          GError **error);
/** tg_seed_state_fill_effective() with an ambient stream. */
gboolean tg_seed_state_fill_effective_full (TgSeedState *state,
                                            const TgCallStream *call,
                                            guint64 *device_out, gsize out_len,
                                            GError **error);
/** tg_seed_state_advance_fill() with an ambient stream. */
gboolean tg_seed_state_advance_fill_full (TgSeedState *state, const TgCallStream *call,
                                          const guint8 *device_mask, gsize mask_len,
                                          guint64 *device_out, gsize out_len,
                                          GError **error);
/** tg_seed_state_read() with an ambient stream. */
gboolean tg_seed_state_read_full (TgSeedState *state, const TgCallStream *call,
                                  guint64 *seeds, guint32 *epochs, GError **error);
/** tg_seed_state_write() with an ambient stream. */
gboolean tg_seed_state_write_full (TgSeedState *state, const TgCallStream *call,
                                   const guint64 *seeds, const guint32 *epochs,
                                   GError **error);
/** tg_seed_state_snapshot() with an ambient stream. */
GBytes *tg_seed_state_snapshot_full (TgSeedState *state, const TgCallStream *call,
                                     GError **error);
/** tg_seed_state_restore() with an ambient stream. */
gboolean tg_seed_state_restore_full (TgSeedState *state, const TgCallStream *call,
                                     GBytes *snapshot, GError **error);
/** @} */

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TgSeedState, tg_seed_state_unref)

/** @} */

G_END_DECLS

#endif /* TRACKGEN_SEEDS_H */
