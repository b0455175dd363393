/* SPDX-License-Identifier: Apache-2.0 */
/* record-plan-private.h: RECORD's plan, what a RECORD call carries through
 * the stage walker (record-plan.c): the pass it is in and the units of its
 * stage functions.  Below the walker (stages.c) and RECORD (record.c), which
 * both use it, so neither calls the other back.  Private to libtrackgen. */
#ifndef TG_RECORD_PLAN_PRIVATE_H
#define TG_RECORD_PLAN_PRIVATE_H

#include "producer-private.h"

G_BEGIN_DECLS

struct _TgRecordPlan
{
  guint pass;         /* 1: the trial; 2: into the caller's capture */
  gboolean into_body; /* the caller's capture fills a conditional body */
  GArray *units;      /* what the trial learnt of each unit; NULL when the
                       * call has no conditions (no units) */
  guint next;         /* the second pass: the next unit */
};

/* Sets up @plan for the trial (pass 1); @units: the stage functions are
 * units (the call records conditional nodes of TrackGen's). */
void tg__record_plan_init (TgRecordPlan *plan, gboolean units, gboolean into_body);
/* Frees what the units of @plan still hold. */
void tg__record_plan_clear (TgRecordPlan *plan);

/* Calls @func, one stage function of the producer's (a stage, its else
 * branch, a case, a loop body), on @launch.  Under RECORD it is a unit:
 * the trial captures its work on its own, so that the pass into the caller
 * can place that graph instead of calling @func again. */
gboolean tg__record_unit (const TgLaunch *launch, TgDeviceFunc func, gpointer data,
                          GError **error);

/* Where the units of a body begin, and going back there: a body captured
 * again (condition.c, when a segment held another library's conditional
 * node) calls its stage functions again, which must meet the units they met
 * the first time.  Nothing outside RECORD's units. */
guint tg__record_plan_mark (const TgLaunch *launch);
void tg__record_plan_rewind (const TgLaunch *launch, guint mark);

/* The pass of RECORD @launch runs in: 0 (another policy), 1 (the trial),
 * 2 (into the caller's capture).  Inline: checked mode and the launch's
 * getter ask it, below the units. */
static inline guint
tg__record_pass (const TgLaunch *launch)
{
  return launch->plan != NULL ? launch->plan->pass : 0;
}

G_END_DECLS

#endif
