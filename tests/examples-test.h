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

/* Register the cases of examples-test-families.c, -validate.c, -list.c,
 * -sim.c and -lookahead.c. */
void examples_test_add_families (void);
void examples_test_add_validate (void);
void examples_test_add_list (void);
void examples_test_add_sim (void);
void examples_test_add_lookahead (void);

G_END_DECLS

#endif /* EXAMPLES_TEST_H */
