/* SPDX-License-Identifier: Apache-2.0 */
/* retain.c: producers kept alive by the graphs that recorded them, or by
 * the owner of such a graph. */
#include "config.h"
#include <trackgen/interop.h>
#include "../exec/capture-private.h"
#include "../exec/error-private.h"
#include "../exec/keep-private.h"
#include "../exec/scope-private.h"

/* A NULL graph handle is data a caller computes (a capture that made
 * none): a GError naming it, as every refusal of a value. */
static gboolean
refuse_no_graph (const char *func, GError **error)
{
  return tg__refuse (error, func, NULL, NULL, NULL, TG_ARGUMENT_ERROR,
                     TG_ARGUMENT_ERROR_INVALID,
                     "graph: NULL; pass the cudaGraph_t to tie the data to");
}

gboolean
tg_retain (cudaGraph_t graph, TgProducer *producer, GError **error)
{
  g_return_val_if_fail (producer != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (graph == NULL)
    return refuse_no_graph (G_STRFUNC, error);
  return tg__keep_retain (graph, 0, tg_producer_ref (producer),
                          (GDestroyNotify)tg_producer_unref, error);
}

gboolean
tg_retain_full (cudaGraph_t graph, gpointer data, GDestroyNotify release,
                GError **error)
{
  g_return_val_if_fail (release != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (graph == NULL)
    {
      release (data);
      return refuse_no_graph (G_STRFUNC, error);
    }
  return tg__keep_retain (graph, 0, data, release, error);
}

/* The active capture on @stream (#TG_STREAM_AUTO: the innermost one this
 * thread registered), for a call that needs one; @what names the call's
 * purpose in the message. */
static gboolean
capture_of (cudaStream_t stream, const char *what, TgCaptureInfo *info, GError **error)
{
  if (stream == TG_STREAM_AUTO)
    {
      TgScope *scope = tg__scope_current ();

      if (scope == NULL)
        {
          tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                         "stream: TG_STREAM_AUTO names the stream of a capture "
                         "registered on this thread, and none is: pass the capturing "
                         "stream, or call inside a capture scope "
                         "(tg_capture_scope_begin())");
          return FALSE;
        }
      stream = scope->stream;
    }
  return tg__capture_require (stream, what, info, error);
}

gboolean
tg_retain_capture (cudaStream_t stream, TgProducer *producer, GError **error)
{
  g_return_val_if_fail (producer != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  return tg_retain_capture_full (stream, tg_producer_ref (producer),
                                 (GDestroyNotify)tg_producer_unref, error);
}

gboolean
tg_retain_capture_full (cudaStream_t stream, gpointer data, GDestroyNotify release,
                        GError **error)
{
  TgCaptureInfo info;

  g_return_val_if_fail (release != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!capture_of (stream, "retain into", &info, error))
    {
      release (data);
      return FALSE;
    }
  return tg__keep_retain (info.graph, tg__scope_capture_id (info.id, info.graph, stream),
                          data, release, error);
}

TgRetained *
tg_retained_new (cudaStream_t stream, GError **error)
{
  TgCaptureInfo info;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  if (!capture_of (stream, "take what it keeps from", &info, error))
    return NULL;
  return tg__keep_hold_new (tg__scope_capture_id (info.id, info.graph, stream), error);
}

gboolean
tg_retained_release (TgRetained *retained, cudaStream_t stream, GError **error)
{
  TgCaptureInfo info;

  g_return_val_if_fail (retained != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (stream == TG_STREAM_AUTO)
    return tg__refuse (error, G_STRFUNC, NULL, NULL, NULL, TG_ARGUMENT_ERROR,
                       TG_ARGUMENT_ERROR_INVALID,
                       "stream: TG_STREAM_AUTO names no stream here; pass the stream "
                       "the graph was last launched on");
  if (!tg__capture_query (stream, &info, error))
    return FALSE;
  /* A host function enqueued there would join the capture, not follow the
   * graph's launches. */
  if (info.state != TG_CAPTURE_NONE)
    {
      tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_POLICY,
                     "stream %p is capturing, so nothing can be ordered after the "
                     "launches it ran before: release on the stream of the graph's "
                     "last launch, outside any capture",
                     (void *)stream);
      return FALSE;
    }
  tg__keep_hold_release (retained, stream);
  return TRUE;
}

gboolean
tg_release_wait (gint64 timeout_us)
{
  g_return_val_if_fail (timeout_us >= 0, FALSE);
  return tg__keep_release_wait (timeout_us);
}
