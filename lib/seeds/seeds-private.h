/* seeds-private.h: launchers of the seed-state kernels (seeds-kernels.cu) and
 * the pure host checks of seeds.c, which the tests call directly.  Plain C.
 * Private to libtrackgen: shipped by make dist, never installed. */
#ifndef TG_SEEDS_PRIVATE_H
#define TG_SEEDS_PRIVATE_H

#include <trackgen/seeds.h>

G_BEGIN_DECLS

/* seeds[i] = tg_env_seed(base_seed, first + i); epochs[i] = 0. */
cudaError_t tg__launch_seeds_init (cudaStream_t stream, guint64 *seeds, guint32 *epochs,
                                   guint n, guint first, guint64 base_seed);

/* seeds[ids[k]] = values[k]; epochs[ids[k]] = 0, for k < n and ids[k] <
 * n_envs (ids read on the device). */
cudaError_t tg__launch_seeds_scatter (cudaStream_t stream, guint64 *seeds,
                                      guint32 *epochs, guint n_envs, const guint32 *ids,
                                      const guint64 *values, guint n);

/* epochs[i] = 0 where mask == NULL or mask[i] != 0. */
cudaError_t tg__launch_seeds_reset (cudaStream_t stream, guint32 *epochs,
                                    const guint8 *mask, guint n);

/* epochs[i] += (mask == NULL || mask[i] != 0), wrapping. */
cudaError_t tg__launch_seeds_advance (cudaStream_t stream, guint32 *epochs,
                                      const guint8 *mask, guint n);

/* out[i] = tg_effective_seed(seeds[i], epochs[i]). */
cudaError_t tg__launch_seeds_fill (cudaStream_t stream, guint64 *out,
                                   const guint64 *seeds, const guint32 *epochs,
                                   guint n);

/* Snapshot format (see tg_seed_state_snapshot): a header (16 bytes in
 * version 1, 24 in version 2, which adds the first env and padding), then the
 * seeds, then the epochs, all little endian. */
#define TG__SEEDS_MAGIC "TGSEEDS" /* 8 bytes with its NUL */
#define TG__SEEDS_VERSION 2u
#define TG__SEEDS_HEADER_SIZE 24u
#define TG__SEEDS_V1_HEADER_SIZE 16u

/* The size of a snapshot of the current version for @n_envs envs. */
gsize tg__seeds_snapshot_size (guint n_envs);

/* Writes the header for envs [@first_env, @first_env + @n_envs) into @dst
 * (TG__SEEDS_HEADER_SIZE bytes). */
void tg__seeds_snapshot_write_header (guint8 *dst, guint n_envs, guint first_env);

/* Checks that @data (@size bytes) is a snapshot (version 1 or 2) of exactly
 * envs [@first_env, @first_env + @n_envs): TG_ARGUMENT_ERROR_VERSION or
 * _SIZE_MISMATCH otherwise.  On success *@header_size is where the seeds
 * start. */
gboolean tg__seeds_snapshot_check (gconstpointer data, gsize size, guint n_envs,
                                   guint first_env, gsize *header_size, GError **error);

/* Checks env ids for set_seeds: each below @n_envs (OUT_OF_RANGE), none
 * twice (DUPLICATE). */
gboolean tg__seeds_check_ids (const guint *ids, guint n, guint n_envs, GError **error);

/* Checks a device buffer's length against the number of envs: equal, or at
 * least, by @at_least (SIZE_MISMATCH naming @what, expected and given). */
gboolean tg__seeds_check_len (const char *what, gsize len, guint n_envs,
                              gboolean at_least, GError **error);

G_END_DECLS

#endif
