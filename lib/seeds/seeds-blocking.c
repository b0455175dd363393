/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-blocking.c: the seed state's blocking calls (set_seeds, read, write,
 * snapshot, restore), ordered on the caller's stream and waiting for it;
 * each also in its plain form, with no ambient stream. */
#include "config.h"
#include "seeds-kernels-private.h"
#include "seeds-private.h"
#include "../exec/resource-private.h"

/* set_seeds hands the caller's guint ids to the kernel as guint32. */
G_STATIC_ASSERT (sizeof (guint) == sizeof (guint32));
G_STATIC_ASSERT (sizeof (TG__SEEDS_MAGIC) == 8);

/* ------------------------------------------------------------------------ */
/* Blocking operations: ordered on the caller's stream, waiting for it      */

gboolean
tg_seed_state_set_seeds_full (TgSeedState *state, const TgCallStream *call,
                              const guint *env_ids, const guint64 *seeds, guint n,
                              GError **error)
{
  cudaStream_t stream;
  TgDeviceGuard guard;
  guint64 *values = NULL;
  gboolean ok = FALSE;

  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (n == 0 || (env_ids != NULL && seeds != NULL), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!tg__seeds_check_ids (env_ids, n, state->n_envs, error))
    return FALSE;
  if (n == 0)
    return TRUE;
  if ((stream = tg__seeds_state_enter (state->device, call, TRUE, &guard, error))
      == NULL)
    return FALSE;
  /* One staging buffer: the values, then the ids (8-byte aligned after them). */
  if ((values
       = tg__device_alloc ((gsize)n * (sizeof (guint64) + sizeof (guint32)), error))
      == NULL)
    goto out;
  TG_CUDA_GOTO (cudaMemcpyAsync (values, seeds, n * sizeof (guint64),
                                 cudaMemcpyHostToDevice, stream),
                error, out);
  TG_CUDA_GOTO (cudaMemcpyAsync (values + n, env_ids, n * sizeof (guint32),
                                 cudaMemcpyHostToDevice, stream),
                error, out);
  /* The scatter is the only write to the state, after every check passed. */
  TG_CUDA_GOTO (tg__launch_seeds_scatter (stream, state->seeds, state->epochs,
                                          state->n_envs, (const guint32 *)(values + n),
                                          values, n),
                error, out);
  ok = tg__stream_synchronize (stream, error);
out:
  /* The staging buffer may still be read if an enqueue failed half-way. */
  if (!ok)
    (void)tg__stream_synchronize (stream, NULL);
  tg__device_free (values);
  tg__device_leave (&guard);
  return ok;
}

/* Copies seeds and epochs between the state and host arrays of n_envs
 * elements (either may be NULL), in direction @kind, on @stream, and waits. */
static gboolean
transfer (TgSeedState *state, const TgCallStream *call, gpointer seeds, gpointer epochs,
          enum cudaMemcpyKind kind, GError **error)
{
  cudaStream_t stream;
  gboolean to_host = kind == cudaMemcpyDeviceToHost;
  TgDeviceGuard guard;
  gboolean ok = FALSE;

  if ((stream = tg__seeds_state_enter (state->device, call, TRUE, &guard, error))
      == NULL)
    return FALSE;
  if (seeds != NULL)
    TG_CUDA_GOTO (cudaMemcpyAsync (to_host ? seeds : (gpointer)state->seeds,
                                   to_host ? (gpointer)state->seeds : seeds,
                                   state->n_envs * sizeof (guint64), kind, stream),
                  error, out);
  if (epochs != NULL)
    TG_CUDA_GOTO (cudaMemcpyAsync (to_host ? epochs : (gpointer)state->epochs,
                                   to_host ? (gpointer)state->epochs : epochs,
                                   state->n_envs * sizeof (guint32), kind, stream),
                  error, out);
  ok = tg__stream_synchronize (stream, error);
out:
  tg__device_leave (&guard);
  return ok;
}

gboolean
tg_seed_state_read_full (TgSeedState *state, const TgCallStream *call, guint64 *seeds,
                         guint32 *epochs, GError **error)
{
  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return transfer (state, call, seeds, epochs, cudaMemcpyDeviceToHost, error);
}

gboolean
tg_seed_state_write_full (TgSeedState *state, const TgCallStream *call,
                          const guint64 *seeds, const guint32 *epochs, GError **error)
{
  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return transfer (state, call, (gpointer)seeds, (gpointer)epochs,
                   cudaMemcpyHostToDevice, error);
}

GBytes *
tg_seed_state_snapshot_full (TgSeedState *state, const TgCallStream *call,
                             GError **error)
{
  gsize size;
  guint8 *buf;
  guint64 *seeds;
  guint32 *epochs;

  g_return_val_if_fail (state != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  size = tg__seeds_snapshot_size (state->n_envs);
  buf = g_malloc (size);
  /* g_malloc aligns to 16 and the header is 24 bytes: both arrays land
   * naturally aligned. */
  seeds = (guint64 *)(buf + TG__SEEDS_HEADER_SIZE);
  epochs = (guint32 *)(seeds + state->n_envs);
  tg__seeds_snapshot_write_header (buf, state->n_envs, state->first_env);
  if (!tg_seed_state_read_full (state, call, seeds, epochs, error))
    {
      g_free (buf);
      return NULL;
    }
#if G_BYTE_ORDER != G_LITTLE_ENDIAN
  for (guint i = 0; i < state->n_envs; i++)
    {
      seeds[i] = GUINT64_TO_LE (seeds[i]);
      epochs[i] = GUINT32_TO_LE (epochs[i]);
    }
#endif
  return g_bytes_new_take (buf, size);
}

gboolean
tg_seed_state_restore_full (TgSeedState *state, const TgCallStream *call,
                            GBytes *snapshot, GError **error)
{
  const guint8 *data;
  gsize size, header = 0;
  g_autofree guint64 *seeds = NULL;
  g_autofree guint32 *epochs = NULL;

  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (snapshot != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  data = g_bytes_get_data (snapshot, &size);
  if (!tg__seeds_snapshot_check (data, size, state->n_envs, state->first_env, &header,
                                 error))
    return FALSE;
  /* Copied out: a version-1 snapshot's seeds are not 8-byte aligned in it,
   * and the byte order may need fixing. */
  seeds = g_memdup2 (data + header, state->n_envs * sizeof (guint64));
  epochs = g_memdup2 (data + header + state->n_envs * sizeof (guint64),
                      state->n_envs * sizeof (guint32));
#if G_BYTE_ORDER != G_LITTLE_ENDIAN
  for (guint i = 0; i < state->n_envs; i++)
    {
      seeds[i] = GUINT64_FROM_LE (seeds[i]);
      epochs[i] = GUINT32_FROM_LE (epochs[i]);
    }
#endif
  return tg_seed_state_write_full (state, call, seeds, epochs, error);
}

/* ------------------------------------------------------------------------ */
/* The plain calls: no ambient stream                                        */

gboolean
tg_seed_state_set_seeds (TgSeedState *state, cudaStream_t stream, const guint *env_ids,
                         const guint64 *seeds, guint n, GError **error)
{
  return tg_seed_state_set_seeds_full (state, &TG_CALL_STREAM (stream), env_ids, seeds,
                                       n, error);
}

gboolean
tg_seed_state_read (TgSeedState *state, cudaStream_t stream, guint64 *seeds,
                    guint32 *epochs, GError **error)
{
  return tg_seed_state_read_full (state, &TG_CALL_STREAM (stream), seeds, epochs,
                                  error);
}

gboolean
tg_seed_state_write (TgSeedState *state, cudaStream_t stream, const guint64 *seeds,
                     const guint32 *epochs, GError **error)
{
  return tg_seed_state_write_full (state, &TG_CALL_STREAM (stream), seeds, epochs,
                                   error);
}

GBytes *
tg_seed_state_snapshot (TgSeedState *state, cudaStream_t stream, GError **error)
{
  return tg_seed_state_snapshot_full (state, &TG_CALL_STREAM (stream), error);
}

gboolean
tg_seed_state_restore (TgSeedState *state, cudaStream_t stream, GBytes *snapshot,
                       GError **error)
{
  return tg_seed_state_restore_full (state, &TG_CALL_STREAM (stream), snapshot, error);
}
