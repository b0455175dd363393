/* policy-private.h: the execution-policy table of the design, a pure
 * function of its inputs (policy.c).  Private to libtrackgen. */
#ifndef TG_POLICY_PRIVATE_H
#define TG_POLICY_PRIVATE_H

#include <trackgen/exec.h>

G_BEGIN_DECLS

/* @record_refusal: why the work cannot be recorded into a capture (NULL: it
 * can); @replay_refusal: why it cannot be captured into own graphs. */
gboolean tg__policy_decide (TgPolicy requested, TgCaptureState state,
                            const GError *record_refusal, const GError *replay_refusal,
                            TgPolicy *policy, GError **error);

G_END_DECLS

#endif
