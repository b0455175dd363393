/* seeds.c: the seed state, per-env seeds and epochs on one device. */
#include "config.h"
#include "seeds-private.h"
#include "../exec/capture-private.h"

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
  guint64 *seeds;  /* device; never reallocated: graphs bake the pointers in */
  guint32 *epochs; /* device; likewise */
};

/* ------------------------------------------------------------------------ */
/* Pure checks (no CUDA), also called by the host tests.                    */

gsize
tg__seeds_snapshot_size (guint n_envs)
{
  return TG__SEEDS_HEADER_SIZE + (gsize)n_envs * (sizeof (guint64) + sizeof (guint32));
}

void
tg__seeds_snapshot_write_header (guint8 *dst, guint n_envs)
{
  guint32 version = GUINT32_TO_LE (TG__SEEDS_VERSION), n = GUINT32_TO_LE (n_envs);

  memcpy (dst, TG__SEEDS_MAGIC, 8);
  memcpy (dst + 8, &version, 4);
  memcpy (dst + 12, &n, 4);
}

gboolean
tg__seeds_snapshot_check (gconstpointer data, gsize size, guint n_envs, GError **error)
{
  const guint8 *p = data;
  guint32 version, n;

  g_return_val_if_fail (data != NULL || size == 0, FALSE);

  if (size < 8 || memcmp (p, TG__SEEDS_MAGIC, 8) != 0)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_VERSION,
                     "not a seed-state snapshot: the data does not start with "
                     "\"TGSEEDS\\0\"; pass bytes made by tg_seed_state_snapshot()");
      return FALSE;
    }
  if (size < TG__SEEDS_HEADER_SIZE)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                     "seed-state snapshot truncated: %" G_GSIZE_FORMAT
                     " bytes, shorter than its %u-byte header",
                     size, TG__SEEDS_HEADER_SIZE);
      return FALSE;
    }
  memcpy (&version, p + 8, 4);
  memcpy (&n, p + 12, 4);
  version = GUINT32_FROM_LE (version);
  n = GUINT32_FROM_LE (n);
  if (version != TG__SEEDS_VERSION)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_VERSION,
                     "seed-state snapshot of version %u: this libtrackgen reads "
                     "version %u only",
                     version, TG__SEEDS_VERSION);
      return FALSE;
    }
  if (n != n_envs)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                     "the snapshot holds %u envs but the state has %u; restore it "
                     "into a state of %u envs",
                     n, n_envs, n);
      return FALSE;
    }
  if (size != tg__seeds_snapshot_size (n))
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                     "seed-state snapshot of %u envs has %" G_GSIZE_FORMAT
                     " bytes, expected %" G_GSIZE_FORMAT " (truncated or padded)",
                     n, size, tg__seeds_snapshot_size (n));
      return FALSE;
    }
  return TRUE;
}

static int
compare_guint (const void *a, const void *b)
{
  guint x = *(const guint *)a, y = *(const guint *)b;

  return (x > y) - (x < y);
}

gboolean
tg__seeds_check_ids (const guint *ids, guint n, guint n_envs, GError **error)
{
  g_autofree guint *sorted = NULL;

  g_return_val_if_fail (ids != NULL || n == 0, FALSE);

  for (guint k = 0; k < n; k++)
    if (ids[k] >= n_envs)
      {
        tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE,
                       "env id %u (at index %u) is out of range: the state has %u "
                       "envs, ids 0 to %u",
                       ids[k], k, n_envs, n_envs - 1);
        return FALSE;
      }
  /* Sorting a copy costs O(n log n) in the ids given, not in n_envs. */
  if (n < 2)
    return TRUE;
  sorted = g_memdup2 (ids, (gsize)n * sizeof *ids);
  qsort (sorted, n, sizeof *sorted, compare_guint);
  for (guint k = 1; k < n; k++)
    if (sorted[k] == sorted[k - 1])
      {
        tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_DUPLICATE,
                       "env id %u appears more than once: each id may appear once "
                       "per call",
                       sorted[k]);
        return FALSE;
      }
  return TRUE;
}

gboolean
tg__seeds_check_len (const char *what, gsize len, guint n_envs, gboolean at_least,
                     GError **error)
{
  if (at_least ? len >= n_envs : len == n_envs)
    return TRUE;
  tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                 "%s has length %" G_GSIZE_FORMAT " but the state has %u envs: pass "
                 "a length of %s%u",
                 what, len, n_envs, at_least ? "at least " : "", n_envs);
  return FALSE;
}

/* ------------------------------------------------------------------------ */
/* Life cycle                                                                */

static void
state_free (TgSeedState *state)
{
  TgDeviceGuard guard;
  gboolean entered = tg__device_enter (&guard, state->device, NULL);

  tg__device_free (state->seeds);
  tg__device_free (state->epochs);
  if (entered)
    tg__device_leave (&guard);
  g_free (state);
}

/* Enters the state's device and returns its default stream, where the
 * state's own blocking operations run.  NULL (and left) on error. */
static cudaStream_t
blocking_enter (int device, TgDeviceGuard *guard, GError **error)
{
  cudaStream_t stream;

  if (!tg__device_enter (guard, device, error))
    return NULL;
  if ((stream = tg_default_stream (device, error)) == NULL)
    tg__device_leave (guard);
  return stream;
}

/* Seeds from @seeds (host) when given, else derived from @base_seed. */
static TgSeedState *
state_create (int device, guint n_envs, guint64 base_seed, const guint64 *seeds,
              GError **error)
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
  if ((stream = blocking_enter (device, &guard, error)) == NULL)
    return NULL;

  state = g_new0 (TgSeedState, 1);
  g_atomic_ref_count_init (&state->ref);
  state->device = device;
  state->n_envs = n_envs;
  if ((state->seeds = tg__device_alloc (n_envs * sizeof (guint64), error)) == NULL
      || (state->epochs = tg__device_alloc (n_envs * sizeof (guint32), error)) == NULL)
    goto out;
  if (seeds == NULL)
    TG_CUDA_GOTO (
        tg__launch_seeds_init (stream, state->seeds, state->epochs, n_envs, base_seed),
        error, out);
  else
    {
      TG_CUDA_GOTO (cudaMemcpyAsync (state->seeds, seeds, n_envs * sizeof (guint64),
                                     cudaMemcpyHostToDevice, stream),
                    error, out);
      TG_CUDA_GOTO (
          cudaMemsetAsync (state->epochs, 0, n_envs * sizeof (guint32), stream), error,
          out);
    }
  if (!tg__stream_synchronize (stream, error))
    goto out;
  ok = TRUE;
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
  return state_create (device, n_envs, base_seed, NULL, error);
}

TgSeedState *
tg_seed_state_new_from_array (int device, guint n_envs, const guint64 *seeds,
                              GError **error)
{
  g_return_val_if_fail (seeds != NULL || n_envs == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  return state_create (device, n_envs, 0, seeds, error);
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
tg_seed_state_get_epochs (const TgSeedState *state)
{
  g_return_val_if_fail (state != NULL, NULL);
  return state->epochs;
}

/* ------------------------------------------------------------------------ */
/* Blocking operations, on the state's default stream                       */

gboolean
tg_seed_state_set_seeds (TgSeedState *state, const guint *env_ids, const guint64 *seeds,
                         guint n, GError **error)
{
  TgDeviceGuard guard;
  cudaStream_t stream;
  guint64 *values = NULL;
  gboolean ok = FALSE;

  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (n == 0 || (env_ids != NULL && seeds != NULL), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!tg__seeds_check_ids (env_ids, n, state->n_envs, error))
    return FALSE;
  if (n == 0)
    return TRUE;
  if ((stream = blocking_enter (state->device, &guard, error)) == NULL)
    return FALSE;
  /* One staging buffer: the values, then the ids (8-byte aligned after them). */
  if ((values = tg__device_alloc ((gsize)n * (sizeof (guint64) + sizeof (guint32)),
                                  error))
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
                                          (const guint32 *)(values + n), values, n),
                error, out);
  if (!tg__stream_synchronize (stream, error))
    goto out;
  ok = TRUE;
out:
  tg__device_free (values);
  tg__device_leave (&guard);
  return ok;
}

/* Copies seeds and epochs between the state and host arrays of n_envs
 * elements (either may be NULL), in direction @kind, and waits. */
static gboolean
transfer (TgSeedState *state, gpointer seeds, gpointer epochs, enum cudaMemcpyKind kind,
          GError **error)
{
  gboolean to_host = kind == cudaMemcpyDeviceToHost;
  TgDeviceGuard guard;
  cudaStream_t stream;
  gboolean ok = FALSE;

  if ((stream = blocking_enter (state->device, &guard, error)) == NULL)
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
  if (!tg__stream_synchronize (stream, error))
    goto out;
  ok = TRUE;
out:
  tg__device_leave (&guard);
  return ok;
}

gboolean
tg_seed_state_read (TgSeedState *state, guint64 *seeds, guint32 *epochs, GError **error)
{
  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return transfer (state, seeds, epochs, cudaMemcpyDeviceToHost, error);
}

GBytes *
tg_seed_state_snapshot (TgSeedState *state, GError **error)
{
  gsize size;
  guint8 *buf;
  guint64 *seeds;
  guint32 *epochs;

  g_return_val_if_fail (state != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  size = tg__seeds_snapshot_size (state->n_envs);
  buf = g_malloc (size);
  /* g_malloc aligns to 16, so both arrays land naturally aligned. */
  seeds = (guint64 *)(buf + TG__SEEDS_HEADER_SIZE);
  epochs = (guint32 *)(seeds + state->n_envs);
  tg__seeds_snapshot_write_header (buf, state->n_envs);
  if (!tg_seed_state_read (state, seeds, epochs, error))
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
tg_seed_state_restore (TgSeedState *state, GBytes *snapshot, GError **error)
{
  const guint8 *data;
  gconstpointer seeds, epochs;
  gsize size;

  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (snapshot != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  data = g_bytes_get_data (snapshot, &size);
  if (!tg__seeds_snapshot_check (data, size, state->n_envs, error))
    return FALSE;
  seeds = data + TG__SEEDS_HEADER_SIZE;
  epochs = data + TG__SEEDS_HEADER_SIZE + state->n_envs * sizeof (guint64);
#if G_BYTE_ORDER != G_LITTLE_ENDIAN
  g_autofree guint64 *host_seeds = g_new (guint64, state->n_envs);
  g_autofree guint32 *host_epochs = g_new (guint32, state->n_envs);
  memcpy (host_seeds, seeds, state->n_envs * sizeof (guint64));
  memcpy (host_epochs, epochs, state->n_envs * sizeof (guint32));
  for (guint i = 0; i < state->n_envs; i++)
    {
      host_seeds[i] = GUINT64_FROM_LE (host_seeds[i]);
      host_epochs[i] = GUINT32_FROM_LE (host_epochs[i]);
    }
  seeds = host_seeds;
  epochs = host_epochs;
#endif
  return transfer (state, (gpointer)seeds, (gpointer)epochs, cudaMemcpyHostToDevice,
                   error);
}

/* ------------------------------------------------------------------------ */
/* Enqueued operations: capturable                                           */

/* Enters the state's device and resolves the stream as a producer call
 * without one would.  NULL (and left) on error. */
static cudaStream_t
enqueue_enter (TgSeedState *state, cudaStream_t stream, TgDeviceGuard *guard,
               GError **error)
{
  TgCaptureInfo info;

  if (!tg__device_enter (guard, state->device, error))
    return NULL;
  if ((stream = tg__stream_resolve (stream, NULL, state->device, &info, error)) == NULL)
    tg__device_leave (guard);
  return stream;
}

gboolean
tg_seed_state_advance (TgSeedState *state, cudaStream_t stream,
                       const guint8 *device_mask, gsize mask_len, GError **error)
{
  TgDeviceGuard guard;
  gboolean ok;

  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (device_mask != NULL
      && !tg__seeds_check_len ("the mask", mask_len, state->n_envs, FALSE, error))
    return FALSE;
  if ((stream = enqueue_enter (state, stream, &guard, error)) == NULL)
    return FALSE;
  ok = (device_mask == NULL
        || tg__check_device_buffer ("the mask", device_mask, mask_len, state->device,
                                    error))
       && TG_CUDA_OK (
      tg__launch_seeds_advance (stream, state->epochs, device_mask, state->n_envs),
      error);
  tg__device_leave (&guard);
  return ok;
}

gboolean
tg_seed_state_reset_epochs (TgSeedState *state, cudaStream_t stream, GError **error)
{
  TgDeviceGuard guard;
  gboolean ok;

  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((stream = enqueue_enter (state, stream, &guard, error)) == NULL)
    return FALSE;
  ok = TG_CUDA_OK (
      cudaMemsetAsync (state->epochs, 0, state->n_envs * sizeof (guint32), stream),
      error);
  tg__device_leave (&guard);
  return ok;
}

gboolean
tg_seed_state_fill_effective (TgSeedState *state, cudaStream_t stream,
                              guint64 *device_out, gsize out_len, GError **error)
{
  TgDeviceGuard guard;
  gboolean ok;

  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (device_out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!tg__seeds_check_len ("the output", out_len, state->n_envs, TRUE, error))
    return FALSE;
  if ((stream = enqueue_enter (state, stream, &guard, error)) == NULL)
    return FALSE;
  ok = tg__check_device_buffer ("the output", device_out,
                                state->n_envs * sizeof (guint64), state->device, error)
       && TG_CUDA_OK (tg__launch_seeds_fill (stream, device_out, state->seeds,
                                             state->epochs, state->n_envs),
                      error);
  tg__device_leave (&guard);
  return ok;
}
