/* SPDX-License-Identifier: Apache-2.0 */
/* condition-private.h: conditions (IF, IF/ELSE), switches and bounded loops
 * around bodies, captured as conditional nodes or run eagerly on a decision
 * the host waits for (condition.c).  Private to libtrackgen. */
#ifndef TG_CONDITION_PRIVATE_H
#define TG_CONDITION_PRIVATE_H

#include "producer-private.h"

G_BEGIN_DECLS

/* Runs @body when the condition holds, else @otherwise (NULL: nothing).  It
 * holds when *@flag is non-zero, or, when @decide is set (and @flag NULL),
 * when the kernels @decide enqueues set it so (tg_condition_set()). */
gboolean tg__condition_if (const TgLaunch *launch, const gint32 *flag,
                           TgDeviceFunc decide, TgDeviceFunc body,
                           TgDeviceFunc otherwise, gpointer data, GError **error);
/* Runs cases[i], nothing when i is out of range: i is *@index, or what the
 * kernels @decide enqueues set (when @decide is set and @index NULL). */
gboolean tg__condition_switch (const TgLaunch *launch, const gint32 *index,
                               TgDeviceFunc decide, guint n_cases,
                               const TgDeviceFunc *cases, gpointer data,
                               GError **error);
/* Runs @body at most @max_iters times, the outcome in @status: while *@flag
 * is non-zero after each iteration or, with @by_body, while the body's
 * tg_loop_next() says so, and then @flag (may be NULL: always enter) is
 * read at entry only. */
gboolean tg__condition_while (const TgLaunch *launch, const gint32 *flag,
                              gboolean by_body, guint max_iters, TgLoopStatus *status,
                              TgDeviceFunc body, gpointer data, GError **error);

G_END_DECLS

#endif
