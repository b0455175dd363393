/* SPDX-License-Identifier: Apache-2.0 */
/* kernel-decisions.c: a stage whose kernels decide their IF and their loop
 * (doc/capture.md; the kernels are in kernel-decisions.cu). */
#include "snippets.h"

static gboolean
launched (cudaError_t status, const char *what, GError **error)
{
  if (status == cudaSuccess)
    return TRUE;
  g_set_error (error, TG_CUDA_ERROR, status, "%s: %s", what, cudaGetErrorName (status));
  return FALSE;
}

//! [loop]
/* One iteration; its kernel decides whether another runs. */
static gboolean
relax (const TgLaunch *launch, gpointer data, GError **error)
{
  const SimBuffers *sim = data;

  return launched (
      track_launch_relax_deciding (tg_launch_get_stream (launch), sim->n_envs,
                                   tg_launch_get_binding (launch, "done"),
                                   tg_launch_get_binding (launch, "tracks"),
                                   tg_launch_get_loop (launch)),
      "track_launch_relax_deciding", error);
}

/* The regeneration: sampling (elided), then at most 32 sweeps, as long as
 * the tracks move.  The loop always enters (no entry flag). */
static gboolean
regenerate (const TgLaunch *launch, gpointer data, GError **error)
{
  const SimBuffers *sim = data;

  return tg_launch_while_by (launch, NULL, 32, sim->relax_status, relax, data, error);
}
//! [loop]

//! [if]
/* Decides the IF: the step kernel sets it. */
static gboolean
step (const TgLaunch *launch, gpointer data, GError **error)
{
  const SimBuffers *sim = data;

  return launched (sim_launch_step_deciding (tg_launch_get_stream (launch), sim->n_envs,
                                             tg_launch_get_binding (launch, "done"),
                                             tg_launch_get_condition (launch)),
                   "sim_launch_step_deciding", error);
}

/* A stage: step, and regenerate when an env finished. */
static gboolean
step_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_launch_if_by (launch, step, regenerate, NULL, data, error);
}
//! [if]

//! [stage]
TgProducer *
deciding_producer_new (const SimBuffers *sim)
{
  TgProducer *p = tg_producer_new ("step", 0);
  guint stage = tg_producer_add_device_stage (p, "step", TG_STAGE_CAPTURE_SAFE,
                                              step_stage, (gpointer)sim, NULL, NULL);

  tg_producer_declare_binding (p, stage, "done", sim->n_envs, NULL);
  tg_producer_declare_binding (p, stage, "tracks", sim->n_envs * 64 * sizeof (float),
                               NULL);
  return p;
}

/* The same loop as a loop stage: the body decides, the flag is read at
 * entry only (0: skipped). */
guint
add_relax_stage (TgProducer *p, const SimBuffers *sim)
{
  const TgLoopSpec loop = { .flag_binding = "again",
                            .status_binding = "relax_status",
                            .max_iters = 32,
                            .set_by_body = TRUE };
  guint stage = tg_producer_add_loop_stage (p, "relax", TG_STAGE_CAPTURE_SAFE, &loop,
                                            relax, (gpointer)sim, NULL, NULL);

  tg_producer_declare_binding (p, stage, "done", sim->n_envs, NULL);
  tg_producer_declare_binding (p, stage, "tracks", sim->n_envs * 64 * sizeof (float),
                               NULL);
  return stage;
}
//! [stage]
