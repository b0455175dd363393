/* errors.c: telling TrackGen's errors apart (doc/errors.md). */
#include "snippets.h"

//! [refusal]
gboolean
record_or_run_apart (TgProducer *producer, cudaStream_t capturing, gboolean *recorded,
                     GError **error)
{
  g_autoptr (GError) local = NULL;

  *recorded = tg_producer_run (producer, capturing, TG_POLICY_AUTO, tg_unconditional (),
                               &local);
  if (*recorded)
    return TRUE;
  if (g_error_matches (local, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE))
    {
      /* Refused before anything was recorded: the capture is intact and can
       * go on.  Run the producer outside the graph, between its replays. */
      g_message ("not in the graph: %s", local->message);
      return TRUE;
    }
  /* TG_CAPTURE_ERROR_FAILED: the capture is broken (or holds part of the
   * call); end it with cudaStreamEndCapture and capture again.  Anything
   * else (TG_CUDA_ERROR, TG_ARGUMENT_ERROR, a stage's own error): report. */
  g_propagate_error (error, g_steal_pointer (&local));
  return FALSE;
}
//! [refusal]

//! [cuda-code]
const char *
cuda_error_name_of (const GError *error)
{
  /* TG_CUDA_ERROR's code is the cudaError_t itself. */
  if (error == NULL || error->domain != TG_CUDA_ERROR)
    return NULL;
  return cudaGetErrorName ((cudaError_t)error->code);
}
//! [cuda-code]
