/* SPDX-License-Identifier: Apache-2.0 */
/* nvtx-private.h: NVTX ranges around producer calls and stages (nvtx.c),
 * off by default at the cost of one predictable branch.  Private to
 * libtrackgen. */
#ifndef TG_NVTX_PRIVATE_H
#define TG_NVTX_PRIVATE_H

#include <trackgen/exec.h>

G_BEGIN_DECLS

/* 1: on, 0: off, -1: TG_NVTX not read yet. */
extern gint tg__nvtx_state;

gboolean tg__nvtx_push_slow (const char *producer, const char *stage);
void tg__nvtx_pop_slow (void);

/* Opens the range "producer" (@stage NULL) or "producer/stage" when NVTX is
 * on; pass what it returns to tg__nvtx_pop(), so that a toggle between the
 * two never leaves a range unbalanced. */
static inline gboolean
tg__nvtx_push (const char *producer, const char *stage)
{
  return G_UNLIKELY (g_atomic_int_get (&tg__nvtx_state) != 0)
         && tg__nvtx_push_slow (producer, stage);
}

static inline void
tg__nvtx_pop (gboolean pushed)
{
  if (G_UNLIKELY (pushed))
    tg__nvtx_pop_slow ();
}

G_END_DECLS

#endif
