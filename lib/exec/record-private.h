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

G_END_DECLS

#endif
