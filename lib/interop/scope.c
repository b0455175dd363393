/* SPDX-License-Identifier: Apache-2.0 */
/* scope.c: registering captures TrackGen did not begin. */
#include "config.h"
#include <trackgen/interop.h>
#include "../exec/capture-private.h"
#include "../exec/error-private.h"
#include "../exec/scope-private.h"

struct _TgCaptureScope
{
  TgScope scope;
  gboolean registered;
};

/* What the caller must know of a body capture that was invalidated (the
 * H200, driver 580): "capture again" alone led to the crash. */
static void
body_invalidated (GError *error)
{
  char *message = g_strconcat (
      error->message,
      "; as it filled a conditional node's body, the driver destroys that body "
      "when the capture ends, and then crashes when the graph holding the node is "
      "destroyed (cuGraphDestroy): keep that graph rather than destroy it, and "
      "capture a body into a graph of your own, moved into the body as a child "
      "node once its capture ended well",
      NULL);

  g_free (error->message);
  error->message = message;
}

static TgCaptureScope *
scope_begin (cudaStream_t stream, enum cudaStreamCaptureMode mode, gboolean body,
             GError **error)
{
  TgCaptureInfo info;
  TgCaptureScope *s;

  if (stream == TG_STREAM_AUTO)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                     "TG_STREAM_AUTO is not a stream: a scope registers the capture "
                     "in progress on a stream you name (torch.cuda.current_stream() "
                     "inside torch.cuda.graph)");
      return NULL;
    }
  if (!tg__capture_require (stream, "register a scope for", &info, error))
    {
      if (body && error != NULL
          && g_error_matches (*error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED))
        body_invalidated (*error);
      return NULL;
    }
  s = g_new0 (TgCaptureScope, 1);
  s->scope.stream = stream;
  s->scope.mode = mode;
  s->scope.capture_id = info.id;
  s->scope.graph = info.graph;
  s->scope.body = body;
  s->scope.recorded = tg__scope_retain;
  tg__scope_push (&s->scope);
  s->registered = TRUE;
  return s;
}

TgCaptureScope *
tg_capture_scope_begin (cudaStream_t stream, enum cudaStreamCaptureMode mode,
                        GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  return scope_begin (stream, mode, FALSE, error);
}

TgCaptureScope *
tg_capture_scope_begin_body (cudaStream_t stream, enum cudaStreamCaptureMode mode,
                             GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  return scope_begin (stream, mode, TRUE, error);
}

gboolean
tg_capture_scope_end (TgCaptureScope *scope, GError **error)
{
  g_return_val_if_fail (scope != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  /* The thread first: only the scope's own thread writes @registered. */
  if (scope->scope.thread != g_thread_self ())
    {
      tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_THREAD,
                     "the capture scope of stream %p was begun on another thread; "
                     "end it on that thread",
                     (void *)scope->scope.stream);
      return FALSE;
    }
  if (!scope->registered)
    return TRUE;
  if (tg__scope_current () != &scope->scope)
    {
      tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_NESTING,
                     "the capture scope of stream %p is not the innermost one: end "
                     "the scopes begun inside it first",
                     (void *)scope->scope.stream);
      return FALSE;
    }
  tg__scope_pop (&scope->scope);
  scope->registered = FALSE;
  return TRUE;
}

void
tg_capture_scope_free (TgCaptureScope *scope)
{
  g_autoptr (GError) error = NULL;

  if (scope == NULL)
    return;
  if (!tg_capture_scope_end (scope, &error))
    {
      g_critical ("tg_capture_scope_free: %s; the scope is leaked", error->message);
      return;
    }
  g_free (scope);
}

unsigned long long
tg_capture_scope_get_capture_id (const TgCaptureScope *scope)
{
  g_return_val_if_fail (scope != NULL, 0);
  return scope->scope.capture_id;
}

gboolean
tg_capture_is_registered (cudaStream_t stream)
{
  TgCaptureInfo info;

  /* TG_STREAM_AUTO resolves to the innermost registered capture's stream. */
  if (stream == TG_STREAM_AUTO)
    {
      if (tg__scope_current () == NULL)
        return FALSE;
      stream = tg__scope_current ()->stream;
    }
  return tg__capture_query (stream, &info, NULL) && info.state == TG_CAPTURE_ACTIVE
         && tg__scope_find (info.id, info.graph, stream) != NULL;
}
