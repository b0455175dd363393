/* SPDX-License-Identifier: Apache-2.0 */
/* seeds.c: the seed state, per-env seeds and epochs on one device. */
#include "config.h"
#include "seeds-kernels-private.h"
#include "seeds-private.h"
#include "../exec/device-private.h"
#include "../exec/policy-private.h"
#include "../exec/resource-private.h"
#include "../exec/stream-private.h"

#include <stdlib.h>
#include <string.h>

/* set_seeds hands the caller's guint ids to the kernel as guint32. */
G_STATIC_ASSERT (sizeof (guint) == sizeof (guint32));
G_STATIC_ASSERT (sizeof (TG__SEEDS_MAGIC) == 8);

struct _TgSeedState
{
  gatomicrefcount ref;
  int device;
  guint n_envs;
  guint first_env; /* global index of env 0 */
  guint64 *seeds;  /* device; never reallocated: graphs bake the pointers in */
  guint32 *epochs; /* device; likewise */
};

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

/* Enters the state's device and resolves @call's stream by the stream rule,
 * like every call, then applies the policy table's rules for work that can
 * be captured: a broken capture and the legacy stream joined to a blocking
 * stream's capture (where a launch would invalidate it) are refused, as a
 * producer run refuses them.  With @blocking, a capturing stream is refused
 * too (a capturing ambient stream already by the rule): the call waits for
 * its stream.  NULL (and left) on error. */
static cudaStream_t
state_enter (int device, const TgCallStream *call, gboolean blocking,
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
      || (stream = state_enter (device, &TG_CALL_STREAM (stream), TRUE, &guard, error))
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
  if ((stream = state_enter (state->device, call, TRUE, &guard, error)) == NULL)
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

  if ((stream = state_enter (state->device, call, TRUE, &guard, error)) == NULL)
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
 * is checked before: tg__seeds_check_len). */
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
      || (stream = state_enter (state->device, call, FALSE, &guard, error)) == NULL)
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

  if ((stream = state_enter (state->device, call, FALSE, &guard, error)) == NULL)
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

  if (!tg__seeds_check_len ("the output", out_len, state->n_envs, TRUE, error))
    return FALSE;
  if ((stream = state_enter (state->device, call, FALSE, &guard, error)) == NULL)
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

  if (!tg__seeds_check_len ("the output", out_len, state->n_envs, TRUE, error))
    return FALSE;
  if ((stream = state_enter (state->device, call, FALSE, &guard, error)) == NULL)
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
