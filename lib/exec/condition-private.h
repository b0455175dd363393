/* condition-private.h: conditions (IF, IF/ELSE), switches and bounded loops
 * around bodies, captured as conditional nodes or run eagerly with a
 * readback (condition.c).  Private to libtrackgen. */
#ifndef TG_CONDITION_PRIVATE_H
#define TG_CONDITION_PRIVATE_H

#include "producer-private.h"

G_BEGIN_DECLS

/* Runs @body when *@flag is non-zero, else @otherwise (NULL: nothing). */
gboolean tg__condition_if (const TgLaunch *launch, const gint32 *flag,
                           TgDeviceFunc body, TgDeviceFunc otherwise, gpointer data,
                           GError **error);
/* Runs cases[*index], nothing when the index is out of range. */
gboolean tg__condition_switch (const TgLaunch *launch, const gint32 *index,
                               guint n_cases, const TgDeviceFunc *cases, gpointer data,
                               GError **error);
/* Runs @body while *@flag is non-zero, at most @max_iters times; the outcome
 * goes to @status. */
gboolean tg__condition_while (const TgLaunch *launch, const gint32 *flag,
                              guint max_iters, TgLoopStatus *status, TgDeviceFunc body,
                              gpointer data, GError **error);

G_END_DECLS

#endif
