/* SPDX-License-Identifier: Apache-2.0 */
/* condition-kernels-private.h: launchers of the kernels that decide
 * conditions and drive loops (condition-kernels.cu).  Each decides through a
 * TgDeviceCondition or TgDeviceLoop: a conditional node's handle under a
 * capture, a mapped host word eagerly.  Plain C without GLib, so nvcc
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

  /* c := (*flag != 0) */
  cudaError_t tg__launch_if_set (cudaStream_t stream, TgDeviceCondition c,
                                 const int32_t *flag);

  /* c := *index when it is >= 0, else a value no case has. */
  cudaError_t tg__launch_switch_set (cudaStream_t stream, TgDeviceCondition c,
                                     const int32_t *index);

  /* Loop entry: go := (@flag == NULL || *flag != 0); status := {0, go ? NONE :
   * SKIPPED}; loop.next := go. */
  cudaError_t tg__launch_loop_entry (cudaStream_t stream, TgDeviceLoop loop,
                                     const int32_t *flag);

  /* After each body of a loop driven by a flag: tg_loop_next (loop, *flag ==
   * 0), so it ends CONVERGED when the flag cleared, CAPPED at the cap. */
  cudaError_t tg__launch_loop_tail (cudaStream_t stream, TgDeviceLoop loop,
                                    const int32_t *flag);

#ifdef __cplusplus
}
#endif

#endif
