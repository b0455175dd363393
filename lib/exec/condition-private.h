/* condition-private.h: launchers of the kernels that drive conditional
 * nodes (condition-kernels.cu).  With @in_graph FALSE they only write the
 * loop status, for the eager path.  Private to libtrackgen. */
#ifndef TG_CONDITION_PRIVATE_H
#define TG_CONDITION_PRIVATE_H

#include <trackgen/exec.h>

G_BEGIN_DECLS

/* handle := (*flag != 0) */
cudaError_t tg__launch_if_set (cudaStream_t stream, cudaGraphConditionalHandle handle,
                               const gint32 *flag);

/* handle := *index when it is >= 0, else a value no case has. */
cudaError_t tg__launch_switch_set (cudaStream_t stream,
                                   cudaGraphConditionalHandle handle,
                                   const gint32 *index);

/* Loop entry: status := {0, flag ? NONE : SKIPPED}; handle := flag != 0. */
cudaError_t tg__launch_loop_entry (cudaStream_t stream,
                                   cudaGraphConditionalHandle handle, int in_graph,
                                   const gint32 *flag, TgLoopStatus *status);

/* After each body: count it, then end CONVERGED when the flag cleared, CAPPED
 * at @max_iters, else continue; handle := continue. */
cudaError_t tg__launch_loop_tail (cudaStream_t stream,
                                  cudaGraphConditionalHandle handle, int in_graph,
                                  const gint32 *flag, TgLoopStatus *status,
                                  guint max_iters);

G_END_DECLS

#endif
