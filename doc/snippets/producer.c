/* SPDX-License-Identifier: Apache-2.0 */
/* producer.c: the track producer the pages use, whose call is the IF node of
 * a simulator's step graph (doc/capture.md, doc/policies.md). */
#include "snippets.h"

//! [seed-stages]
/* Stage "advance": a new epoch for every env that finished (done[i] != 0). */
static gboolean
advance_stage (const TgLaunch *launch, gpointer user_data, GError **error)
{
  TgSeedState *seeds = user_data;

  return tg_seed_state_advance (seeds, tg_launch_get_stream (launch),
                                tg_launch_get_binding (launch, "done"),
                                tg_seed_state_get_n_envs (seeds), error);
}

/* Stage "keys": keys[i] = tg_effective_seed (seed[i], epoch[i]). */
static gboolean
keys_stage (const TgLaunch *launch, gpointer user_data, GError **error)
{
  TgSeedState *seeds = user_data;

  return tg_seed_state_fill_effective (seeds, tg_launch_get_stream (launch),
                                       tg_launch_get_binding (launch, "keys"),
                                       tg_seed_state_get_n_envs (seeds), error);
}
//! [seed-stages]

//! [track-stages]
/* A launcher's cudaError_t as a stage's result. */
static gboolean
launched (cudaError_t status, const char *what, GError **error)
{
  if (status == cudaSuccess)
    return TRUE;
  g_set_error (error, TG_CUDA_ERROR, status, "%s: %s", what, cudaGetErrorName (status));
  return FALSE;
}

/* Stage "sample": new tracks for the finished envs; sets again = 1. */
static gboolean
sample_stage (const TgLaunch *launch, gpointer user_data, GError **error)
{
  const SimBuffers *sim = user_data;

  return launched (track_launch_sample (tg_launch_get_stream (launch), sim->n_envs,
                                        tg_launch_get_binding (launch, "done"),
                                        tg_launch_get_binding (launch, "keys"),
                                        tg_launch_get_binding (launch, "tracks"),
                                        tg_launch_get_binding (launch, "again")),
                   "track_launch_sample", error);
}

/* Body of the loop stage "relax": one sweep; clears again once converged. */
static gboolean
relax_body (const TgLaunch *launch, gpointer user_data, GError **error)
{
  const SimBuffers *sim = user_data;

  return launched (track_launch_relax (tg_launch_get_stream (launch), sim->n_envs,
                                       tg_launch_get_binding (launch, "done"),
                                       tg_launch_get_binding (launch, "tracks"),
                                       tg_launch_get_binding (launch, "again")),
                   "track_launch_relax", error);
}
//! [track-stages]

//! [producer]
TgProducer *
track_producer_new (TgSeedState *seeds, const SimBuffers *sim, GError **error)
{
  g_autoptr (TgProducer) p
      = tg_producer_new ("tracks", tg_seed_state_get_device (seeds));
  /* At most 16 sweeps: a WHILE node under a capture, a host loop eagerly. */
  const TgLoopSpec relax
      = { .flag_binding = "again", .status_binding = "relax_status", .max_iters = 16 };
  gsize n = sim->n_envs, keys = n * sizeof (guint64), tracks = n * 64 * sizeof (float);
  guint advance, fill, sample, relaxation;

  /* Every stage only enqueues on the stream it is given: capture-safe. */
  advance = tg_producer_add_device_stage (p, "advance", TG_STAGE_CAPTURE_SAFE,
                                          advance_stage, tg_seed_state_ref (seeds),
                                          (GDestroyNotify)tg_seed_state_unref, NULL);
  fill = tg_producer_add_device_stage (p, "keys", TG_STAGE_CAPTURE_SAFE, keys_stage,
                                       tg_seed_state_ref (seeds),
                                       (GDestroyNotify)tg_seed_state_unref, NULL);
  sample = tg_producer_add_device_stage (p, "sample", TG_STAGE_CAPTURE_SAFE,
                                         sample_stage, (gpointer)sim, NULL, NULL);
  relaxation = tg_producer_add_loop_stage (p, "relax", TG_STAGE_CAPTURE_SAFE, &relax,
                                           relax_body, (gpointer)sim, NULL, NULL);

  /* Each stage declares the bindings it looks up and the bytes it uses of
   * them; the loop's flag and status are declared by the loop itself.  A
   * call with one missing or too small is refused before anything runs. */
  tg_producer_declare_binding (p, advance, "done", n, NULL);
  tg_producer_declare_binding (p, fill, "keys", keys, NULL);
  tg_producer_declare_binding (p, sample, "done", n, NULL);
  tg_producer_declare_binding (p, sample, "keys", keys, NULL);
  tg_producer_declare_binding (p, sample, "tracks", tracks, NULL);
  tg_producer_declare_binding (p, sample, "again", sizeof (gint32), NULL);
  tg_producer_declare_binding (p, relaxation, "done", n, NULL);
  tg_producer_declare_binding (p, relaxation, "tracks", tracks, NULL);

  /* Everything a graph bakes in is a binding. */
  if (!tg_producer_bind (p, "done", sim->done, n, error)
      || !tg_producer_bind (p, "keys", sim->keys, keys, error)
      || !tg_producer_bind (p, "tracks", sim->tracks, tracks, error)
      || !tg_producer_bind (p, "again", sim->again, sizeof (gint32), error)
      || !tg_producer_bind (p, "relax_status", sim->relax_status, sizeof (TgLoopStatus),
                            error))
    return NULL;
  return g_steal_pointer (&p);
}
//! [producer]
