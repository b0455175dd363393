/* SPDX-License-Identifier: Apache-2.0 */
/* step-graph.c: a simulator's step graph with track regeneration inside it,
 * the picture of doc/capture.md. */
#include "snippets.h"

//! [step-graph]
/* A CUDA result as a GError. */
static gboolean
cuda_ok (cudaError_t status, const char *call, GError **error)
{
  if (status == cudaSuccess)
    return TRUE;
  g_set_error (error, TG_CUDA_ERROR, status, "%s: %s", call, cudaGetErrorName (status));
  return FALSE;
}

cudaGraphExec_t
step_graph_new (const SimBuffers *sim, TgProducer *regen, cudaStream_t stream,
                GError **error)
{
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  gboolean ok;

  if (!cuda_ok (cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal),
                "cudaStreamBeginCapture", error))
    return NULL;
  /* 1. The step kernel: writes done[] and the any_done flag. */
  ok = cuda_ok (sim_launch_step (stream, sim->n_envs, sim->done, sim->any_done),
                "sim_launch_step", error);
  /* 2. Track regeneration, recorded as one IF node on any_done: the masked
   *    epoch advance, the keys, the sampling and the WHILE node of the
   *    relaxation, all skipped on the device when no env finished. */
  ok = ok
       && tg_producer_run (regen, stream, TG_POLICY_AUTO,
                           tg_conditional (sim->any_done), error);
  /* Always end the capture: no stream is left capturing. */
  ok = cuda_ok (cudaStreamEndCapture (stream, &graph), "cudaStreamEndCapture",
                ok ? error : NULL)
       && ok;
  ok = ok
       && cuda_ok (cudaGraphInstantiate (&exec, graph, 0), "cudaGraphInstantiate",
                   error);
  if (graph != NULL)
    cudaGraphDestroy (graph);
  return ok ? exec : NULL;
}

gboolean
step_graph_run (cudaGraphExec_t step, cudaStream_t stream, guint n_steps,
                GError **error)
{
  /* One launch per step: no host round trip, no re-capture. */
  for (guint i = 0; i < n_steps; i++)
    if (!cuda_ok (cudaGraphLaunch (step, stream), "cudaGraphLaunch", error))
      return FALSE;
  return cuda_ok (cudaStreamSynchronize (stream), "cudaStreamSynchronize", error);
}
//! [step-graph]
