/* SPDX-License-Identifier: Apache-2.0 */
/* stream.c: stream resolution, TrackGen's default streams and the public
 * capture-state queries (a stream's device is checked in device.c). */
#include "config.h"
#include "device-private.h"
#include "driver-private.h"
#include "resource-private.h"
#include "scope-private.h"
#include "stream-private.h"
#include "tsan-private.h"

/* Steps 4 and 5 of the stream rule for a call with no bound stream, and the
 * rule's refusal: the ambient stream, checked (*@ambient TRUE), else
 * TrackGen's default stream, unchecked. */
static cudaStream_t
pick_ambient (const TgStreamRule *rule, int device, TgCaptureInfo *info,
              gboolean *ambient, GError **error)
{
  cudaStream_t stream = rule->call->ambient;

  if (stream == TG_STREAM_AUTO)
    return tg_default_stream (device, error);
  if (stream == NULL)
    stream = cudaStreamLegacy;
  if (tg__stream_check (stream, device, info, error) == NULL)
    return NULL;
  if (info->state == TG_CAPTURE_ACTIVE && rule->use != TG_STREAM_USE_RECORD)
    {
      tg__policy_refuse_beside (rule->use, rule->producer, rule->call->ambient_name,
                                error);
      return NULL;
    }
  *ambient = TRUE;
  return stream;
}

/* Step 3 beside the ambient stream: the bound stream, unless the ambient
 * stream's capture (in progress, or broken) shows the caller's work is
 * being captured there. */
static gboolean
bound_beside_ambient (const TgStreamRule *rule, GError **error)
{
  cudaStream_t ambient = rule->call->ambient;
  TgCaptureInfo seen;

  if (ambient == TG_STREAM_AUTO)
    return TRUE;
  if (!tg__capture_query (ambient == NULL ? cudaStreamLegacy : ambient, &seen, error))
    return FALSE;
  if (seen.state == TG_CAPTURE_ACTIVE || seen.state == TG_CAPTURE_INVALIDATED)
    return tg__policy_refuse_beside (TG_STREAM_USE_BOUND, rule->producer,
                                     rule->call->ambient_name, error);
  return TRUE;
}

cudaStream_t
tg__stream_resolve_auto (const TgStreamRule *rule, int device, TgCaptureInfo *info,
                         gboolean *ambient, GError **error)
{
  cudaStream_t stream = rule->call->stream;
  TgScope *scope;

  *ambient = FALSE;
  if (stream == TG_STREAM_AUTO)
    {
      if ((scope = tg__scope_current ()) != NULL)
        stream = scope->stream;
      else if (rule->bound != TG_STREAM_AUTO)
        {
          if (!bound_beside_ambient (rule, error))
            return NULL;
          stream = rule->bound;
        }
      else if ((stream = pick_ambient (rule, device, info, ambient, error)) == NULL
               || *ambient)
        return stream;
    }
  /* NULL is CUDA's legacy default stream, as everywhere in CUDA: one name
   * for it, so that legacy-stream checks see one value. */
  if (stream == NULL)
    stream = cudaStreamLegacy;
  return tg__stream_check (stream, device, info, error);
}

cudaStream_t
tg_stream_resolve_full (const TgCallStream *call, int device, GError **error)
{
  TgStreamRule rule = { call, TG_STREAM_AUTO, TG_STREAM_USE_RECORD, NULL };
  TgDeviceGuard guard;
  TgCaptureInfo info;
  cudaStream_t resolved;
  gboolean ambient;

  g_return_val_if_fail (call != NULL, NULL);
  if (!tg__device_enter (&guard, device, error))
    return NULL;
  resolved = tg__stream_resolve (&rule, device, &info, &ambient, error);
  tg__device_leave (&guard);
  return resolved;
}

cudaStream_t
tg_stream_resolve (cudaStream_t stream, int device, GError **error)
{
  return tg_stream_resolve_full (&TG_CALL_STREAM (stream), device, error);
}

gboolean
tg_stream_get_capture_state (cudaStream_t stream, TgCaptureState *state,
                             unsigned long long *id, GError **error)
{
  TgCaptureInfo info;

  g_return_val_if_fail (state != NULL, FALSE);
  if (stream == TG_STREAM_AUTO)
    return tg__refuse (error, G_STRFUNC, NULL, NULL, NULL, TG_ARGUMENT_ERROR,
                       TG_ARGUMENT_ERROR_INVALID,
                       "stream: TG_STREAM_AUTO is not a stream here; pass the "
                       "stream whose capture state to query");
  if (!tg__capture_query (stream, &info, error))
    return FALSE;
  *state = info.state;
  if (id != NULL)
    *id = info.id;
  return TRUE;
}

gboolean
tg_stream_is_capturing (cudaStream_t stream)
{
  TgCaptureInfo info;

  g_return_val_if_fail (stream != TG_STREAM_AUTO, FALSE);
  return tg__capture_query (stream, &info, NULL)
         && (info.state == TG_CAPTURE_ACTIVE || info.state == TG_CAPTURE_INVALIDATED);
}

/* One default stream per device, created on first use.  Readers take the
 * published pointer without a lock; creation is serialized. */
static cudaStream_t *default_streams;
static int n_default_streams;
static GMutex default_streams_lock;

cudaStream_t
tg_default_stream (int device, GError **error)
{
  cudaStream_t *streams = g_atomic_pointer_get (&default_streams);
  cudaStream_t stream;
  TgDeviceGuard guard;

  if (streams != NULL && device >= 0 && device < n_default_streams
      && (stream = g_atomic_pointer_get (&streams[device])) != NULL)
    return stream;

  if (!tg__device_enter (&guard, device, error))
    return NULL;
  tg__mutex_lock (&default_streams_lock);
  if (default_streams == NULL)
    {
      int count = 0;
      if (TG_CUDA_OK (cudaGetDeviceCount (&count), error) && count > 0)
        {
          n_default_streams = count;
          g_atomic_pointer_set (&default_streams, g_new0 (cudaStream_t, count));
        }
    }
  stream = NULL;
  if (default_streams != NULL && device < n_default_streams)
    {
      stream = default_streams[device];
      if (stream == NULL && (stream = tg__stream_new (error)) != NULL)
        g_atomic_pointer_set (&default_streams[device], stream);
    }
  tg__mutex_unlock (&default_streams_lock);
  tg__device_leave (&guard);
  return stream;
}
