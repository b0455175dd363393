/* policy.c: the policy names, and the messages of the execution-policy
 * table (policy-private.h). */
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

gboolean
tg__policy_refuse_with (const GError *refusal, GError **error)
{
  if (error != NULL && *error == NULL)
    *error = g_error_copy (refusal);
  return FALSE;
}

gboolean
tg__policy_refuse (TgPolicyRefusal why, TgPolicy requested, GError **error)
{
  switch (why)
    {
    case TG_POLICY_REFUSE_INVALIDATED:
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED,
                     "the capture on this stream is invalidated (an earlier operation "
                     "broke it): end it with cudaStreamEndCapture and capture again");
      break;
    case TG_POLICY_REFUSE_IMPLICIT:
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                     "the legacy default stream is joined to a capture in progress on "
                     "a blocking stream: work launched on it would invalidate that "
                     "capture; pass a non-blocking stream");
      break;
    case TG_POLICY_REFUSE_RUN:
      tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_POLICY,
                     "TG_POLICY_%s cannot apply to a capturing stream: work on it "
                     "is recorded, never run; pass TG_POLICY_AUTO or "
                     "TG_POLICY_RECORD",
                     requested == TG_POLICY_EAGER ? "EAGER" : "REPLAY");
      break;
    case TG_POLICY_REFUSE_NO_CAPTURE:
    default:
      tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_POLICY,
                     "TG_POLICY_RECORD needs a capture in progress on the stream, "
                     "and there is none: begin a capture first, or pass "
                     "TG_POLICY_AUTO");
      break;
    }
  return FALSE;
}
