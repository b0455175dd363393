/* condition-kernels-private.h: launchers of the kernels that drive
 * conditional nodes (condition-kernels.cu).  With @in_graph 0 they only
 * write the loop status, for the eager path.  Plain C without GLib, so nvcc
 * compiles it without warnings.  Private to libtrackgen. */
#ifndef TG_CONDITION_KERNELS_PRIVATE_H
#define TG_CONDITION_KERNELS_PRIVATE_H

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <trackgen/kernel.h>

#ifdef __cplusplus
extern "C"
{
#endif

  /* handle := (*flag != 0) */
  cudaError_t tg__launch_if_set (cudaStream_t stream, cudaGraphConditionalHandle handle,
                                 const int32_t *flag);

  /* handle := *index when it is >= 0, else a value no case has. */
  cudaError_t tg__launch_switch_set (cudaStream_t stream,
                                     cudaGraphConditionalHandle handle,
                                     const int32_t *index);

  /* Loop entry: status := {0, flag ? NONE : SKIPPED}; handle := flag != 0. */
  cudaError_t tg__launch_loop_entry (cudaStream_t stream,
                                     cudaGraphConditionalHandle handle, int in_graph,
                                     const int32_t *flag, TgLoopStatus *status);

  /* After each body: count it, then end CONVERGED when the flag cleared, CAPPED
   * at @max_iters, else continue; handle := continue. */
  cudaError_t tg__launch_loop_tail (cudaStream_t stream,
                                    cudaGraphConditionalHandle handle, int in_graph,
                                    const int32_t *flag, TgLoopStatus *status,
                                    uint32_t max_iters);

#ifdef __cplusplus
}
#endif

#endif
