/* SPDX-License-Identifier: Apache-2.0 */
/* faultsweep.h: the scenarios of the fault-injection sweep (make faultsweep)
 * and the helpers they share.  faultsweep.c makes each CUDA call of a
 * scenario fail in turn and checks what the library did about it. */
#ifndef FAULTSWEEP_H
#define FAULTSWEEP_H

#include "tg-test.h"

G_BEGIN_DECLS

/* What a scenario is given.  The stream outlives the scenario, so that the
 * sweep can check afterwards that it was not left capturing. */
typedef struct
{
  cudaStream_t stream;
  guint64 at;        /* the call armed to fail, 0 when none */
  const char *where; /* the step during which call @at was made */
} FsCtx;

/* A scenario creates what it needs, does real work, checks the results and
 * frees everything, on every path; it returns FALSE with the first error.
 * Errors of the library come back as they are; the scenario's own failures
 * (a CUDA call of its own, a wrong result) are FS_ERROR, which the sweep
 * counts as a failure of the library to report its own. */
typedef gboolean (*FsScenario) (FsCtx *ctx, GError **error);

gboolean fs_scenario_exec (FsCtx *ctx, GError **error);
gboolean fs_scenario_condition (FsCtx *ctx, GError **error);
gboolean fs_scenario_seeds (FsCtx *ctx, GError **error);
gboolean fs_scenario_interop (FsCtx *ctx, GError **error);

#define FS_ERROR (fs_error_quark ())
GQuark fs_error_quark (void);

/* Names the step about to run, so that an injection is logged with the
 * step it hit. */
void fs_step (FsCtx *ctx, const char *step);

/* A CUDA call of the scenario's own: FS_ERROR on failure (the first error
 * is kept), with the runtime's last error cleared. */
gboolean fs_cuda_ok (cudaError_t status, const char *call, GError **error);
#define FS_CUDA(call, error) fs_cuda_ok ((call), #call, (error))

/* A stage that counts its runs in the guint32 bound as "runs". */
gboolean fs_count_runs (const TgLaunch *launch, gpointer data, GError **error);

/* FS_ERROR naming @what and the first differing byte unless @got and
 * @expected hold the same @size bytes. */
gboolean fs_check_equal (const char *what, gconstpointer got, gconstpointer expected,
                         gsize size, GError **error);

/* The caller's capture: begun on ctx->stream in global mode, as a
 * simulator's step graph or torch.cuda.graph begins one. */
gboolean fs_capture_begin (FsCtx *ctx, GError **error);
/* Ends it.  When @recorded, instantiates the graph, launches it once and
 * waits; otherwise (the error is set already) only discards it.  Destroys
 * what it made on every path; TRUE when the graph ran. */
gboolean fs_capture_end (FsCtx *ctx, gboolean recorded, GError **error);

/* Runs @producer on ctx->stream EAGER, REPLAY twice (capture, then replay),
 * and RECORD into a capture of the scenario's whose graph is launched once:
 * FS_POLICY_RUNS runs of its work. */
#define FS_POLICY_RUNS 4
gboolean fs_run_policies (FsCtx *ctx, TgProducer *producer, GError **error);

G_END_DECLS

#endif
