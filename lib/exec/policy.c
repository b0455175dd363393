/* SPDX-License-Identifier: Apache-2.0 */
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

gboolean
tg__policy_refuse_beside (TgStreamUse use, const char *producer,
                          const char *ambient_name, GError **error)
{
  static const char *const how[][2] = {
    [TG_STREAM_USE_EAGER]
    = { "TG_POLICY_EAGER would run it now", "pass TG_POLICY_AUTO to record it" },
    [TG_STREAM_USE_REPLAY]
    = { "TG_POLICY_REPLAY would run it now", "pass TG_POLICY_AUTO to record it" },
    [TG_STREAM_USE_WAIT] = { "it waits for its stream, so it would run now",
                             "record an enqueued call (advance, reset the epochs, "
                             "set seeds from the device) instead" },
    [TG_STREAM_USE_BOUND] = { "it would run on the producer's bound stream",
                              "pass the capturing stream to record it" },
  };
  g_autofree char *who
      = producer != NULL ? g_strdup_printf ("producer '%s'", producer) : NULL;
  G_STATIC_ASSERT (G_N_ELEMENTS (how) == TG_STREAM_USE_BOUND + 1);

  g_return_val_if_fail (use != TG_STREAM_USE_RECORD && use < G_N_ELEMENTS (how), FALSE);
  tg__set_error_about (error, producer, NULL, NULL, TG_STATE_ERROR,
                       TG_STATE_ERROR_POLICY,
                       "%s names no stream (TG_STREAM_AUTO), and %s is capturing: %s "
                       "beside the capture, never in it; %s, or call it outside the "
                       "capture",
                       who != NULL ? who : "the call",
                       ambient_name != NULL ? ambient_name : "the ambient stream",
                       how[use][0], how[use][1]);
  return FALSE;
}
