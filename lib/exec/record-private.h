/* SPDX-License-Identifier: Apache-2.0 */
/* record-private.h: RECORD, one call recorded into the caller's capture
 * (record.c).  Private to libtrackgen. */
#ifndef TG_RECORD_PRIVATE_H
#define TG_RECORD_PRIVATE_H

#include "producer-private.h"
#include "scope-private.h"

G_BEGIN_DECLS

/* Records the call @base describes (its stream is the caller's capturing
 * stream) under @condition into the caller's capture; @scope is the
 * registered capture it records into, or NULL.  A refused call leaves the
 * caller's capture with the nodes it had. */
gboolean tg__record (TgProducer *producer, TgLaunch *base, TgScope *scope,
                     TgCondition condition, GError **error);

/* Calls @func, one stage function of the producer's (a stage, its else
 * branch, a case, a loop body), on @launch.  Under RECORD it is a unit:
 * the trial captures its work on its own, so that the pass into the caller
 * can place that graph instead of calling @func again. */
gboolean tg__record_unit (const TgLaunch *launch, TgDeviceFunc func, gpointer data,
                          GError **error);

/* The pass of RECORD @launch runs in: 0 (another policy), 1 (the trial),
 * 2 (into the caller's capture). */
guint tg__record_pass (const TgLaunch *launch);

G_END_DECLS

#endif
