/* SPDX-License-Identifier: Apache-2.0 */
/* policies.c: one producer call under each policy (doc/policies.md). */
#include "snippets.h"

//! [auto]
gboolean
run_auto (TgProducer *producer, cudaStream_t stream, GError **error)
{
  /* Not capturing: REPLAY, since every device stage is capture-safe (the
   * first call captures the producer's own graph, later calls launch it).
   * Capturing: RECORD into the capture in progress on the stream. */
  return tg_producer_run (producer, stream, TG_POLICY_AUTO, tg_unconditional (), error);
}
//! [auto]

//! [eager]
gboolean
run_eager (TgProducer *producer, cudaStream_t stream, GError **error)
{
  /* EAGER launches every stage now, on @stream.  The loop stage reads its
   * status back once per iteration, so this call returns after the
   * relaxation ended. */
  return tg_producer_run (producer, stream, TG_POLICY_EAGER, tg_unconditional (),
                          error);
}
//! [eager]

//! [bound-stream]
gboolean
run_on_bound_stream (TgProducer *producer, cudaStream_t stream, GError **error)
{
  /* Calls that pass TG_STREAM_AUTO use the bound stream, unless a capture
   * scope is registered on this thread (its stream comes first).  A NULL
   * stream would not mean "not named": it is CUDA's legacy default stream. */
  if (!tg_producer_set_stream (producer, stream, error))
    return FALSE;
  return tg_producer_run (producer, TG_STREAM_AUTO, TG_POLICY_AUTO, tg_unconditional (),
                          error);
}
//! [bound-stream]

//! [replay]
gboolean
run_replay (TgProducer *producer, cudaStream_t stream, guint n_calls, GError **error)
{
  TgRunnerStats stats;

  for (guint i = 0; i < n_calls; i++)
    if (!tg_producer_run (producer, stream, TG_POLICY_REPLAY, tg_unconditional (),
                          error))
      return FALSE;
  /* No HOST stage: one segment, captured once, launched n_calls times. */
  tg_producer_get_runner_stats (producer, &stats);
  g_debug ("%u segment(s), %" G_GUINT64_FORMAT " capture(s), %" G_GUINT64_FORMAT
           " replays",
           stats.n_segments, stats.n_captures, stats.n_replays);
  return TRUE;
}
//! [replay]

//! [record]
cudaGraphExec_t
record_into_own_capture (TgProducer *producer, cudaStream_t stream, GError **error)
{
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  cudaError_t status;
  gboolean recorded;

  /* The caller begins the capture (any mode), TrackGen records into it. */
  status = cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal);
  if (status != cudaSuccess)
    {
      g_set_error (error, TG_CUDA_ERROR, status, "cudaStreamBeginCapture: %s",
                   cudaGetErrorName (status));
      return NULL;
    }
  /* The stage functions run now, once each, never at replay: into a trial
   * capture of TrackGen's own, whose work then joins this capture (this
   * producer's loop as a WHILE node made here, its body's captured work
   * placed in it; without conditions, loops or allocations, one child-graph
   * node). */
  recorded = tg_producer_run (producer, stream, TG_POLICY_RECORD, tg_unconditional (),
                              error);
  /* End the capture whatever happened: a refused call left it as it was, a
   * TG_CAPTURE_ERROR_FAILED one broke it (cudaStreamEndCapture fails). */
  status = cudaStreamEndCapture (stream, &graph);
  if (recorded && status == cudaSuccess)
    status = cudaGraphInstantiate (&exec, graph, 0);
  if (recorded && status != cudaSuccess)
    {
      g_set_error (error, TG_CUDA_ERROR, status, "ending or instantiating: %s",
                   cudaGetErrorName (status));
      exec = NULL;
    }
  if (graph != NULL)
    cudaGraphDestroy (graph);
  return exec; /* cudaGraphLaunch (exec, stream) replays the producer's work */
}
//! [record]

//! [conditional]
gboolean
run_conditional (TgProducer *producer, cudaStream_t stream, const gint32 *any_done,
                 GError **error)
{
  /* any_done is a gint32 in device memory, written by earlier device work.
   * Outside a capture (REPLAY), the producer's own graph holds an IF node:
   * the device skips the work when *any_done == 0, with no readback.
   * Inside a capture (RECORD), the caller's graph gets the IF node.
   * Under EAGER, *any_done is read back first: one stream synchronization. */
  return tg_producer_run (producer, stream, TG_POLICY_AUTO, tg_conditional (any_done),
                          error);
}
//! [conditional]

//! [resolve]
gboolean
explain_policy (TgProducer *producer, cudaStream_t stream)
{
  g_autoptr (GError) error = NULL;
  TgPolicy policy;
  cudaStream_t resolved;

  /* What a call would do, without doing it. */
  if (!tg_producer_resolve (producer, stream, TG_POLICY_AUTO, tg_unconditional (),
                            &policy, &resolved, &error))
    {
      g_message ("a call would be refused: %s", error->message);
      return FALSE;
    }
  g_message ("a call would run as %s on stream %p", tg_policy_to_string (policy),
             (void *)resolved);
  return TRUE;
}
//! [resolve]
