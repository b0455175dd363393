/* stream-private.h: which stream a call uses, and whether it is the right
 * device's.  Private to libtrackgen. */
#ifndef TG_STREAM_PRIVATE_H
#define TG_STREAM_PRIVATE_H

#include "capture-private.h"
#include "device-private.h"

G_BEGIN_DECLS

/* The slow halves of tg__stream_resolve(): the stream TG_STREAM_AUTO or
 * NULL stands for, and the device check of a stream when the process sees
 * several devices. */
cudaStream_t tg__stream_pick (cudaStream_t stream, cudaStream_t bound, int device,
                              GError **error);
gboolean tg__stream_check_device (cudaStream_t stream, int device, TgCaptureState state,
                                  GError **error);

/* Stream resolution, the one implementation: TG_STREAM_AUTO becomes the
 * registered capture's stream, else @bound (TG_STREAM_AUTO: none), else
 * TrackGen's default stream; NULL becomes cudaStreamLegacy.  Then its capture
 * state in @info, and its device checked through the driver, so a capturing
 * stream is checked too without disturbing its capture (a stream whose
 * capture is invalidated is not checked: every call on it fails anyway, and
 * the driver refuses to say).  Call with @device current. */
static inline cudaStream_t
tg__stream_resolve (cudaStream_t stream, cudaStream_t bound, int device,
                    TgCaptureInfo *info, GError **error)
{
  /* Inline, as every call resolves: a stream named by the caller, on the
   * only device, costs one capture query and no other call. */
  if (G_UNLIKELY (stream == TG_STREAM_AUTO || stream == NULL)
      && (stream = tg__stream_pick (stream, bound, device, error)) == NULL)
    return NULL;
  if (!tg__capture_query (stream, info, error)
      || (g_atomic_int_get (&tg__n_devices) != 1
          && !tg__stream_check_device (stream, device, info->state, error)))
    return NULL;
  return stream;
}

G_END_DECLS

#endif
