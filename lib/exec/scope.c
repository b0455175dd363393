/* SPDX-License-Identifier: Apache-2.0 */
/* scope.c: the per-thread stack of registered foreign captures, and what
 * recording into one retains. */
#include "config.h"
#include "keep-private.h"
#include "scope-private.h"

static _Thread_local TgScope *current;

void
tg__scope_push (TgScope *scope)
{
  scope->thread = g_thread_self ();
  scope->outer = current;
  current = scope;
}

void
tg__scope_pop (TgScope *scope)
{
  g_return_if_fail (scope == current);
  current = scope->outer;
  scope->outer = NULL;
}

TgScope *
tg__scope_current (void)
{
  return current;
}

TgScope *
tg__scope_hide (void)
{
  TgScope *hidden = current;

  current = NULL;
  return hidden;
}

void
tg__scope_unhide (TgScope *hidden)
{
  /* A scope a stage began and left registered goes with the stage. */
  g_warn_if_fail (current == NULL);
  current = hidden;
}

TgScope *
tg__scope_find (unsigned long long capture_id, cudaGraph_t graph, cudaStream_t stream)
{
  for (TgScope *s = current; s != NULL; s = s->outer)
    if (s->capture_id == capture_id
        || (graph != NULL && s->graph == graph && s->stream == stream))
      return s;
  return NULL;
}

unsigned long long
tg__scope_capture_id (unsigned long long capture_id, cudaGraph_t graph,
                      cudaStream_t stream)
{
  TgScope *s = tg__scope_find (capture_id, graph, stream);

  return s != NULL ? s->capture_id : capture_id;
}

gboolean
tg__scope_retain (TgScope *scope, TgProducer *producer, cudaGraph_t graph,
                  GError **error)
{
  return tg__keep_retain (graph, scope->capture_id, tg_producer_ref (producer),
                          (GDestroyNotify)tg_producer_unref, error);
}
