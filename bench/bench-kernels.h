/* SPDX-License-Identifier: Apache-2.0 */
/* bench-kernels.h: kernels of the benchmarks, and the hand-built floors'
 * conditional-handle kernels (raw CUDA, not TrackGen's).  Plain C and CUDA
 * types only, so nvcc compiles bench-kernels.cu without GLib. */
#ifndef TG_BENCH_KERNELS_H
#define TG_BENCH_KERNELS_H

#include <stdint.h>
#include <cuda_runtime_api.h>
#include <trackgen/kernel.h>

/* The launchers are defined in C++ with C linkage. */
#ifdef __cplusplus
#define TGB_API extern "C"
#else
#define TGB_API
#endif

/* A small kernel: one block of 32 threads bumps a word. */
TGB_API cudaError_t tgb_launch_tiny (cudaStream_t s, uint32_t *word);
/* A long kernel: one block of 32 threads waits @ns nanoseconds of the
 * GPU's global timer (so its length does not follow the clocks), then bumps
 * a word once. */
TGB_API cudaError_t tgb_launch_long (cudaStream_t s, uint32_t *word, uint32_t ns);
/* handle := (*flag != 0) */
TGB_API cudaError_t tgb_launch_if_set (cudaStream_t s, cudaGraphConditionalHandle h,
                                       const int32_t *flag);
/* handle := *index as unsigned: a negative index selects no case. */
TGB_API cudaError_t tgb_launch_switch_set (cudaStream_t s, cudaGraphConditionalHandle h,
                                           const int32_t *index);
/* *value += 1; *flag = (*value < *target) */
TGB_API cudaError_t tgb_launch_relax (cudaStream_t s, int32_t *value, int32_t *flag,
                                      const int32_t *target);
/* *value = 0; *flag = 1 */
TGB_API cudaError_t tgb_launch_reset (cudaStream_t s, int32_t *value, int32_t *flag);
/* Hand-built WHILE: entry sets *it = 0 and handle := *flag; the tail does
 * handle := (*flag && ++*it < max). */
TGB_API cudaError_t tgb_launch_while_entry (cudaStream_t s,
                                            cudaGraphConditionalHandle h,
                                            const int32_t *flag, int32_t *it);
TGB_API cudaError_t tgb_launch_while_tail (cudaStream_t s, cudaGraphConditionalHandle h,
                                           const int32_t *flag, int32_t *it,
                                           int32_t max);
/* The minimal loop, whose own kernels set its WHILE's handle: reset sets
 * *value = 0, *flag = 1, *it = 0 and handle := 1; relax does what
 * tgb_launch_relax does, then handle := (*flag && ++*it < max). */
TGB_API cudaError_t tgb_launch_reset_set (cudaStream_t s, cudaGraphConditionalHandle h,
                                          int32_t *value, int32_t *flag, int32_t *it);
TGB_API cudaError_t tgb_launch_relax_set (cudaStream_t s, cudaGraphConditionalHandle h,
                                          int32_t *value, int32_t *flag,
                                          const int32_t *target, int32_t *it,
                                          int32_t max);
/* NVIDIA Warp's set kernels: handle := *flag; handle := !*flag; and
 * h_if := *flag, h_else := !*flag in one kernel. */
TGB_API cudaError_t tgb_launch_warp_set_if (cudaStream_t s,
                                            cudaGraphConditionalHandle h,
                                            const int32_t *flag);
TGB_API cudaError_t tgb_launch_warp_set_else (cudaStream_t s,
                                              cudaGraphConditionalHandle h,
                                              const int32_t *flag);
TGB_API cudaError_t tgb_launch_warp_set_if_else (cudaStream_t s,
                                                 cudaGraphConditionalHandle h_if,
                                                 cudaGraphConditionalHandle h_else,
                                                 const int32_t *flag);
/* A user's kernel that decides: *out = (*in != 0), the flag a condition
 * then reads (Warp's way: a set kernel copies it into the handle)... */
TGB_API cudaError_t tgb_launch_decide (cudaStream_t s, const int32_t *in, int32_t *out);
/* ...the same kernel setting the condition itself, through TrackGen's
 * device API (tg_condition_set)... */
TGB_API cudaError_t tgb_launch_decide_set (cudaStream_t s, TgDeviceCondition c,
                                           const int32_t *in, int32_t *out);
/* ...or through the raw handle (the minimal floor)... */
TGB_API cudaError_t tgb_launch_decide_raw (cudaStream_t s, cudaGraphConditionalHandle h,
                                           const int32_t *in, int32_t *out);
/* ...or, eagerly by hand, storing ((seq << 32) | decision) into a word of
 * mapped host memory (@word: its device address) that the host waits for. */
TGB_API cudaError_t tgb_launch_decide_mapped (cudaStream_t s, const int32_t *in,
                                              int32_t *out, uint64_t *word,
                                              uint32_t seq);
/* The relaxation deciding its own loop: what tgb_launch_relax does, then
 * tg_loop_next (loop, converged); or, eagerly by hand, the continuation
 * stored into mapped host memory as above. */
TGB_API cudaError_t tgb_launch_relax_next (cudaStream_t s, TgDeviceLoop loop,
                                           int32_t *value, int32_t *flag,
                                           const int32_t *target);
TGB_API cudaError_t tgb_launch_relax_mapped (cudaStream_t s, int32_t *value,
                                             int32_t *flag, const int32_t *target,
                                             uint64_t *word, uint32_t seq);
/* A simulator step's decision: *go = (++*counter is odd), so work guarded
 * by it runs at every other replay. */
TGB_API cudaError_t tgb_launch_alternate (cudaStream_t s, uint32_t *counter,
                                          int32_t *go);

#endif
