/* SPDX-License-Identifier: Apache-2.0 */
/* conditions.c: a switch stage, and a guarded stage with an else branch
 * (doc/capture.md). */
#include "snippets.h"

/* A launcher's cudaError_t as a stage's result. */
static gboolean
launched (cudaError_t status, const char *what, GError **error)
{
  if (status == cudaSuccess)
    return TRUE;
  g_set_error (error, TG_CUDA_ERROR, status, "%s: %s", what, cudaGetErrorName (status));
  return FALSE;
}

//! [switch]
static gboolean
layout (const TgLaunch *launch, const SimBuffers *sim, gint kind, GError **error)
{
  return launched (track_launch_layout (tg_launch_get_stream (launch), sim->n_envs,
                                        kind, tg_launch_get_binding (launch, "done"),
                                        tg_launch_get_binding (launch, "tracks")),
                   "track_launch_layout", error);
}

static gboolean
oval (const TgLaunch *launch, gpointer sim, GError **error)
{
  return layout (launch, sim, 0, error);
}

static gboolean
twisty (const TgLaunch *launch, gpointer sim, GError **error)
{
  return layout (launch, sim, 1, error);
}

static gboolean
city (const TgLaunch *launch, gpointer sim, GError **error)
{
  return layout (launch, sim, 2, error);
}
//! [switch]

//! [else]
static gboolean
scenery (const TgLaunch *launch, const SimBuffers *sim, gboolean night, GError **error)
{
  return launched (track_launch_scenery (tg_launch_get_stream (launch), sim->n_envs,
                                         night, tg_launch_get_binding (launch, "done"),
                                         tg_launch_get_binding (launch, "tracks")),
                   "track_launch_scenery", error);
}

static gboolean
night_scenery (const TgLaunch *launch, gpointer sim, GError **error)
{
  return scenery (launch, sim, TRUE, error);
}

static gboolean
day_scenery (const TgLaunch *launch, gpointer sim, GError **error)
{
  return scenery (launch, sim, FALSE, error);
}
//! [else]

//! [producer]
TgProducer *
layout_producer_new (const SimBuffers *sim)
{
  static const TgDeviceFunc layouts[] = { oval, twisty, city };
  TgProducer *p = tg_producer_new ("layout", 0);
  gsize tracks = sim->n_envs * 64 * sizeof (float);
  guint shape, decorate;

  /* A SWITCH node on the gint32 bound as "kind": case kind runs, none when
   * kind is negative or not below 3. */
  TgSwitchSpec sw = { .index_binding = "kind",
                      .n_cases = G_N_ELEMENTS (layouts),
                      .cases = layouts };
  shape = tg_producer_add_switch_stage (p, "shape", TG_STAGE_CAPTURE_SAFE, &sw,
                                        (gpointer)sim, NULL, NULL);
  /* An IF node with two bodies on the gint32 bound as "night". */
  decorate = tg_producer_add_device_stage (p, "scenery", TG_STAGE_CAPTURE_SAFE,
                                           night_scenery, (gpointer)sim, NULL, NULL);
  tg_producer_set_stage_condition (p, decorate, "night", NULL);
  tg_producer_set_stage_else (p, decorate, day_scenery, NULL);

  /* "kind" and "night" are declared by the stages that use them as index and
   * condition; the bodies' own bindings are declared here. */
  tg_producer_declare_binding (p, shape, "done", sim->n_envs, NULL);
  tg_producer_declare_binding (p, shape, "tracks", tracks, NULL);
  tg_producer_declare_binding (p, decorate, "done", sim->n_envs, NULL);
  tg_producer_declare_binding (p, decorate, "tracks", tracks, NULL);
  return p;
}
//! [producer]
