/* SPDX-License-Identifier: Apache-2.0 */
/* condition-test.h: what the parts of condition-test share. */
#ifndef TG_CONDITION_TEST_H
#define TG_CONDITION_TEST_H

#include "tg-test.h"

G_BEGIN_DECLS

/* condition-test-kernels.cu */
/* One iteration of a counted loop: *left -= 1; *flag = (*left > 0) */
cudaError_t tgc_launch_countdown (cudaStream_t s, gint32 *left, gint32 *flag);

/* A decision from a list: v = steps[*at % n]; *seen = v; *at += 1; then
 * tg_condition_set (c, v). */
cudaError_t tgc_launch_decide (cudaStream_t s, TgDeviceCondition c, const gint32 *steps,
                               guint32 n, guint32 *at, gint32 *seen);
/* An iteration that ends itself: *value += 1; tg_loop_next (loop, *value >=
 * *target). */
cudaError_t tgc_launch_relax_next (cudaStream_t s, TgDeviceLoop loop, gint32 *value,
                                   const gint32 *target);
/* Long work: waits @us microseconds on the device, then *dst = value. */
cudaError_t tgc_launch_late_set (cudaStream_t s, gint32 *dst, gint32 value, guint32 us);

/* condition-test-branches.c: IF/ELSE and SWITCH */
void tgc_add_branch_tests (void);

/* condition-test-bodies.c: empty bodies, many cases, what bodies see */
void tgc_add_body_tests (void);

/* condition-test-user.c: conditions and loops decided by the user's kernels */
void tgc_add_user_tests (void);

/* condition-test-eager.c: eager decisions, through mapped host memory */
void tgc_add_eager_tests (void);

/* condition-test-broken.c: bodies whose capture breaks */
void tgc_add_broken_tests (void);

G_END_DECLS

#endif
