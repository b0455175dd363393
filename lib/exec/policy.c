/* policy.c: the execution-policy table of the design, in one function. */
#include "config.h"
#include "error-private.h"
#include "policy-private.h"

static const char *const policy_names[] = { "auto", "eager", "replay", "record" };
G_STATIC_ASSERT (G_N_ELEMENTS (policy_names) == TG_POLICY_RECORD + 1);

const char *
tg_policy_to_string (TgPolicy policy)
{
  g_return_val_if_fail ((guint)policy <= TG_POLICY_RECORD, "invalid");
  return policy_names[policy];
}

static gboolean
refuse (const GError *refusal, GError **error)
{
  if (error != NULL && *error == NULL)
    *error = g_error_copy (refusal);
  return FALSE;
}

/* @record_refusal: why the work cannot be recorded into a capture (NULL: it
 * can); @replay_refusal: why it cannot be captured into own graphs. */
gboolean
tg__policy_decide (TgPolicy requested, TgCaptureState state,
                   const GError *record_refusal, const GError *replay_refusal,
                   TgPolicy *policy, GError **error)
{
  switch (state)
    {
    case TG_CAPTURE_INVALIDATED:
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED,
                     "the capture on this stream is invalidated (an earlier operation "
                     "broke it): end it with cudaStreamEndCapture and capture again");
      return FALSE;

    case TG_CAPTURE_IMPLICIT:
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                     "the legacy default stream is joined to a capture in progress on "
                     "a blocking stream: work launched on it would invalidate that "
                     "capture; pass a non-blocking stream");
      return FALSE;

    case TG_CAPTURE_ACTIVE:
      if (requested == TG_POLICY_EAGER || requested == TG_POLICY_REPLAY)
        {
          tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_POLICY,
                         "TG_POLICY_%s cannot apply to a capturing stream: work on it "
                         "is recorded, never run; pass TG_POLICY_AUTO or "
                         "TG_POLICY_RECORD",
                         requested == TG_POLICY_EAGER ? "EAGER" : "REPLAY");
          return FALSE;
        }
      if (record_refusal != NULL)
        return refuse (record_refusal, error);
      *policy = TG_POLICY_RECORD;
      return TRUE;

    case TG_CAPTURE_NONE:
    default:
      switch (requested)
        {
        case TG_POLICY_RECORD:
          tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_POLICY,
                         "TG_POLICY_RECORD needs a capture in progress on the stream, "
                         "and there is none: begin a capture first, or pass "
                         "TG_POLICY_AUTO");
          return FALSE;
        case TG_POLICY_EAGER:
          *policy = TG_POLICY_EAGER;
          return TRUE;
        case TG_POLICY_REPLAY:
          if (replay_refusal != NULL)
            return refuse (replay_refusal, error);
          *policy = TG_POLICY_REPLAY;
          return TRUE;
        case TG_POLICY_AUTO:
        default:
          *policy = replay_refusal != NULL ? TG_POLICY_EAGER : TG_POLICY_REPLAY;
          return TRUE;
        }
    }
}
