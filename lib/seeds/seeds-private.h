/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-private.h: what the parts of lib/seeds share: the seed state and how
 * a call enters it (seeds.c), which its blocking calls (seeds-blocking.c) and
 * its enqueued ones (seeds-enqueued.c) use; the pure host checks of the seed
 * calls (seeds-check.c), which the tests call directly.  Private to
 * libtrackgen: shipped by make dist, never installed. */
#ifndef TG_SEEDS_PRIVATE_H
#define TG_SEEDS_PRIVATE_H

#include <trackgen/seeds.h>

#include "../exec/device-private.h"

G_BEGIN_DECLS

struct _TgSeedState
{
  gatomicrefcount ref;
  int device;
  guint n_envs;
  guint first_env; /* global index of env 0 */
  guint64 *seeds;  /* device; never reallocated: graphs bake the pointers in */
  guint32 *epochs; /* device; likewise */
};

/* Enters the state's device and resolves @call's stream by the stream rule,
 * like every call, then applies the policy table's rules for work that can
 * be captured: a broken capture and the legacy stream joined to a blocking
 * stream's capture (where a launch would invalidate it) are refused, as a
 * producer run refuses them.  With @blocking, a capturing stream is refused
 * too (a capturing ambient stream already by the rule): the call waits for
 * its stream.  NULL (and left) on error. */
cudaStream_t tg__seeds_state_enter (int device, const TgCallStream *call,
                                    gboolean blocking, TgDeviceGuard *guard,
                                    GError **error);

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
