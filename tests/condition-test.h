/* condition-test.h: what the parts of condition-test share. */
#ifndef TG_CONDITION_TEST_H
#define TG_CONDITION_TEST_H

#include "tg-test.h"

G_BEGIN_DECLS

/* condition-test-kernels.cu */
/* One iteration of a counted loop: *left -= 1; *flag = (*left > 0) */
cudaError_t tgc_launch_countdown (cudaStream_t s, gint32 *left, gint32 *flag);

/* condition-test-branches.c: IF/ELSE and SWITCH */
void tgc_add_branch_tests (void);

/* condition-test-bodies.c: empty bodies, many cases, what bodies see */
void tgc_add_body_tests (void);

G_END_DECLS

#endif
