/* SPDX-License-Identifier: Apache-2.0 */
/* seeds.c: the seed state, per-env seeds and epochs on one device: its life,
 * its attributes, and how each of its calls enters its device and stream.
 * Its calls are seeds-blocking.c's and seeds-enqueued.c's. */
#include "config.h"
#include "seeds-kernels-private.h"
#include "seeds-private.h"
#include "../exec/device-private.h"
#include "../exec/policy-private.h"
#include "../exec/resource-private.h"
#include "../exec/stream-private.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Life cycle                                                                */

static void
state_free (TgSeedState *state)
{
  gboolean owns_cuda = state->seeds != NULL || state->epochs != NULL;
  TgDeviceGuard guard;
  GError *error = NULL;
  gboolean entered = owns_cuda && tg__device_enter (&guard, state->device, &error);

  if (owns_cuda && !entered)
    tg__release_failed (error);
  tg__device_free (state->seeds);
  tg__device_free (state->epochs);
  if (entered)
    tg__device_leave (&guard);
  g_free (state);
}

cudaStream_t
tg__seeds_state_enter (int device, const TgCallStream *call, gboolean blocking,
                       TgDeviceGuard *guard, GError **error)
{
  TgStreamRule rule = { call, TG_STREAM_AUTO,
                        blocking ? TG_STREAM_USE_WAIT : TG_STREAM_USE_RECORD, NULL };
  TgCaptureInfo info;
  cudaStream_t stream;
  gboolean ambient;

  g_return_val_if_fail (call != NULL, NULL);
  if (!tg__device_enter (guard, device, error))
    return NULL;
  stream = tg__stream_resolve (&rule, device, &info, &ambient, error);
  if (stream != NULL)
    {
      g_autoptr (GError) waits = NULL;
      TgPolicy policy;

      if (blocking && info.state == TG_CAPTURE_ACTIVE)
        waits = g_error_new (TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                             "stream %p is capturing, and this call waits for its "
                             "stream: call it outside the capture, or use the enqueued "
                             "calls (advance, reset_epochs, set_seeds_device)",
                             (void *)stream);
      if (!tg__policy_decide (TG_POLICY_AUTO, info.state, waits, NULL, &policy, error))
        stream = NULL;
    }
  if (stream == NULL)
    tg__device_leave (guard);
  return stream;
}

/* Seeds from @seeds (host) when given, else derived from @base_seed. */
static TgSeedState *
state_create (int device, guint first_env, guint n_envs, guint64 base_seed,
              const guint64 *seeds, GError **error)
{
  TgSeedState *state;
  TgDeviceGuard guard;
  cudaStream_t stream;
  gboolean ok = FALSE;

  /* Refused before any CUDA call, so it reads the same with or without a GPU. */
  if (n_envs == 0)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_EMPTY,
                     "a seed state needs at least one env, n_envs is 0");
      return NULL;
    }
  if (n_envs > TG_SEED_STATE_MAX_ENVS)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE,
                     "n_envs is %u, past the limit of %u envs a seed state holds "
                     "(TG_SEED_STATE_MAX_ENVS, 2^31 - 1): a larger count is usually a "
                     "negative number passed as unsigned; shard a population over "
                     "several states (tg_seed_state_new_shard())",
                     n_envs, TG_SEED_STATE_MAX_ENVS);
      return NULL;
    }
  if (n_envs - 1 > G_MAXUINT32 - first_env)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE,
                     "envs %u to %u: global env indices end at %u; shard a population "
                     "of at most 2^32 envs",
                     first_env, first_env + (n_envs - 1), G_MAXUINT32);
      return NULL;
    }
  /* TrackGen's own stream, even inside a registered scope: a new state is
   * ordered after nothing of the caller's. */
  if ((stream = tg_default_stream (device, error)) == NULL
      || (stream = tg__seeds_state_enter (device, &TG_CALL_STREAM (stream), TRUE,
                                          &guard, error))
             == NULL)
    return NULL;

  state = g_new0 (TgSeedState, 1);
  g_atomic_ref_count_init (&state->ref);
  state->device = device;
  state->n_envs = n_envs;
  state->first_env = first_env;
  if ((state->seeds = tg__device_alloc (n_envs * sizeof (guint64), error)) == NULL
      || (state->epochs = tg__device_alloc (n_envs * sizeof (guint32), error)) == NULL)
    goto out;
  if (seeds == NULL)
    TG_CUDA_GOTO (tg__launch_seeds_init (stream, state->seeds, state->epochs, n_envs,
                                         first_env, base_seed),
                  error, out);
  else
    {
      TG_CUDA_GOTO (cudaMemcpyAsync (state->seeds, seeds, n_envs * sizeof (guint64),
                                     cudaMemcpyHostToDevice, stream),
                    error, out);
      TG_CUDA_GOTO (tg__launch_seeds_reset (stream, state->epochs, NULL, n_envs), error,
                    out);
    }
  ok = tg__stream_synchronize (stream, error);
out:
  tg__device_leave (&guard);
  if (!ok)
    {
      state_free (state);
      return NULL;
    }
  return state;
}

TgSeedState *
tg_seed_state_new (int device, guint n_envs, guint64 base_seed, GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  return state_create (device, 0, n_envs, base_seed, NULL, error);
}

TgSeedState *
tg_seed_state_new_shard (int device, guint first_env, guint n_envs, guint64 base_seed,
                         GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  return state_create (device, first_env, n_envs, base_seed, NULL, error);
}

TgSeedState *
tg_seed_state_new_from_array (int device, guint n_envs, const guint64 *seeds,
                              GError **error)
{
  g_return_val_if_fail (seeds != NULL || n_envs == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  return state_create (device, 0, n_envs, 0, seeds, error);
}

TgSeedState *
tg_seed_state_ref (TgSeedState *state)
{
  g_return_val_if_fail (state != NULL, NULL);
  g_atomic_ref_count_inc (&state->ref);
  return state;
}

void
tg_seed_state_unref (TgSeedState *state)
{
  g_return_if_fail (state != NULL);
  if (g_atomic_ref_count_dec (&state->ref))
    state_free (state);
}

guint
tg_seed_state_get_n_envs (const TgSeedState *state)
{
  g_return_val_if_fail (state != NULL, 0);
  return state->n_envs;
}

guint
tg_seed_state_get_first_env (const TgSeedState *state)
{
  g_return_val_if_fail (state != NULL, 0);
  return state->first_env;
}

int
tg_seed_state_get_device (const TgSeedState *state)
{
  g_return_val_if_fail (state != NULL, -1);
  return state->device;
}

const guint64 *
tg_seed_state_get_seeds (const TgSeedState *state)
{
  g_return_val_if_fail (state != NULL, NULL);
  return state->seeds;
}

guint32 *
tg_seed_state_get_epochs (TgSeedState *state)
{
  g_return_val_if_fail (state != NULL, NULL);
  return state->epochs;
}
