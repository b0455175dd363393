/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-enqueued.c: the seed state's enqueued calls (set_seeds_device,
 * advance, reset_epochs, fill_effective, advance_fill), which can be
 * captured; each also in its plain form, with no ambient stream. */
#include "config.h"
#include "seeds-kernels-private.h"
#include "seeds-private.h"

/* ------------------------------------------------------------------------ */
/* Enqueued operations: capturable                                           */

/* An array a kernel reads or writes beside the state's own seeds and
 * epochs must not share memory with them: the kernel would overwrite what
 * it reads (the seeds, with an output bound to them). */
static gboolean
apart_from_state (const TgSeedState *state, const char *what, gconstpointer ptr,
                  gsize size, GError **error)
{
  if (!tg__ranges_overlap (ptr, size, state->seeds, state->n_envs * sizeof (guint64))
      && !tg__ranges_overlap (ptr, size, state->epochs,
                              state->n_envs * sizeof (guint32)))
    return TRUE;
  tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                 "%s (%p) overlaps the state's own seeds or epochs, which the call "
                 "reads and writes; pass a separate array",
                 what, ptr);
  return FALSE;
}

/* Checks a mask (or NULL: every env) against the state, on the device too. */
static gboolean
check_mask (const TgSeedState *state, const guint8 *mask, gsize mask_len,
            GError **error)
{
  return mask == NULL
         || (tg__seeds_check_len ("the mask", mask_len, state->n_envs, FALSE, error)
             && apart_from_state (state, "the mask", mask, mask_len, error)
             && tg__check_device_buffer ("the mask", mask, mask_len, state->device,
                                         error));
}

/* Checks an output of n_envs effective seeds, on the device too (its length
 * is checked before: output_enter). */
static gboolean
check_output (const TgSeedState *state, guint64 *out, GError **error)
{
  gsize size = state->n_envs * sizeof (guint64);

  return apart_from_state (state, "the output", out, size, error)
         && tg__check_device_buffer ("the output", out, size, state->device, error);
}

gboolean
tg_seed_state_set_seeds_device_full (TgSeedState *state, const TgCallStream *call,
                                     const guint32 *device_env_ids,
                                     const guint64 *device_seeds, guint n,
                                     GError **error)
{
  cudaStream_t stream;
  TgDeviceGuard guard;
  gboolean ok;

  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (n == 0 || (device_env_ids != NULL && device_seeds != NULL),
                        FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (n == 0)
    return TRUE;
  if (!apart_from_state (state, "the env ids", device_env_ids,
                         (gsize)n * sizeof (guint32), error)
      || !apart_from_state (state, "the seeds", device_seeds,
                            (gsize)n * sizeof (guint64), error)
      || (stream = tg__seeds_state_enter (state->device, call, FALSE, &guard, error))
             == NULL)
    return FALSE;
  ok = tg__check_device_buffer ("the env ids", device_env_ids,
                                (gsize)n * sizeof (guint32), state->device, error)
       && tg__check_device_buffer ("the seeds", device_seeds,
                                   (gsize)n * sizeof (guint64), state->device, error)
       && TG_CUDA_OK (tg__launch_seeds_scatter (stream, state->seeds, state->epochs,
                                                state->n_envs, device_env_ids,
                                                device_seeds, n),
                      error);
  tg__device_leave (&guard);
  return ok;
}

/* Enqueues @launch (named @name, for messages) over the epochs of the envs
 * in @device_mask. */
static gboolean
enqueue_masked (TgSeedState *state, const TgCallStream *call, const guint8 *device_mask,
                gsize mask_len,
                cudaError_t (*launch) (cudaStream_t, guint32 *, const guint8 *, guint),
                const char *name, GError **error)
{
  cudaStream_t stream;
  TgDeviceGuard guard;
  gboolean ok;

  if ((stream = tg__seeds_state_enter (state->device, call, FALSE, &guard, error))
      == NULL)
    return FALSE;
  ok = check_mask (state, device_mask, mask_len, error)
       && tg__cuda_ok (
           TG_CUDA_CALL (launch (stream, state->epochs, device_mask, state->n_envs)),
           name, G_STRLOC, error);
  tg__device_leave (&guard);
  return ok;
}

gboolean
tg_seed_state_advance_full (TgSeedState *state, const TgCallStream *call,
                            const guint8 *device_mask, gsize mask_len, GError **error)
{
  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  return enqueue_masked (state, call, device_mask, mask_len, tg__launch_seeds_advance,
                         "tg__launch_seeds_advance", error);
}

gboolean
tg_seed_state_reset_epochs_full (TgSeedState *state, const TgCallStream *call,
                                 const guint8 *device_mask, gsize mask_len,
                                 GError **error)
{
  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  return enqueue_masked (state, call, device_mask, mask_len, tg__launch_seeds_reset,
                         "tg__launch_seeds_reset", error);
}

/* The stream of a call that writes an output of @out_len effective seeds,
 * its state's device made current (@guard): the length refused first, before
 * any device is touched.  NULL with @error set. */
static cudaStream_t
output_enter (TgSeedState *state, const TgCallStream *call, gsize out_len,
              TgDeviceGuard *guard, GError **error)
{
  if (!tg__seeds_check_len ("the output", out_len, state->n_envs, TRUE, error))
    return NULL;
  return tg__seeds_state_enter (state->device, call, FALSE, guard, error);
}

gboolean
tg_seed_state_fill_effective_full (TgSeedState *state, const TgCallStream *call,
                                   guint64 *device_out, gsize out_len, GError **error)
{
  cudaStream_t stream;
  TgDeviceGuard guard;
  gboolean ok;

  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (device_out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((stream = output_enter (state, call, out_len, &guard, error)) == NULL)
    return FALSE;
  ok = check_output (state, device_out, error)
       && TG_CUDA_OK (tg__launch_seeds_fill (stream, device_out, state->seeds,
                                             state->epochs, state->n_envs),
                      error);
  tg__device_leave (&guard);
  return ok;
}

/* The output is written while the mask is read, element by element. */
static gboolean
masked_output_apart (const TgSeedState *state, const guint8 *mask, gsize mask_len,
                     const guint64 *out, GError **error)
{
  if (mask == NULL
      || !tg__ranges_overlap (mask, mask_len, out, state->n_envs * sizeof (guint64)))
    return TRUE;
  tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                 "the mask (%p) and the output (%p) overlap, so the output would "
                 "overwrite the mask while it is read; pass separate arrays",
                 (gconstpointer)mask, (gconstpointer)out);
  return FALSE;
}

gboolean
tg_seed_state_advance_fill_full (TgSeedState *state, const TgCallStream *call,
                                 const guint8 *device_mask, gsize mask_len,
                                 guint64 *device_out, gsize out_len, GError **error)
{
  cudaStream_t stream;
  TgDeviceGuard guard;
  gboolean ok;

  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (device_out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((stream = output_enter (state, call, out_len, &guard, error)) == NULL)
    return FALSE;
  ok = check_mask (state, device_mask, mask_len, error)
       && check_output (state, device_out, error)
       && masked_output_apart (state, device_mask, mask_len, device_out, error)
       && TG_CUDA_OK (tg__launch_seeds_advance_fill (
                          stream, device_out, state->seeds, state->epochs, device_mask,
                          state->n_envs, TG_SEEDS_SHAPE_DEFAULT),
                      error);
  tg__device_leave (&guard);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* The plain calls: no ambient stream                                        */

gboolean
tg_seed_state_set_seeds_device (TgSeedState *state, cudaStream_t stream,
                                const guint32 *device_env_ids,
                                const guint64 *device_seeds, guint n, GError **error)
{
  return tg_seed_state_set_seeds_device_full (state, &TG_CALL_STREAM (stream),
                                              device_env_ids, device_seeds, n, error);
}

gboolean
tg_seed_state_advance (TgSeedState *state, cudaStream_t stream,
                       const guint8 *device_mask, gsize mask_len, GError **error)
{
  return tg_seed_state_advance_full (state, &TG_CALL_STREAM (stream), device_mask,
                                     mask_len, error);
}

gboolean
tg_seed_state_reset_epochs (TgSeedState *state, cudaStream_t stream,
                            const guint8 *device_mask, gsize mask_len, GError **error)
{
  return tg_seed_state_reset_epochs_full (state, &TG_CALL_STREAM (stream), device_mask,
                                          mask_len, error);
}

gboolean
tg_seed_state_fill_effective (TgSeedState *state, cudaStream_t stream,
                              guint64 *device_out, gsize out_len, GError **error)
{
  return tg_seed_state_fill_effective_full (state, &TG_CALL_STREAM (stream), device_out,
                                            out_len, error);
}

gboolean
tg_seed_state_advance_fill (TgSeedState *state, cudaStream_t stream,
                            const guint8 *device_mask, gsize mask_len,
                            guint64 *device_out, gsize out_len, GError **error)
{
  return tg_seed_state_advance_fill_full (state, &TG_CALL_STREAM (stream), device_mask,
                                          mask_len, device_out, out_len, error);
}
