/* SPDX-License-Identifier: Apache-2.0 */
/* keep.c: what graphs keep alive, and its release later: one CUDA user
 * object per capture that keeps something (or the graph's owner holds it),
 * a reaper thread that runs the releases, and waiting for them. */
#include "config.h"
#include "keep-private.h"
#include "resource-private.h"
#include "tsan-private.h"

/* Deferred releases: a user object's destructor or a host function pushes,
 * the reaper pops.  A release counts as pending from the moment a user
 * object holds it (the driver says nothing of when its destructor will run)
 * or it was enqueued after a stream's work, until the reaper ran it: what
 * tg_release_wait() waits for. */
typedef struct
{
  gpointer object;
  GDestroyNotify release;
} Deferred;

static GAsyncQueue *release_queue;
static gint releases_pending;
static GMutex release_lock;
static GCond release_done;

/* Runs @d's release on this thread and counts it done: the reaper's loop,
 * or a release that nothing will queue. */
static void
deferred_run_here (Deferred *d)
{
  d->release (d->object);
  g_free (d);
  tg__mutex_lock (&release_lock);
  releases_pending--;
  g_cond_broadcast (&release_done);
  tg__mutex_unlock (&release_lock);
}

static gpointer
reaper_main (gpointer data)
{
  /* Releases run when the driver says, during anybody's capture: relaxed for
   * good, so that no call made here (ours, or a stage's destroy notify) can
   * invalidate one. */
  tg__relaxed_thread ();
  for (;;)
    {
      Deferred *d = g_async_queue_pop (release_queue);
      TG_TSAN_ACQUIRE (d);
      deferred_run_here (d);
    }
  return NULL;
}

static gpointer
reaper_start (gpointer data)
{
  release_queue = g_async_queue_new ();
  g_thread_unref (g_thread_new ("trackgen-reaper", reaper_main, NULL));
  TG_TSAN_RELEASE (&release_queue);
  return NULL;
}

static void
pending_add (void)
{
  tg__mutex_lock (&release_lock);
  releases_pending++;
  tg__mutex_unlock (&release_lock);
}

/* Runs on a driver thread (a user object's destructor, a host function): no
 * CUDA call here, only a queue push.  The driver orders it after the
 * Deferred was made, and the pop after the push, out of TSan's sight. */
static void CUDART_CB
defer_release (void *data)
{
  TG_TSAN_ACQUIRE (data);
  TG_TSAN_RELEASE (data);
  g_async_queue_push (release_queue, data);
}

/* A release to queue later, not yet pending. */
static Deferred *
deferred_new (gpointer object, GDestroyNotify release)
{
  static GOnce reaper_once = G_ONCE_INIT;
  Deferred *d;

  g_once (&reaper_once, reaper_start, NULL);
  TG_TSAN_ACQUIRE (&release_queue);
  d = g_new (Deferred, 1);
  d->object = object;
  d->release = release;
  TG_TSAN_RELEASE (d);
  return d;
}

/* A release decided now: pending until the reaper ran it. */
static Deferred *
deferred_decided (gpointer object, GDestroyNotify release)
{
  Deferred *d = deferred_new (object, release);

  pending_add ();
  return d;
}

/* What TrackGen ties to the graph of one capture, released together once
 * the graph is gone: held by one CUDA user object, made at the first
 * retention (so a capture that keeps nothing has none), or by the graph's
 * owner (tg__keep_hold_new()). */
struct _TgRetained
{
  unsigned long long capture_id; /* 0: a graph TrackGen saw no capture of */
  GArray *items;                 /* Deferred: the releases, in order */
  Deferred *destroyed;           /* what the user object's destructor queues, or NULL */
};

/* The holds of captures, by capture id.  Not by graph: a graph's handle is
 * reused once it is destroyed, while the executable graphs made from it
 * still hold its user object, so a later graph would join a hold whose
 * lifetime is not its own.  Capture ids are never reused.  An entry leaves
 * when its hold is released: the user object's destructor ran, or the owner
 * handed it back. */
static GHashTable *holds;
static GMutex holds_lock;

static TgHold *
hold_new (unsigned long long capture_id)
{
  TgHold *h = g_new0 (TgHold, 1);

  h->capture_id = capture_id;
  h->items = g_array_new (FALSE, FALSE, sizeof (Deferred));
  return h;
}

/* Takes @h out of the registry, if it is still there.  Holds the lock. */
static void
hold_unregister (TgHold *h)
{
  if (h->capture_id != 0 && holds != NULL
      && g_hash_table_lookup (holds, &h->capture_id) == h)
    g_hash_table_remove (holds, &h->capture_id);
}

/* Runs every release @h holds, then frees it: on the reaper thread. */
static void
hold_release (gpointer data)
{
  TgHold *h = data;

  tg__mutex_lock (&holds_lock);
  hold_unregister (h);
  tg__mutex_unlock (&holds_lock);
  for (guint i = 0; i < h->items->len; i++)
    {
      Deferred *item = &g_array_index (h->items, Deferred, i);
      item->release (item->object);
    }
  g_array_unref (h->items);
  g_free (h);
}

/* The user object's destructor, on a driver thread: the graph and every
 * executable made from it are gone, the release is decided. */
static void CUDART_CB
hold_destroyed (void *data)
{
  TgHold *h = data;

  TG_TSAN_ACQUIRE (h);
  tg__live_add (TG_LIVE_USER_OBJECTS, -1);
  defer_release (h->destroyed);
}

/* Ties @h to @graph with a new user object.  On failure @h is gone: freed
 * here, or queued by the destructor of the user object dropped. */
static gboolean
hold_tie (TgHold *h, cudaGraph_t graph, GError **error)
{
  cudaUserObject_t user_object = NULL;

  h->destroyed = deferred_new (h, hold_release);
  TG_TSAN_RELEASE (h);
  if (!TG_CUDA_OK (cudaUserObjectCreate (&user_object, h, hold_destroyed, 1,
                                         cudaUserObjectNoDestructorSync),
                   error))
    {
      g_free (h->destroyed);
      g_array_unref (h->items);
      g_free (h);
      return FALSE;
    }
  tg__live_add (TG_LIVE_USER_OBJECTS, 1);
  /* Pending from now: the driver runs the destructor on a thread of its own,
   * at a moment it says nothing of (on the H200, after a user object dropped
   * later), so only a count from here lets tg_release_wait() wait for it. */
  pending_add ();
  if (!TG_CUDA_OK (
          cudaGraphRetainUserObject (graph, user_object, 1, cudaGraphUserObjectMove),
          error))
    {
      (void)cudaUserObjectRelease (user_object, 1);
      return FALSE;
    }
  return TRUE;
}

static void
holds_ensure (void)
{
  if (holds == NULL)
    holds = g_hash_table_new (g_int64_hash, g_int64_equal);
}

gboolean
tg__keep_retain (cudaGraph_t graph, unsigned long long capture_id, gpointer object,
                 GDestroyNotify release, GError **error)
{
  Deferred item = { object, release };
  TgHold *h = NULL;
  gboolean ok = TRUE;

  tg__mutex_lock (&holds_lock);
  holds_ensure ();
  if (capture_id != 0)
    h = g_hash_table_lookup (holds, &capture_id);
  if (h == NULL && (ok = hold_tie (h = hold_new (capture_id), graph, error))
      && capture_id != 0)
    g_hash_table_insert (holds, &h->capture_id, h);
  if (ok)
    g_array_append_val (h->items, item);
  tg__mutex_unlock (&holds_lock);
  /* Nothing holds it: released here, on the caller's thread. */
  if (!ok)
    release (object);
  return ok;
}

TgHold *
tg__keep_hold_new (unsigned long long capture_id, GError **error)
{
  TgHold *h = NULL;

  tg__mutex_lock (&holds_lock);
  holds_ensure ();
  if (g_hash_table_contains (holds, &capture_id))
    tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                   "what capture %llu keeps is held already, by a user object of "
                   "its graph or by another owner: take it over once, before "
                   "TrackGen's first call in the capture",
                   capture_id);
  else
    {
      h = hold_new (capture_id);
      g_hash_table_insert (holds, &h->capture_id, h);
    }
  tg__mutex_unlock (&holds_lock);
  return h;
}

void
tg__keep_hold_release (TgHold *hold, cudaStream_t stream)
{
  /* Later retentions into the capture, if any, get a user object. */
  tg__mutex_lock (&holds_lock);
  hold_unregister (hold);
  tg__mutex_unlock (&holds_lock);
  tg__keep_release_after (stream, hold, hold_release);
}

void
tg__keep_release_after (cudaStream_t stream, gpointer object, GDestroyNotify release)
{
  Deferred *d = deferred_decided (object, release);
  cudaError_t status = TG_CUDA_CALL (cudaLaunchHostFunc (stream, defer_release, d));

  if (status != cudaSuccess)
    {
      /* The work it may still be used by is done once the stream is idle. */
      tg__cuda_clear (status);
      (void)tg__stream_synchronize (stream, NULL);
      deferred_run_here (d);
    }
}

gboolean
tg__keep_release_wait (gint64 timeout_us)
{
  gint64 now = g_get_monotonic_time ();
  /* A deadline past G_MAXINT64 (G_MAXINT64 itself: "forever") waits forever. */
  gboolean forever = timeout_us > G_MAXINT64 - now;
  gint64 deadline = forever ? G_MAXINT64 : now + timeout_us;
  gboolean done = TRUE;

  tg__mutex_lock (&release_lock);
  while (releases_pending > 0 && done)
    {
      if (forever)
        tg__cond_wait (&release_done, &release_lock);
      else
        done = tg__cond_wait_until (&release_done, &release_lock, deadline);
    }
  done = releases_pending == 0;
  tg__mutex_unlock (&release_lock);
  return done;
}
