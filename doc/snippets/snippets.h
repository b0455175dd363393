/* SPDX-License-Identifier: Apache-2.0 */
/* snippets.h: what the examples of the narrative pages in doc/ share.
 * The snippet files are compiled by `make check` (doc/libsnippets.a) so that
 * every example the pages show builds against the public headers;
 * tests/snippets-test links them with a simulator of its own and runs them. */
#ifndef TG_DOC_SNIPPETS_H
#define TG_DOC_SNIPPETS_H

#include <trackgen/trackgen.h>

G_BEGIN_DECLS

//! [simulator]
/* The simulator's own kernels, each behind an extern "C" launcher in a .cu
 * file of the simulator (declared here; the pages' test defines trivial
 * ones). */
/* Steps every env; done[i] = 1 when env i finished its episode, and
 * *any_done = 1 when some env did (else 0). */
cudaError_t sim_launch_step (cudaStream_t stream, guint n_envs, guint8 *done,
                             gint32 *any_done);
/* Samples a fresh track for every env whose done byte is set, keyed by
 * keys[i]; sets *again = 1 so that the relaxation runs. */
cudaError_t track_launch_sample (cudaStream_t stream, guint n_envs, const guint8 *done,
                                 const guint64 *keys, float *tracks, gint32 *again);
/* One relaxation sweep over the new tracks; *again = 0 once they converged. */
cudaError_t track_launch_relax (cudaStream_t stream, guint n_envs, const guint8 *done,
                                float *tracks, gint32 *again);

/* Device buffers of the simulator (cudaMalloc'd by it). */
typedef struct
{
  guint n_envs;
  guint8 *done;               /* n_envs bytes */
  gint32 *any_done;           /* the step graph's IF flag */
  guint64 *keys;              /* n_envs effective seeds */
  float *tracks;              /* the generated tracks, 64 floats an env */
  gint32 *again;              /* the relaxation's continue flag */
  TgLoopStatus *relax_status; /* how the last relaxation ended */
} SimBuffers;
//! [simulator]

/* Two more of its kernels, for conditions.c: lay out a track of layout
 * @kind, and decorate it by night or by day, for every env that finished. */
cudaError_t track_launch_layout (cudaStream_t stream, guint n_envs, gint kind,
                                 const guint8 *done, float *tracks);
cudaError_t track_launch_scenery (cudaStream_t stream, guint n_envs, gboolean night,
                                  const guint8 *done, float *tracks);

/* The kernels of kernel-decisions.cu: the step decides the IF of the
 * regeneration (any env done), the relaxation its loop (tracks moving). */
cudaError_t sim_launch_step_deciding (cudaStream_t stream, guint n_envs, guint8 *done,
                                      TgDeviceCondition regenerate);
cudaError_t track_launch_relax_deciding (cudaStream_t stream, guint n_envs,
                                         const guint8 *done, float *tracks,
                                         TgDeviceLoop loop);

/* producer.c */
TgProducer *track_producer_new (TgSeedState *seeds, const SimBuffers *sim,
                                GError **error);

/* policies.c */
gboolean run_auto (TgProducer *producer, cudaStream_t stream, GError **error);
gboolean run_eager (TgProducer *producer, cudaStream_t stream, GError **error);
gboolean run_on_bound_stream (TgProducer *producer, cudaStream_t stream,
                              GError **error);
gboolean run_replay (TgProducer *producer, cudaStream_t stream, guint n_calls,
                     GError **error);
cudaGraphExec_t record_into_own_capture (TgProducer *producer, cudaStream_t stream,
                                         GError **error);
gboolean run_conditional (TgProducer *producer, cudaStream_t stream,
                          const gint32 *any_done, GError **error);
gboolean explain_policy (TgProducer *producer, cudaStream_t stream);

/* step-graph.c */
cudaGraphExec_t step_graph_new (const SimBuffers *sim, TgProducer *regen,
                                cudaStream_t stream, GError **error);
gboolean step_graph_run (cudaGraphExec_t step, cudaStream_t stream, guint n_steps,
                         GError **error);

/* conditions.c */
TgProducer *layout_producer_new (const SimBuffers *sim);

/* kernel-decisions.c */
TgProducer *deciding_producer_new (const SimBuffers *sim);
guint add_relax_stage (TgProducer *p, const SimBuffers *sim);

/* rules.c */
TgProducer *rules_producer_new (guint32 *device_params, guint32 *pinned_params);
TgProducer *legacy_plugin_producer_new (void);
gboolean legacy_plugin_run (TgProducer *plugin, GError **error);

/* seeds.c */
TgSeedState *seeds_for_sim (guint n_envs, GError **error);
gboolean seeds_for_devices (int n_devices, guint envs_per_device, guint64 base_seed,
                            TgSeedState **states, GError **error);
gboolean seeds_key_of (TgSeedState *seeds, cudaStream_t stream, guint env, guint64 *key,
                       GError **error);
gboolean seeds_step (TgSeedState *seeds, cudaStream_t stream, const guint8 *device_done,
                     guint64 *device_keys, GError **error);
gboolean seeds_reseed_in_graph (TgSeedState *seeds, cudaStream_t capturing,
                                const guint32 *device_env_ids,
                                const guint64 *device_seeds, guint n, GError **error);
gboolean seeds_checkpoint (TgSeedState *seeds, cudaStream_t stream, const char *path,
                           GError **error);
gboolean seeds_resume (TgSeedState *seeds, cudaStream_t stream, const char *path,
                       GError **error);

/* errors.c */
gboolean record_or_run_apart (TgProducer *producer, cudaStream_t capturing,
                              gboolean *recorded, GError **error);
const char *cuda_error_name_of (const GError *error);
void watch_rebinds (TgProducer *producer, gboolean *step_graph_stale);
gboolean nothing_leaked (void);

G_END_DECLS

#endif /* TG_DOC_SNIPPETS_H */
