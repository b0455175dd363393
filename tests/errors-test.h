/* SPDX-License-Identifier: Apache-2.0 */
/* errors-test.h: what the parts of errors-test share. */
#ifndef TG_ERRORS_TEST_H
#define TG_ERRORS_TEST_H

#include "tg-test.h"

G_BEGIN_DECLS

/* The fixture of the GPU cases. */
typedef TgTestGpu Fixture;

/* errors-test.c: a stage that fails without an error */
gboolean errors_test_silent_failure (const TgLaunch *launch, gpointer data,
                                     GError **error);

/* errors-test-fields.c: the fields errors carry */
void errors_test_add_fields (void);

G_END_DECLS

#endif
