/* SPDX-License-Identifier: Apache-2.0 */
/* examples-test.h: what the parts of examples-test share: GPU helpers
 * around the example track producer, and each part's test registration. */
#ifndef EXAMPLES_TEST_H
#define EXAMPLES_TEST_H

#include "tg-test.h"
#include "track-producer.h"

G_BEGIN_DECLS

#define N_ENVS 64

/* The default track producer of @n_envs envs of @seeds (aborts on error). */
TgProducer *track_new (TgSeedState *seeds, cudaStream_t s, guint n_envs,
                       gboolean advance, const char *svg_path);
/* The track producer of @config for @seeds (aborts on error). */
TgProducer *track_new_with (TgSeedState *seeds, cudaStream_t s,
                            const TrackConfig *config);
/* Bytes of the "points" of @n_envs envs of the default shape. */
gsize points_size (guint n_envs);

/* Copies to or from, or fills, the buffer bound as @name; synchronizes. */
void download (gpointer dst, TgProducer *p, const char *name, gsize size,
               cudaStream_t s);
void upload (TgProducer *p, const char *name, gconstpointer src, gsize size,
             cudaStream_t s);
void fill (TgProducer *p, const char *name, int byte, cudaStream_t s);
/* "family" := @family. */
void set_family (TgProducer *p, gint32 family, cudaStream_t s);

/* Runs @p under @policy and synchronizes (asserts success). */
void run_ok (TgProducer *p, cudaStream_t s, TgPolicy policy);
/* Records @p into a capture of the test's own on @s, as a simulator would. */
cudaGraphExec_t record (TgProducer *p, cudaStream_t s, TgCondition condition);
/* Launches @exec on @s and synchronizes. */
void launch (cudaGraphExec_t exec, cudaStream_t s);

/* The relaxation ran (converged or capped), at least once. */
void assert_relaxed (TgProducer *p, cudaStream_t s);
/* Finite closed loops, and most tracks valid. */
void assert_sound (const float2 *points, const guint8 *valid, guint n_envs,
                   guint n_points);

/* Two producers stepped side by side (examples-test-lookahead.c): one
 * producer's envs, as the step left them, ... */
typedef struct
{
  TrackShape shape; /* of the rows below */
  float2 *points, *control;
  float sharpness[N_ENVS];
  guint8 valid[N_ENVS], families[N_ENVS];
  guint32 epochs[N_ENVS];
} Envs;

/* ... and a reference producer and one under test, on seed states of the
 * same base seed, stepped together and compared env by env after each step. */
typedef struct
{
  TgSeedState *seeds[2];
  TgProducer *p[2];
  Envs envs[2];
  TgPolicy policy;      /* of the second's calls: EAGER (pair_init()'s) or REPLAY */
  cudaGraphExec_t exec; /* the second's call, recorded, once replayed */
} Pair;

/* A producer of @seeds' envs with @lookahead spares, refilled @batch at a time. */
TgProducer *lookahead_new (TgSeedState *seeds, cudaStream_t s, guint lookahead,
                           guint batch);
/* Makes the pair, and runs each once with every env masked, at @family
 * (their first tracks, at epoch 1). */
void pair_init (Pair *pair, cudaStream_t s, guint64 base_seed,
                const TrackConfig *reference, const TrackConfig *tested, gint32 family);
/* One step: @mask and @family into both; the reference runs eagerly, the
 * other under pair->policy, or from a graph of its call recorded now
 * (@record_now) or before. */
void pair_run (Pair *pair, const guint8 *mask, gint32 family, gboolean record_now,
               cudaStream_t s);
/* Both hold the same envs, bit for bit, after step @t. */
void pair_check (Pair *pair, guint t, cudaStream_t s);
void pair_clear (Pair *pair);
/* The envs that end after step @t (a pseudo-random few, env 0 often, every
 * env at step 40). */
void mask_of_step (guint t, GRand *rand, guint8 *mask);

/* The simulator loop's tests: their envs, and steps of a loop. */
#define SIM_ENVS 128
#define SIM_STEPS 120
/* With lookahead (the default), a new family reaches an env's tracks
 * lookahead episodes after it began: twice the steps, so several do. */
#define SHARD_STEPS (2 * SIM_STEPS)

/* Register the cases of examples-test-families.c, -validate.c, -list.c,
 * -sim.c, -fused.c, -lookahead.c and -overlap.c. */
void examples_test_add_families (void);
void examples_test_add_validate (void);
void examples_test_add_list (void);
void examples_test_add_sim (void);
void examples_test_add_fused (void);
void examples_test_add_lookahead (void);
void examples_test_add_overlap (void);

G_END_DECLS

#endif /* EXAMPLES_TEST_H */
