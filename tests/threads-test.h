/* SPDX-License-Identifier: Apache-2.0 */
/* threads-test.h: what the parts of threads-test share. */
#ifndef TG_THREADS_TEST_H
#define TG_THREADS_TEST_H

#include "tg-test.h"

G_BEGIN_DECLS

/* threads-test-misuse.c: a producer misused from several threads at once */
void threads_test_add_misuse (void);

/* threads-test-rebind.c: the rebind handler against a thread replacing it */
void threads_test_add_rebind (void);

G_END_DECLS

#endif
