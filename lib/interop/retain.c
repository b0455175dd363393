/* retain.c: producers kept alive by the graphs that recorded them. */
#include "config.h"
#include <trackgen/interop.h>
#include "../exec/capture-private.h"
#include "../exec/error-private.h"
#include "../exec/scope-private.h"

gboolean
tg_retain (cudaGraph_t graph, TgProducer *producer, GError **error)
{
  g_return_val_if_fail (graph != NULL && producer != NULL, FALSE);
  return tg__capture_retain (graph, tg_producer_ref (producer),
                             (GDestroyNotify)tg_producer_unref, error);
}

gboolean
tg_retain_full (cudaGraph_t graph, gpointer data, GDestroyNotify release,
                GError **error)
{
  g_return_val_if_fail (graph != NULL && release != NULL, FALSE);
  return tg__capture_retain (graph, data, release, error);
}

gboolean
tg_retain_capture (cudaStream_t stream, TgProducer *producer, GError **error)
{
  TgCaptureInfo info;

  g_return_val_if_fail (producer != NULL, FALSE);
  if (stream == TG_STREAM_AUTO)
    {
      TgScope *scope = tg__scope_current ();

      if (scope == NULL)
        {
          tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                         "TG_STREAM_AUTO names the stream of a capture registered on "
                         "this thread, and none is: pass the capturing stream, or call "
                         "inside a capture scope (tg_capture_scope_begin())");
          return FALSE;
        }
      stream = scope->stream;
    }
  if (!tg__capture_query (stream, &info, error))
    return FALSE;
  if (info.state != TG_CAPTURE_ACTIVE)
    {
      tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_NOT_CAPTURING,
                     "stream %p has no capture in progress to retain producer '%s' "
                     "into: call it between cudaStreamBeginCapture and "
                     "cudaStreamEndCapture",
                     (void *)stream, tg_producer_get_name (producer));
      return FALSE;
    }
  return tg_retain (info.graph, producer, error);
}

gboolean
tg_release_wait (gint64 timeout_us)
{
  g_return_val_if_fail (timeout_us >= 0, FALSE);
  return tg__capture_release_wait (timeout_us);
}
