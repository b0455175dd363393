/* SPDX-License-Identifier: Apache-2.0 */
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
      /* Refused with nothing recorded: the capture is intact and can go on.
       * Run the producer outside the graph, between its replays. */
      g_message ("not in the graph: %s", local->message);
      return TRUE;
    }
  /* TG_CAPTURE_ERROR_FAILED: the capture is broken (a stage invalidated it)
   * or holds part of the call: end it with cudaStreamEndCapture and capture
   * again.  TG_STATE_ERROR, TG_ARGUMENT_ERROR or a stage's own error: the
   * call stopped before it changed the capture.  TG_CUDA_ERROR: CUDA failed
   * (no memory, a lost device): treat the capture as lost.  Report all. */
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

//! [rebind-handler]
/* Called on the thread that rebinds, after the binding changed. */
static gboolean
on_rebind (TgProducer *producer, const char *binding, gpointer old_ptr,
           gpointer new_ptr, gpointer user_data)
{
  gboolean *step_graph_stale = user_data;

  /* The producer's own graphs follow by themselves; the step graph that
   * recorded it still uses old_ptr: re-capture it before its next replay. */
  *step_graph_stale = TRUE;
  return TRUE; /* handled: no RebindAfterCaptureWarning is logged */
}

void
watch_rebinds (TgProducer *producer, gboolean *step_graph_stale)
{
  tg_producer_set_rebind_handler (producer, on_rebind, step_graph_stale, NULL);
}
//! [rebind-handler]

//! [live-objects]
gboolean
nothing_leaked (void)
{
  TgLiveObjects live;

  /* Producers that graphs retained are dropped on the reaper thread once the
   * graphs are gone: wait for that first. */
  if (!tg_release_wait (G_USEC_PER_SEC))
    return FALSE;
  tg_get_live_objects (&live);
  /* A release CUDA refused was logged as a warning; the object stays counted. */
  if (live.failed_releases > 0)
    g_message ("%d releases failed", live.failed_releases);
  /* Streams are not checked: TrackGen's default streams live for good. */
  return live.producers == 0 && live.graphs == 0 && live.graph_execs == 0
         && live.captures == 0 && live.failed_releases == 0;
}
//! [live-objects]
