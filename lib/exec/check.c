/* SPDX-License-Identifier: Apache-2.0 */
/* check.c: checked mode.  While a stage runs, check-cupti.c notes every
 * CUDA call of the stage's thread that enqueues device work or orders
 * streams; when the stage returns, the notes are checked here against the
 * policy: under a capture (REPLAY's own graph, RECORD's trial) every piece
 * of work must be in the stage's capture, else it ran once, now, and every
 * replay misses it; outside one (EAGER) work on another stream must be
 * joined back to the stage's stream before the stage returns.
 *
 * Which capture a stream was in when the work was enqueued is rebuilt from
 * the notes (captures the stage began, and streams forked from them); the
 * capture of any other stream is asked once, on the stage's thread, after
 * the stage function returned and before anything of the call is
 * committed: the stage's capture is still open then, and a stream in it
 * stays in it until it ends. */
#include "config.h"
#include "body-private.h"
#include "capture-private.h"
#include "check-private.h"
#include "record-plan-private.h"

gint tg__check_state = -1;

static struct
{
  GMutex lock;     /* CUPTI's subscription; tg__check_state changes under it */
  GError *failure; /* state 2: why TG_CHECK=1 could not be honoured */
} mode;

gboolean
tg_set_checks (gboolean on, GError **error)
{
  gboolean ok = TRUE;

  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  g_mutex_lock (&mode.lock);
  if (on)
    ok = tg__check_cupti_on (error);
  else
    tg__check_cupti_off ();
  g_clear_error (&mode.failure);
  g_atomic_int_set (&tg__check_state, on && ok ? 1 : 0);
  g_mutex_unlock (&mode.lock);
  return ok;
}

gboolean
tg_get_checks (void)
{
  gint state = g_atomic_int_get (&tg__check_state);

  if (state < 0)
    {
      /* Once: the first call that asks, unless tg_set_checks() came first.
       * A TG_CHECK=1 that CUPTI cannot honour fails every checked stage
       * (mode.failure) rather than let it run unchecked. */
      g_mutex_lock (&mode.lock);
      if (g_atomic_int_get (&tg__check_state) < 0)
        {
          const char *env = g_getenv ("TG_CHECK");

          state = 0;
          if (env != NULL && g_str_equal (env, "1"))
            state = tg__check_cupti_on (&mode.failure) ? 1 : 2;
          g_atomic_int_set (&tg__check_state, state);
        }
      state = g_atomic_int_get (&tg__check_state);
      g_mutex_unlock (&mode.lock);
    }
  return state > 0;
}

/* Checking, when the stage returns. */

static void
notes_free (gpointer notes)
{
  g_array_unref (notes);
}

static void
note_clear (gpointer data)
{
  g_clear_pointer (&((TgNote *)data)->kernel, g_free);
}

/* Frees a thread's notes when it exits. */
static GPrivate notes_owner = G_PRIVATE_INIT (notes_free);

gboolean
tg__check_enter_slow (const TgLaunch *launch)
{
  TgCheckFrame *f = &tg__check_frame;

  if (!tg_get_checks ())
    return FALSE;
  /* RECORD's second pass runs the functions its trial checked already. */
  if (tg__record_pass (launch) == 2)
    return FALSE;
  if (f->depth++ > 0)
    return TRUE;
  if (f->notes == NULL)
    {
      f->notes = g_array_new (FALSE, FALSE, sizeof (TgNote));
      g_array_set_clear_func (f->notes, note_clear);
      g_private_set (&notes_owner, f->notes);
    }
  f->in_runtime = 0;
  return TRUE;
}

/* Whether work on a stream other than the stage's, outside any capture, is
 * ordered before the stage's later work without a join: the legacy stream
 * and a blocking stream wait for each other. */
static gboolean
implicitly_ordered (cudaStream_t stream, cudaStream_t stage)
{
  unsigned int flags = cudaStreamNonBlocking;
  cudaStream_t other = stream == cudaStreamLegacy ? stage : stream;

  if (stream != cudaStreamLegacy && stage != cudaStreamLegacy)
    return FALSE;
  return cudaStreamGetFlags (other, &flags) == cudaSuccess
         && !(flags & cudaStreamNonBlocking);
}

/* EAGER: whether work noted at @i on @stream is joined back to @stage later
 * in the stage (an event recorded after it that @stage waits for, or a
 * host synchronization). */
static gboolean
joined (const GArray *notes, guint i, cudaStream_t stream, cudaStream_t stage)
{
  for (guint j = i + 1; j < notes->len; j++)
    {
      const TgNote *r = &g_array_index (notes, TgNote, j);

      if (r->kind == TG_NOTE_SYNC_ALL
          || (r->kind == TG_NOTE_SYNC && r->stream == stream))
        return TRUE;
      if (r->kind != TG_NOTE_RECORD || r->stream != stream)
        continue;
      for (guint k = j + 1; k < notes->len; k++)
        {
          const TgNote *w = &g_array_index (notes, TgNote, k);

          if (w->event != r->event)
            continue;
          if ((w->kind == TG_NOTE_WAIT && w->stream == stage)
              || w->kind == TG_NOTE_SYNC_EVENT)
            return TRUE;
          if (w->kind == TG_NOTE_RECORD)
            break;
        }
    }
  return FALSE;
}

/* Why work escaped into the capture of the caller's stream (under RECORD,
 * the one the producer records into): it is there, outside the producer's
 * work, and CUDA cannot take a node out of a capture in progress
 * (cudaGraphDestroyNode: cudaErrorIllegalState, measured on the H100). */
static const char IN_CALLER[]
    = "is in the caller's own capture, outside the producer's work (unordered with "
      "it, and run whatever its conditions say)";

/* Whether @id is the capture of the caller's stream, when the stage runs
 * in a capture of its own beside it. */
static gboolean
is_caller_capture (const TgLaunch *launch, unsigned long long id)
{
  TgCaptureInfo caller;

  return launch->caller != launch->stream
         && tg__capture_query (launch->caller, &caller, NULL)
         && caller.state == TG_CAPTURE_ACTIVE && caller.id == id;
}

/* Under a capture: why work on @stream is not in the stage's capture, or
 * NULL.  Asked once per stream (@asked caches the answers). */
static const char *
not_in_capture (const TgLaunch *launch, cudaStream_t stream, GHashTable *asked)
{
  TgCaptureInfo info;
  const char *why;
  GError *local = NULL;

  if (stream == cudaStreamLegacy)
    return "is the legacy default stream, which is in no capture";
  if (g_hash_table_lookup_extended (asked, stream, NULL, (gpointer *)&why))
    return why;
  if (!tg__capture_query (stream, &info, &local))
    why = "cannot say its capture state (was it destroyed?)";
  else if (info.state == TG_CAPTURE_NONE)
    why = "is not capturing";
  else if (info.state != TG_CAPTURE_ACTIVE)
    why = "holds a broken capture";
  else if (info.id == tg__launch_capture_id (launch))
    why = NULL;
  else if (is_caller_capture (launch, info.id))
    why = IN_CALLER;
  else
    why = "captures into another graph (another thread's capture, or one begun "
          "before the stage)";
  g_clear_error (&local);
  g_hash_table_insert (asked, stream, (gpointer)why);
  return why;
}

static gboolean
same_token (gpointer key, gpointer value, gpointer token)
{
  return value == token;
}

/* The error for @n, the first of @count escapes; @why says why under a
 * capture; @stage is the stage's stream. */
static void
set_escaped (const TgLaunch *launch, cudaStream_t stage, const TgNote *n,
             const char *why, guint count, GError **error)
{
  g_autofree char *kernel = n->kernel != NULL
                                ? g_strdup_printf (" of kernel '%s'", n->kernel)
                                : g_strdup ("");
  g_autofree char *more
      = count > 1 ? g_strdup_printf (" (%u calls in all)", count) : g_strdup ("");

  if (launch->capturing && why == IN_CALLER)
    tg__set_error (
        error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_ESCAPED,
        "checked mode: %s%s on stream %p escaped the stage's capture%s: that stream "
        "%s.  CUDA cannot take work back out of a capture in progress, so the "
        "caller's capture holds it now: end that capture and discard its graph.  "
        "Enqueue the work on the stage's stream (tg_launch_get_stream()); nothing of "
        "the producer was recorded",
        n->call, kernel, (void *)n->stream, more, why);
  else if (launch->capturing)
    tg__set_error (
        error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_ESCAPED,
        "checked mode: %s%s on stream %p escaped the stage's capture%s: that stream "
        "%s, so the work ran once, now, and every replay would miss it.  Enqueue it "
        "on the stage's stream (tg_launch_get_stream()), or fork its stream from the "
        "stage's stream and join it back (an event recorded on the one, waited for "
        "by the other); nothing was recorded",
        n->call, kernel, (void *)n->stream, more, why);
  else
    tg__set_error (
        error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_ESCAPED,
        "checked mode: %s%s on stream %p, not the stage's stream %p, was not joined "
        "back to it before the stage returned%s, so the stage's later work may run "
        "before it.  Record an event on that stream after the work and make the "
        "stage's stream wait for it (cudaStreamWaitEvent), or enqueue on "
        "tg_launch_get_stream()",
        n->call, kernel, (void *)n->stream, (void *)stage, more);
}

/* The token of the stage's own capture in check_notes(). */
#define STAGE_CAPTURE GUINT_TO_POINTER (G_MAXUINT)

/* Walks the notes in order.  The stage's capture, the captures the stage
 * began, and the streams forked from them (a wait for an event recorded in
 * one) are followed from the notes, a token per capture, until they end:
 * work there is captured.  Any other stream is judged by the policy: under
 * a capture it must be in the stage's capture (asked once), outside one
 * joined back to the stage's stream. */
static gboolean
check_notes (const TgLaunch *launch, const GArray *notes, GError **error)
{
  cudaStream_t stage = launch->stream != NULL ? launch->stream : cudaStreamLegacy;
  g_autoptr (GHashTable) captured = g_hash_table_new (NULL, NULL); /* stream -> token */
  g_autoptr (GHashTable) events = g_hash_table_new (NULL, NULL);   /* event -> token */
  g_autoptr (GHashTable) asked = g_hash_table_new (NULL, NULL);
  const TgNote *first = NULL;
  const char *first_why = NULL;
  guint token = 0, count = 0;

  if (launch->capturing)
    g_hash_table_insert (captured, stage, STAGE_CAPTURE);
  for (guint i = 0; i < notes->len; i++)
    {
      const TgNote *n = &g_array_index (notes, TgNote, i);
      const char *why = NULL;
      gpointer t;

      switch (n->kind)
        {
        case TG_NOTE_BEGIN:
          g_hash_table_insert (captured, n->stream, GUINT_TO_POINTER (++token));
          continue;
        case TG_NOTE_END:
          if ((t = g_hash_table_lookup (captured, n->stream)) != NULL)
            g_hash_table_foreach_remove (captured, same_token, t);
          continue;
        case TG_NOTE_RECORD:
          if ((t = g_hash_table_lookup (captured, n->stream)) != NULL)
            g_hash_table_insert (events, n->event, t);
          else
            g_hash_table_remove (events, n->event);
          break;
        case TG_NOTE_WAIT:
          if ((t = g_hash_table_lookup (events, n->event)) != NULL)
            g_hash_table_insert (captured, n->stream, t);
          break;
        case TG_NOTE_WORK:
        case TG_NOTE_DONE:
          break;
        default:
          /* A synchronization: a capture refuses it itself. */
          continue;
        }
      if (g_hash_table_contains (captured, n->stream)
          || (!launch->capturing && n->stream == stage))
        continue;
      if (launch->capturing)
        why = not_in_capture (launch, n->stream, asked);
      else if (n->kind == TG_NOTE_WORK && !implicitly_ordered (n->stream, stage)
               && !joined (notes, i, n->stream, stage))
        why = "";
      if (why == NULL)
        continue;
      if (count++ == 0)
        {
          first = n;
          first_why = why;
        }
    }
  if (first == NULL)
    return TRUE;
  set_escaped (launch, stage, first, first_why, count, error);
  return FALSE;
}

gboolean
tg__check_leave_slow (const TgLaunch *launch, gboolean ok, GError **error)
{
  TgCheckFrame *f = &tg__check_frame;

  if (--f->depth > 0)
    return ok;
  if (ok && g_atomic_int_get (&tg__check_state) == 2)
    {
      g_mutex_lock (&mode.lock);
      if (mode.failure != NULL)
        {
          g_propagate_error (error, g_error_copy (mode.failure));
          ok = FALSE;
        }
      g_mutex_unlock (&mode.lock);
    }
  ok = ok && check_notes (launch, f->notes, error);
  g_array_set_size (f->notes, 0);
  return ok;
}
