/* stream-private.h: which stream a call uses, and whether it is the right
 * device's.  Private to libtrackgen. */
#ifndef TG_STREAM_PRIVATE_H
#define TG_STREAM_PRIVATE_H

#include "capture-private.h"

G_BEGIN_DECLS

/* Stream resolution, the one implementation: TG_STREAM_AUTO becomes the
 * registered capture's stream, else @bound (TG_STREAM_AUTO: none), else
 * TrackGen's default stream; NULL becomes cudaStreamLegacy.  Then its capture
 * state in @info, and its device checked through the driver, so a capturing
 * stream is checked too without disturbing its capture (a stream whose
 * capture is invalidated is not checked: every call on it fails anyway, and
 * the driver refuses to say).  Call with @device current. */
cudaStream_t tg__stream_resolve (cudaStream_t stream, cudaStream_t bound, int device,
                                 TgCaptureInfo *info, GError **error);

G_END_DECLS

#endif
