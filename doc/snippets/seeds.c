/* SPDX-License-Identifier: Apache-2.0 */
/* seeds.c: seeds and epochs (doc/seeds.md). */
#include "snippets.h"

//! [new]
TgSeedState *
seeds_for_sim (guint n_envs, GError **error)
{
  /* Env i is seeded tg_env_seed (20240607, i); every epoch starts at 0. */
  return tg_seed_state_new (0, n_envs, G_GUINT64_CONSTANT (20240607), error);
}
//! [new]

//! [shards]
gboolean
seeds_for_devices (int n_devices, guint envs_per_device, guint64 base_seed,
                   TgSeedState **states, GError **error)
{
  /* Device d holds global envs [d * per, (d + 1) * per), seeded by their
   * global index: env e gets the same seed, so the same tracks, however the
   * population is split. */
  for (int d = 0; d < n_devices; d++)
    if ((states[d] = tg_seed_state_new_shard (d, (guint)d * envs_per_device,
                                              envs_per_device, base_seed, error))
        == NULL)
      return FALSE;
  return TRUE;
}
//! [shards]

//! [key-of]
gboolean
seeds_key_of (TgSeedState *seeds, cudaStream_t stream, guint env, guint64 *key,
              GError **error)
{
  guint n = tg_seed_state_get_n_envs (seeds);
  g_autofree guint64 *seed = g_new (guint64, n);
  g_autofree guint32 *epoch = g_new (guint32, n);

  /* Ordered on @stream: the read waits for the advances enqueued there (the
   * stream that replays the step graph), then for the copy. */
  if (env >= n || !tg_seed_state_read (seeds, stream, seed, epoch, error))
    return FALSE;
  /* The key of the env's current track, computed on the host exactly as the
   * device computed it: (seed, epoch) alone reproduce the generation. */
  *key = tg_effective_seed (seed[env], epoch[env]);
  return TRUE;
}
//! [key-of]

//! [advance-fill]
gboolean
seeds_step (TgSeedState *seeds, cudaStream_t stream, const guint8 *device_done,
            guint64 *device_keys, GError **error)
{
  guint n = tg_seed_state_get_n_envs (seeds);

  /* The envs whose byte is set start a new generation; every env's key is
   * written from its epoch after that.  One kernel, capturable. */
  return tg_seed_state_advance_fill (seeds, stream, device_done, n, device_keys, n,
                                     error);
}
//! [advance-fill]

//! [reseed-device]
gboolean
seeds_reseed_in_graph (TgSeedState *seeds, cudaStream_t capturing,
                       const guint32 *device_env_ids, const guint64 *device_seeds,
                       guint n, GError **error)
{
  /* Recorded once; at every replay the kernel reads n ids and seeds from the
   * device arrays, as earlier work of the same replay wrote them.  An id not
   * below n_envs (G_MAXUINT32, say) is skipped: fewer than n envs are
   * reseeded by filling the rest with it. */
  return tg_seed_state_set_seeds_device (seeds, capturing, device_env_ids, device_seeds,
                                         n, error);
}
//! [reseed-device]

//! [checkpoint]
gboolean
seeds_checkpoint (TgSeedState *seeds, cudaStream_t stream, const char *path,
                  GError **error)
{
  g_autoptr (GBytes) snapshot = tg_seed_state_snapshot (seeds, stream, error);
  gsize size = 0;
  gconstpointer data;

  if (snapshot == NULL)
    return FALSE;
  data = g_bytes_get_data (snapshot, &size);
  return g_file_set_contents (path, data, (gssize)size, error);
}

gboolean
seeds_resume (TgSeedState *seeds, cudaStream_t stream, const char *path, GError **error)
{
  g_autofree char *data = NULL;
  g_autoptr (GBytes) snapshot = NULL;
  gsize size = 0;

  if (!g_file_get_contents (path, &data, &size, error))
    return FALSE;
  snapshot = g_bytes_new_take (g_steal_pointer (&data), size);
  /* Other envs, or not a snapshot: an error, the state unchanged. */
  return tg_seed_state_restore (seeds, stream, snapshot, error);
}
//! [checkpoint]
