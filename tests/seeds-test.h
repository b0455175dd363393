/* seeds-test.h: what the parts of seeds-test share. */
#ifndef TG_SEEDS_TEST_H
#define TG_SEEDS_TEST_H

#include "tg-test.h"

G_BEGIN_DECLS

/* seeds-test-kernels.cu */
/* The mask byte of env @env at replay @replay: 0, or non-zero and not 1. */
guint8 tgs_mask_value (guint32 env, guint32 replay);
/* out[i] = tg_effective_seed(seeds[i], epochs[i]), computed by nvcc's code */
cudaError_t tgs_launch_effective (cudaStream_t s, const guint64 *seeds,
                                  const guint32 *epochs, guint64 *out, guint n);
/* mask[i] = tgs_mask_value(i, *counter) */
cudaError_t tgs_launch_replay_mask (cudaStream_t s, guint8 *mask, guint n,
                                    const guint32 *counter);

/* seeds-test.c: snapshot bytes in the documented format, of any version
 * (version 1 with its 16-byte header, any other with the 24-byte one, first
 * env 0); zero seeds and epochs when @seeds is NULL. */
GBytes *tgs_snapshot_forge (guint n_envs, guint32 version, const guint64 *seeds,
                            const guint32 *epochs);

/* seeds-test-gpu.c */
void tgs_add_gpu_tests (void);

G_END_DECLS

#endif
