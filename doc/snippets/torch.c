/* torch.c: the C face that a Python program loads through ctypes to drive
 * TrackGen inside torch.cuda.graph (doc/torch.md).  Link it with the three
 * archives into one shared object, the archives whole (see doc/torch.md). */
#include "snippets.h"

//! [c-face]
/* Errors cross to Python as a message in the caller's buffer. */
static gboolean
report (gboolean ok, GError *error, char *msg, int len)
{
  if (!ok && msg != NULL && len > 0)
    g_strlcpy (msg, error != NULL ? error->message : "failed", (gsize)len);
  g_clear_error (&error);
  return ok;
}

/* stream: torch.cuda.current_stream().cuda_stream inside torch.cuda.graph;
 * mode: cudaStreamCaptureModeGlobal (0) for torch's default
 * capture_error_mode="global". */
TgCaptureScope *
tgdoc_scope_begin (cudaStream_t stream, int mode, char *msg, int len)
{
  GError *error = NULL;
  TgCaptureScope *scope = tg_capture_scope_begin (stream, mode, &error);

  report (scope != NULL, error, msg, len);
  return scope;
}

gboolean
tgdoc_scope_end (TgCaptureScope *scope, char *msg, int len)
{
  GError *error = NULL;
  gboolean ok = tg_capture_scope_end (scope, &error);

  if (ok)
    tg_capture_scope_free (scope);
  return report (ok, error, msg, len);
}

/* flag: a torch int32 tensor's data_ptr(), or NULL.  No stream named: inside
 * a registered scope the call records into torch's capture, and torch's
 * graph then holds a reference to the producer. */
gboolean
tgdoc_run (TgProducer *producer, const gint32 *flag, char *msg, int len)
{
  GError *error = NULL;
  TgCondition condition = flag != NULL ? tg_conditional (flag) : tg_unconditional ();

  return report (tg_producer_run (producer, NULL, TG_POLICY_AUTO, condition, &error),
                 error, msg, len);
}

void
tgdoc_producer_unref (TgProducer *producer)
{
  tg_producer_unref (producer);
}

gboolean
tgdoc_release_wait (gint64 timeout_us)
{
  return tg_release_wait (timeout_us);
}
//! [c-face]
