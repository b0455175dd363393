/* SPDX-License-Identifier: Apache-2.0 */
/* policy-private.h: the execution-policy table of the design, a pure
 * function of its inputs.  Inline, since every call decides: its messages
 * are in policy.c.  Private to libtrackgen. */
#ifndef TG_POLICY_PRIVATE_H
#define TG_POLICY_PRIVATE_H

#include <trackgen/exec.h>

G_BEGIN_DECLS

/* The refusals of the table that come with a message of their own. */
typedef enum
{
  TG_POLICY_REFUSE_INVALIDATED, /* the capture on the stream is broken */
  TG_POLICY_REFUSE_IMPLICIT,    /* the legacy stream joined to a capture */
  TG_POLICY_REFUSE_RUN,         /* EAGER or REPLAY asked on a capturing stream */
  TG_POLICY_REFUSE_NO_CAPTURE,  /* RECORD asked with no capture */
} TgPolicyRefusal;

/* Sets @error for @why (@requested names the policy asked for); FALSE. */
gboolean tg__policy_refuse (TgPolicyRefusal why, TgPolicy requested, GError **error);

/* Sets @error to a copy of @refusal unless one is set; FALSE. */
gboolean tg__policy_refuse_with (const GError *refusal, GError **error);

/* How a call that names no stream would use a capture in progress on the
 * ambient stream (exec.h's TgCallStream), had the stream rule picked it. */
typedef enum
{
  TG_STREAM_USE_RECORD, /* it can be recorded into the capture */
  TG_STREAM_USE_EAGER,  /* TG_POLICY_EAGER: it would run now */
  TG_STREAM_USE_REPLAY, /* TG_POLICY_REPLAY: it would run now */
  TG_STREAM_USE_WAIT,   /* it waits for its stream (seed-state calls) */
  TG_STREAM_USE_BOUND,  /* it would run on the producer's bound stream */
} TgStreamUse;

/* The stream rule's refusal of work beside the ambient stream's capture:
 * sets @error (@producer, or NULL, names the producer, @ambient_name the
 * ambient stream or NULL); FALSE. */
gboolean tg__policy_refuse_beside (TgStreamUse use, const char *producer,
                                   const char *ambient_name, GError **error);

/* @record_refusal: why the work cannot be recorded into a capture (NULL: it
 * can); @replay_refusal: why it cannot be captured into own graphs. */
static inline gboolean
tg__policy_decide (TgPolicy requested, TgCaptureState state,
                   const GError *record_refusal, const GError *replay_refusal,
                   TgPolicy *policy, GError **error)
{
  switch (state)
    {
    case TG_CAPTURE_INVALIDATED:
      return tg__policy_refuse (TG_POLICY_REFUSE_INVALIDATED, requested, error);

    case TG_CAPTURE_IMPLICIT:
      return tg__policy_refuse (TG_POLICY_REFUSE_IMPLICIT, requested, error);

    case TG_CAPTURE_ACTIVE:
      if (requested == TG_POLICY_EAGER || requested == TG_POLICY_REPLAY)
        return tg__policy_refuse (TG_POLICY_REFUSE_RUN, requested, error);
      if (record_refusal != NULL)
        return tg__policy_refuse_with (record_refusal, error);
      *policy = TG_POLICY_RECORD;
      return TRUE;

    case TG_CAPTURE_NONE:
    default:
      switch (requested)
        {
        case TG_POLICY_RECORD:
          return tg__policy_refuse (TG_POLICY_REFUSE_NO_CAPTURE, requested, error);
        case TG_POLICY_EAGER:
          *policy = TG_POLICY_EAGER;
          return TRUE;
        case TG_POLICY_REPLAY:
          if (replay_refusal != NULL)
            return tg__policy_refuse_with (replay_refusal, error);
          *policy = TG_POLICY_REPLAY;
          return TRUE;
        case TG_POLICY_AUTO:
        default:
          *policy = replay_refusal != NULL ? TG_POLICY_EAGER : TG_POLICY_REPLAY;
          return TRUE;
        }
    }
}

G_END_DECLS

#endif
