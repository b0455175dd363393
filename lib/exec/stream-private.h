/* SPDX-License-Identifier: Apache-2.0 */
/* stream-private.h: which stream a call uses, and whether it is the right
 * device's.  Private to libtrackgen. */
#ifndef TG_STREAM_PRIVATE_H
#define TG_STREAM_PRIVATE_H

#include "capture-private.h"
#include "device-private.h"
#include "policy-private.h"

G_BEGIN_DECLS

/* A call's stream rule: what it names and what may stand in (@bound, the
 * producer's bound stream or TG_STREAM_AUTO; @producer names the producer
 * in errors, or NULL). */
typedef struct
{
  const TgCallStream *call;
  cudaStream_t bound;
  TgStreamUse use;
  const char *producer;
} TgStreamRule;

/* The slow half of tg__stream_resolve(): the stream rule for a call that
 * names TG_STREAM_AUTO or NULL. */
cudaStream_t tg__stream_resolve_auto (const TgStreamRule *rule, int device,
                                      TgCaptureInfo *info, gboolean *ambient,
                                      GError **error);

/* @stream's capture state in @info, and its device checked through the
 * driver, so a capturing stream is checked too without disturbing its
 * capture (a stream whose capture is invalidated is not checked: every call
 * on it fails anyway, and the driver refuses to say).  @stream, or NULL on
 * error. */
static inline cudaStream_t
tg__stream_check (cudaStream_t stream, int device, TgCaptureInfo *info, GError **error)
{
  if (!tg__capture_query (stream, info, error)
      || (g_atomic_int_get (&tg__n_devices) != 1
          && !tg__device_check_stream (stream, device, info->state, error)))
    return NULL;
  return stream;
}

/* Stream resolution, the one implementation of the stream rule (exec.h's
 * TgCallStream): the stream named, else a registered capture's, else the
 * bound one, else the ambient one (*@ambient TRUE), else TrackGen's default
 * stream; NULL becomes cudaStreamLegacy.  Then checked
 * (tg__stream_check()).  Call with @device current. */
static inline cudaStream_t
tg__stream_resolve (const TgStreamRule *rule, int device, TgCaptureInfo *info,
                    gboolean *ambient, GError **error)
{
  cudaStream_t stream = rule->call->stream;

  /* Inline, as every call resolves: a stream named by the caller, on the
   * only device, costs one capture query and no other call. */
  if (G_UNLIKELY (stream == TG_STREAM_AUTO || stream == NULL))
    return tg__stream_resolve_auto (rule, device, info, ambient, error);
  *ambient = FALSE;
  return tg__stream_check (stream, device, info, error);
}

G_END_DECLS

#endif
