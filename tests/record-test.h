/* SPDX-License-Identifier: Apache-2.0 */
/* record-test.h: what the parts of record-test share. */
#ifndef TG_RECORD_TEST_H
#define TG_RECORD_TEST_H

#include "tg-test.h"

G_BEGIN_DECLS

/* record-test-kernels.cu: the set kernels of a caller's own conditional
 * nodes, built by hand as PyTorch's and cuda.core's builders do.  One
 * thread each. */
/* handle := (*flag != 0) */
cudaError_t tgr_launch_if_set (cudaStream_t s, cudaGraphConditionalHandle h,
                               const gint32 *flag);
/* *it = 0; handle := (0 < *iters) */
cudaError_t tgr_launch_while_entry (cudaStream_t s, cudaGraphConditionalHandle h,
                                    gint32 *it, const gint32 *iters);
/* handle := (++*it < *iters) */
cudaError_t tgr_launch_while_tail (cudaStream_t s, cudaGraphConditionalHandle h,
                                   gint32 *it, const gint32 *iters);

/* Counts the iterations of a loop its body decides: ++*count, and another
 * iteration unless *count is a multiple of @every.  One thread. */
cudaError_t tgr_launch_count_next (cudaStream_t s, TgDeviceLoop loop, guint32 *count,
                                   guint32 every);

/* record-test-passes.c: how often RECORD calls each stage function */
void tgr_add_pass_tests (void);

/* record-test-bodies.c: RECORD inside a caller's conditional body */
void tgr_add_body_tests (void);

/* record-test-foreign.c: bodies holding another library's conditional
 * nodes */
void tgr_add_foreign_tests (void);

G_END_DECLS

#endif
