/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-test.h: what the parts of seeds-test share. */
#ifndef TG_SEEDS_TEST_H
#define TG_SEEDS_TEST_H

#include "tg-test.h"

G_BEGIN_DECLS

/* The population and base seed of the cases that compare with a host model
 * of the whole state. */
#define TGS_N_ENVS 1000u
#define TGS_BASE G_GUINT64_CONSTANT (0x5EED5EED12345678)

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

/* One thread spins for at least @cycles clock cycles: slow work that later
 * work on the stream must be ordered after. */
cudaError_t tgs_launch_spin (cudaStream_t s, guint64 cycles);

/* seeds-test-gpu.c: what the GPU parts share (each asserts success) */
/* The state read back: @n envs, seeds and epochs. */
typedef struct
{
  guint n;
  guint64 *seeds;
  guint32 *epochs;
} TgsReadback;

void tgs_readback (TgSeedState *state, cudaStream_t stream, TgsReadback *r);
void tgs_readback_clear (TgsReadback *r);
/* Reads the state back and compares it with @before. */
void tgs_assert_unchanged (TgSeedState *state, cudaStream_t stream,
                           const TgsReadback *before);
/* A state of envs 0 .. @n - 1 of device 0. */
TgSeedState *tgs_state_new (guint n, guint64 base);
/* A shard of envs @first_env .. @first_env + @n_envs - 1 of device 0, its
 * first env and size checked. */
TgSeedState *tgs_shard_new (guint first_env, guint n_envs, guint64 base);
/* Reads the state back into @seeds and @epochs (either may be NULL). */
void tgs_read_state (TgSeedState *state, cudaStream_t s, guint64 *seeds,
                     guint32 *epochs);
/* Reads the state back and compares it with the model. */
void tgs_assert_state (TgSeedState *state, cudaStream_t s, const guint64 *seeds,
                       const guint32 *epochs);
/* Advances every env, eagerly on @s, in the state and the model. */
void tgs_advance_all (TgSeedState *state, cudaStream_t s, guint32 *epochs);
/* The mask byte of env @i at round @r: 0, or non-zero and not only 1. */
guint8 tgs_round_mask (guint i, guint r);

/* Each part's test registration. */
void tgs_add_gpu_tests (void);
void tgs_add_snapshot_tests (void);
void tgs_add_stream_tests (void);
void tgs_add_fused_tests (void);

G_END_DECLS

#endif
