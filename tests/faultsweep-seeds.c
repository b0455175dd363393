/* SPDX-License-Identifier: Apache-2.0 */
/* faultsweep-seeds.c: the seeds scenario.  Every call of a seed state, on
 * the scenario's stream: epochs advanced and reset through masks, seeds set
 * from the host and from the device, effective seeds filled, read back,
 * snapshotted and restored; and a shard.  Each result checked on the host. */
#include "config.h"
#include "faultsweep.h"

#define ENVS 64
#define SHARD_FIRST 16 /* the shard's first global env */
#define SHARD_ENVS 32
#define BASE G_GUINT64_CONSTANT (0x5EED0123456789AB)

/* The device inputs and outputs, in one allocation. */
typedef struct
{
  guint8 even[ENVS];   /* advance mask: the even envs */
  guint8 fourth[ENVS]; /* reset mask: every fourth env */
  guint32 ids[2];      /* set_seeds_device: env 7, and one out of range */
  guint64 seeds[2];
  guint64 effective[ENVS];
} Dev;

static const guint host_ids[2] = { 3, 5 };
static const guint64 host_seeds[2] = { 0xA11CE, 0xB0B };

/* What the state holds after the calls of the scenario. */
static void
expect (guint64 *seeds, guint32 *epochs, const Dev *init)
{
  for (guint i = 0; i < ENVS; i++)
    {
      seeds[i] = tg_env_seed (BASE, i);
      /* All advanced once, the even ones twice, every fourth reset. */
      epochs[i] = i % 4 == 0 ? 0 : i % 2 == 0 ? 2 : 1;
    }
  for (guint k = 0; k < G_N_ELEMENTS (host_ids); k++)
    {
      seeds[host_ids[k]] = host_seeds[k];
      epochs[host_ids[k]] = 0;
    }
  seeds[init->ids[0]] = init->seeds[0];
  epochs[init->ids[0]] = 0;
}

/* Reads @n_envs seeds and epochs back and compares them with @seeds and
 * @epochs. */
static gboolean
check_state (TgSeedState *state, cudaStream_t stream, guint n_envs,
             const guint64 *seeds, const guint32 *epochs, const char *what,
             GError **error)
{
  g_autofree guint64 *got_seeds = g_new (guint64, n_envs);
  g_autofree guint32 *got_epochs = g_new (guint32, n_envs);
  g_autofree char *what_seeds = g_strdup_printf ("seeds %s", what);
  g_autofree char *what_epochs = g_strdup_printf ("epochs %s", what);

  return tg_seed_state_read (state, stream, got_seeds, got_epochs, error)
         && fs_check_equal (what_seeds, got_seeds, seeds, n_envs * sizeof *seeds, error)
         && fs_check_equal (what_epochs, got_epochs, epochs, n_envs * sizeof *epochs,
                            error);
}

static gboolean
check_effective (const Dev *dev, const guint64 *seeds, const guint32 *epochs,
                 GError **error)
{
  guint64 got[ENVS], expected[ENVS];

  tg_test_download (got, dev->effective, sizeof got);
  for (guint i = 0; i < ENVS; i++)
    expected[i] = tg_effective_seed (seeds[i], epochs[i]);
  return fs_check_equal ("effective seeds", got, expected, sizeof got, error);
}

/* A shard's envs keep their global seeds. */
static gboolean
check_shard (TgSeedState *shard, cudaStream_t stream, GError **error)
{
  guint64 seeds[SHARD_ENVS];
  guint32 epochs[SHARD_ENVS];

  for (guint i = 0; i < SHARD_ENVS; i++)
    {
      seeds[i] = tg_env_seed (BASE, SHARD_FIRST + i);
      epochs[i] = 1;
    }
  return tg_seed_state_advance (shard, stream, NULL, 0, error)
         && check_state (shard, stream, SHARD_ENVS, seeds, epochs, "of the shard",
                         error);
}

gboolean
fs_scenario_seeds (FsCtx *ctx, GError **error)
{
  Dev init = { .ids = { 7, ENVS + 100 }, .seeds = { 0xC0FFEE, 0xDEAD } };
  Dev *dev = tg_test_device_alloc (sizeof (Dev));
  cudaStream_t stream = ctx->stream;
  TgSeedState *state = NULL, *shard = NULL;
  GBytes *snapshot = NULL;
  guint64 seeds[ENVS];
  guint32 epochs[ENVS];
  gboolean ok = FALSE;

  for (guint i = 0; i < ENVS; i++)
    {
      init.even[i] = i % 2 == 0;
      init.fourth[i] = i % 4 == 0;
    }
  tg_test_upload (dev, &init, sizeof init);
  expect (seeds, epochs, &init);

  fs_step (ctx, "new");
  if ((state = tg_seed_state_new (0, ENVS, BASE, error)) == NULL
      || (shard = tg_seed_state_new_shard (0, SHARD_FIRST, SHARD_ENVS, BASE, error))
             == NULL)
    goto out;
  fs_step (ctx, "advance, reset");
  if (!tg_seed_state_advance (state, stream, NULL, 0, error)
      || !tg_seed_state_advance (state, stream, dev->even, ENVS, error)
      || !tg_seed_state_reset_epochs (state, stream, dev->fourth, ENVS, error))
    goto out;
  fs_step (ctx, "set seeds");
  if (!tg_seed_state_set_seeds (state, stream, host_ids, host_seeds,
                                G_N_ELEMENTS (host_ids), error)
      || !tg_seed_state_set_seeds_device (state, stream, dev->ids, dev->seeds,
                                          G_N_ELEMENTS (init.ids), error))
    goto out;
  fs_step (ctx, "fill, read");
  if (!tg_seed_state_fill_effective (state, stream, dev->effective, ENVS, error)
      || !check_state (state, stream, ENVS, seeds, epochs, "after the updates", error)
      || !check_effective (dev, seeds, epochs, error))
    goto out;
  fs_step (ctx, "snapshot, restore");
  if ((snapshot = tg_seed_state_snapshot (state, stream, error)) == NULL
      || !tg_seed_state_advance (state, stream, NULL, 0, error)
      || !tg_seed_state_restore (state, stream, snapshot, error)
      || !check_state (state, stream, ENVS, seeds, epochs, "after a restore", error))
    goto out;
  fs_step (ctx, "shard");
  ok = check_shard (shard, stream, error);

out:
  /* A failed call may leave work in flight on the state and on @dev. */
  (void)FS_CUDA (cudaStreamSynchronize (stream), NULL);
  fs_step (ctx, "unref");
  g_clear_pointer (&snapshot, g_bytes_unref);
  g_clear_pointer (&state, tg_seed_state_unref);
  g_clear_pointer (&shard, tg_seed_state_unref);
  tg_test_device_free (dev);
  return ok;
}
