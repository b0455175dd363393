/* bench-kernels.h: kernels of the benchmarks, and the hand-built floors'
 * conditional-handle kernels (raw CUDA, not TrackGen's). */
#ifndef TG_BENCH_KERNELS_H
#define TG_BENCH_KERNELS_H

#include <trackgen/exec.h>

G_BEGIN_DECLS

/* A small kernel: one block of 32 threads bumps a word. */
cudaError_t tgb_launch_tiny (cudaStream_t s, guint32 *word);
/* handle := (*flag != 0) */
cudaError_t tgb_launch_if_set (cudaStream_t s, cudaGraphConditionalHandle h,
                               const gint32 *flag);
/* *value += 1; *flag = (*value < *target) */
cudaError_t tgb_launch_relax (cudaStream_t s, gint32 *value, gint32 *flag,
                              const gint32 *target);
/* *value = 0; *flag = 1 */
cudaError_t tgb_launch_reset (cudaStream_t s, gint32 *value, gint32 *flag);
/* Hand-built WHILE: entry sets *it = 0 and handle := *flag; the tail does
 * handle := (*flag && ++*it < max). */
cudaError_t tgb_launch_while_entry (cudaStream_t s, cudaGraphConditionalHandle h,
                                    const gint32 *flag, gint32 *it);
cudaError_t tgb_launch_while_tail (cudaStream_t s, cudaGraphConditionalHandle h,
                                   const gint32 *flag, gint32 *it, gint32 max);

G_END_DECLS

#endif
