/* SPDX-License-Identifier: Apache-2.0 */
/* stages-private.h: the stage walker and the trial capture of stages into a
 * graph of the producer's own (stages.c).  Below every policy path: run.c
 * (EAGER, RECORD) and runner.c (REPLAY) call into it, it calls none of them.
 * Private to libtrackgen. */
#ifndef TG_STAGES_PRIVATE_H
#define TG_STAGES_PRIVATE_H

#include "producer-private.h"

G_BEGIN_DECLS

/* What one call runs: stages [first, first + n), guarded by @flag (a device
 * flag: the call's condition) unless it is NULL. */
typedef struct
{
  guint first, n;
  const gint32 *flag;
} TgStagesCall;

/* A TgDeviceFunc whose data is a TgStagesCall: runs those stages in order on
 * @launch (under the condition, in an IF node when capturing).  Under RECORD
 * it checks the caller's capture after each stage. */
gboolean tg__stages_call (const TgLaunch *launch, gpointer call, GError **error);

/* Captures @body (run on a launch derived from @base) into a new graph of the
 * producer's own, on its private stream, never touching the caller's
 * streams.  A stage the capture cannot hold is NOT_CAPTURABLE; a stage that
 * broke the caller's capture (RECORD) is FAILED. */
gboolean tg__stages_capture (TgProducer *producer, const TgLaunch *base,
                             enum cudaStreamCaptureMode mode, TgDeviceFunc body,
                             gpointer data, cudaGraph_t *graph, GError **error);

G_END_DECLS

#endif
