/* SPDX-License-Identifier: Apache-2.0 */
/* scope-private.h: a thread's registered foreign capture, as the execution
 * layer sees it.  interop.h gives it a public face; exec only consults it,
 * so exec never depends on interop.  Private to libtrackgen. */
#ifndef TG_SCOPE_PRIVATE_H
#define TG_SCOPE_PRIVATE_H

#include <trackgen/exec.h>

G_BEGIN_DECLS

typedef struct _TgScope TgScope;

/* Called after a producer's trial capture succeeded and before it is recorded
 * into the scope's capture graph @graph. */
typedef gboolean (*TgScopeRecordedFunc) (TgScope *scope, TgProducer *producer,
                                         cudaGraph_t graph, GError **error);

struct _TgScope
{
  cudaStream_t stream;
  enum cudaStreamCaptureMode mode;
  unsigned long long capture_id;
  /* The graph it captures into: a capture paused and resumed into the same
   * graph (Warp's capture_if and capture_while end the capture and begin a
   * new one into its graph) has a new id, and is still this scope's. */
  cudaGraph_t graph;
  /* The capture fills the body of a conditional node (CUDA cannot tell):
   * RECORD refuses work a body cannot hold before recording it. */
  gboolean body;
  GThread *thread;
  TgScopeRecordedFunc recorded;
  TgScope *outer;
};

/* A TgScopeRecordedFunc: the producer joins what the capture's graph holds
 * already (one user object per capture, or none when its owner holds it,
 * keep-private.h), so the graph replays after the caller dropped it. */
gboolean tg__scope_retain (TgScope *scope, TgProducer *producer, cudaGraph_t graph,
                           GError **error);

/* Scopes nest per thread; pop takes the innermost. */
void tg__scope_push (TgScope *scope);
void tg__scope_pop (TgScope *scope);
TgScope *tg__scope_current (void);
/* Hides this thread's scopes while a producer's stages run (scopes a stage
 * begins nest from none), and shows them again: hide returns what unhide
 * takes. */
TgScope *tg__scope_hide (void);
void tg__scope_unhide (TgScope *hidden);
/* The scope of this thread whose capture has id @capture_id, or captures
 * on @stream into @graph (the same capture, resumed), or NULL. */
TgScope *tg__scope_find (unsigned long long capture_id, cudaGraph_t graph,
                         cudaStream_t stream);
/* The id TrackGen knows the capture (@capture_id, @graph) on @stream by:
 * its scope's, when a scope of this thread registered it before a pause. */
unsigned long long tg__scope_capture_id (unsigned long long capture_id,
                                         cudaGraph_t graph, cudaStream_t stream);

G_END_DECLS

#endif
