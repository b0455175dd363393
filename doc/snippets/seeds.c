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

//! [key-of]
gboolean
seeds_key_of (TgSeedState *seeds, guint env, guint64 *key, GError **error)
{
  guint n = tg_seed_state_get_n_envs (seeds);
  g_autofree guint64 *seed = g_new (guint64, n);
  g_autofree guint32 *epoch = g_new (guint32, n);

  if (env >= n || !tg_seed_state_read (seeds, seed, epoch, error))
    return FALSE;
  /* The key of the env's current track, computed on the host exactly as the
   * device computed it: (seed, epoch) alone reproduce the generation. */
  *key = tg_effective_seed (seed[env], epoch[env]);
  return TRUE;
}
//! [key-of]

//! [checkpoint]
gboolean
seeds_checkpoint (TgSeedState *seeds, const char *path, GError **error)
{
  g_autoptr (GBytes) snapshot = tg_seed_state_snapshot (seeds, error);
  gsize size = 0;
  gconstpointer data;

  if (snapshot == NULL)
    return FALSE;
  data = g_bytes_get_data (snapshot, &size);
  return g_file_set_contents (path, data, (gssize)size, error);
}

gboolean
seeds_resume (TgSeedState *seeds, const char *path, GError **error)
{
  g_autofree char *data = NULL;
  g_autoptr (GBytes) snapshot = NULL;
  gsize size = 0;

  if (!g_file_get_contents (path, &data, &size, error))
    return FALSE;
  snapshot = g_bytes_new_take (g_steal_pointer (&data), size);
  /* Another number of envs, or not a snapshot: an error, the state unchanged. */
  return tg_seed_state_restore (seeds, snapshot, error);
}
//! [checkpoint]
