/* SPDX-License-Identifier: Apache-2.0 */
/* interop-test.h: the interop test program's files. */
#ifndef INTEROP_TEST_H
#define INTEROP_TEST_H

#include "tg-test.h"

G_BEGIN_DECLS

/* interop-test-retention.c */
void interop_test_add_retention (void);

G_END_DECLS

#endif
