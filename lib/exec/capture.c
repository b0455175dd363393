/* capture.c: capture-status queries, own and body captures, conditional
 * nodes, and user objects with deferred release.  The CUDA 12.x/13.x
 * signature differences of the capture API are absorbed here alone. */
#include "config.h"
#include "capture-private.h"
#include "driver-private.h"
#include "resource-private.h"
#include "tsan-private.h"

#if CUDART_VERSION >= 13000
#define get_capture_info cudaStreamGetCaptureInfo
#define update_capture_dependencies cudaStreamUpdateCaptureDependencies
#define graph_add_node cudaGraphAddNode
#else
#define get_capture_info cudaStreamGetCaptureInfo_v3
#define update_capture_dependencies cudaStreamUpdateCaptureDependencies_v2
#define graph_add_node cudaGraphAddNode_v2
#endif

gboolean
tg__capture_query_status (cudaStream_t stream, cudaError_t err,
                          enum cudaStreamCaptureStatus status, TgCaptureInfo *info,
                          GError **error)
{
  const char *call = "cudaStreamIsCapturing";

  info->id = 0;
  info->graph = NULL;
  /* The cheaper query came first (tg__capture_query()); only a capturing
   * stream needs the id and the graph. */
  if (err == cudaSuccess && status == cudaStreamCaptureStatusActive)
    {
      call = "cudaStreamGetCaptureInfo";
      err = TG_CUDA_CALL (get_capture_info (stream, &status, &info->id, &info->graph,
                                            NULL, NULL, NULL));
    }
  if (err == cudaErrorStreamCaptureInvalidated || err == cudaErrorStreamCaptureImplicit)
    {
      /* The legacy stream while a blocking stream captures (IMPLICIT): the
       * query is refused without harming that capture. */
      tg__cuda_clear (err);
      info->state = err == cudaErrorStreamCaptureImplicit ? TG_CAPTURE_IMPLICIT
                                                          : TG_CAPTURE_INVALIDATED;
      info->graph = NULL;
      return TRUE;
    }
  if (!tg__cuda_ok (err, call, G_STRLOC, error))
    return FALSE;
  switch (status)
    {
    case cudaStreamCaptureStatusActive:
      info->state = TG_CAPTURE_ACTIVE;
      break;
    case cudaStreamCaptureStatusInvalidated:
      info->state = TG_CAPTURE_INVALIDATED;
      info->graph = NULL;
      break;
    default:
      info->state = TG_CAPTURE_NONE;
      info->graph = NULL;
      break;
    }
  return TRUE;
}

gboolean
tg__capture_begin (cudaStream_t stream, enum cudaStreamCaptureMode mode, GError **error)
{
  if (!TG_CUDA_OK (cudaStreamBeginCapture (stream, mode), error))
    return FALSE;
  tg__live_add (TG_LIVE_CAPTURES, 1);
  return TRUE;
}

gboolean
tg__capture_end (cudaStream_t stream, cudaGraph_t *graph, GError **error)
{
  cudaError_t err = TG_CUDA_OVERRIDE (cudaStreamEndCapture (stream, graph));

  tg__live_add (TG_LIVE_CAPTURES, -1);
  if (err != cudaSuccess)
    {
      tg__cuda_clear (err);
      if (*graph != NULL)
        {
          /* Counted first, so that the release balances. */
          tg__live_add (TG_LIVE_GRAPHS, 1);
          tg__graph_free (*graph);
        }
      *graph = NULL;
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED,
                     "the capture ended with %s (%s): an operation during the "
                     "capture broke it",
                     cudaGetErrorName (err), cudaGetErrorString (err));
      return FALSE;
    }
  tg__live_add (TG_LIVE_GRAPHS, 1);
  return TRUE;
}

gboolean
tg__capture_begin_body (cudaStream_t stream, cudaGraph_t body,
                        enum cudaStreamCaptureMode mode, GError **error)
{
  if (!TG_CUDA_OK (cudaStreamBeginCaptureToGraph (stream, body, NULL, NULL, 0, mode),
                   error))
    return FALSE;
  tg__live_add (TG_LIVE_CAPTURES, 1);
  return TRUE;
}

gboolean
tg__capture_end_body (cudaStream_t stream, GError **error)
{
  cudaGraph_t graph = NULL;
  cudaError_t err = TG_CUDA_OVERRIDE (cudaStreamEndCapture (stream, &graph));

  tg__live_add (TG_LIVE_CAPTURES, -1);
  if (err != cudaSuccess)
    {
      tg__cuda_clear (err);
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                     "capturing a condition or loop body failed with %s (%s)",
                     cudaGetErrorName (err), cudaGetErrorString (err));
      return FALSE;
    }
  return TRUE;
}

gboolean
tg__capture_new_handle (cudaStream_t stream, cudaGraphConditionalHandle *handle,
                        GError **error)
{
  TgCaptureInfo info;

  if (!tg__capture_query (stream, &info, error))
    return FALSE;
  return TG_CUDA_OK (cudaGraphConditionalHandleCreate (handle, info.graph, 0, 0),
                     error);
}

/* Adds a node made from @params after the capturing stream's current
 * dependencies; nothing is added on failure. */
static gboolean
add_node (cudaStream_t stream, struct cudaGraphNodeParams *params,
          cudaGraphNode_t *node, GError **error)
{
  enum cudaStreamCaptureStatus status;
  cudaGraph_t graph = NULL;
  const cudaGraphNode_t *deps = NULL;
  const cudaGraphEdgeData *edges = NULL;
  size_t n_deps = 0;

  return TG_CUDA_OK (
             get_capture_info (stream, &status, NULL, &graph, &deps, &edges, &n_deps),
             error)
         && TG_CUDA_OK (graph_add_node (node, graph, deps, edges, n_deps, params),
                        error);
}

/* Makes @node the capturing stream's only dependency. */
static gboolean
follow_node (cudaStream_t stream, cudaGraphNode_t node, GError **error)
{
  return TG_CUDA_OK (update_capture_dependencies (stream, &node, NULL, 1,
                                                  cudaStreamSetCaptureDependencies),
                     error);
}

/* Appends a node made from @params after the capturing stream's current
 * dependencies and makes it the stream's only dependency: how a node built
 * by hand joins a capture in progress. */
static gboolean
append_node (cudaStream_t stream, struct cudaGraphNodeParams *params, GError **error)
{
  cudaGraphNode_t node = NULL;

  return add_node (stream, params, &node, error) && follow_node (stream, node, error);
}

gboolean
tg__capture_add_conditional (cudaStream_t stream, cudaGraphConditionalHandle handle,
                             enum cudaGraphConditionalNodeType type, guint n_bodies,
                             cudaGraph_t *bodies, GError **error)
{
  struct cudaGraphNodeParams params = { 0 };

  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = type;
  params.conditional.size = n_bodies;
  if (!append_node (stream, &params, error))
    return FALSE;
  for (guint i = 0; i < n_bodies; i++)
    bodies[i] = params.conditional.phGraph_out[i];
  return TRUE;
}

/* Finds, depth first through child graphs, a node of @graph whose type
 * @match takes: *@found is set (and TRUE returned) only when one is. */
static gboolean
find_node (cudaGraph_t graph, gboolean (*match) (enum cudaGraphNodeType),
           gboolean *found, enum cudaGraphNodeType *type, GError **error)
{
  g_autofree cudaGraphNode_t *nodes = NULL;
  size_t n = 0;

  *found = FALSE;
  if (!TG_CUDA_OK (cudaGraphGetNodes (graph, NULL, &n), error))
    return FALSE;
  /* An empty graph: the runtime refuses a node array for zero nodes. */
  if (n == 0)
    return TRUE;
  nodes = g_new (cudaGraphNode_t, n);
  if (!TG_CUDA_OK (cudaGraphGetNodes (graph, nodes, &n), error))
    return FALSE;
  for (size_t i = 0; i < n && !*found; i++)
    {
      cudaGraph_t child = NULL;

      if (!TG_CUDA_OK (cudaGraphNodeGetType (nodes[i], type), error))
        return FALSE;
      if (match (*type))
        *found = TRUE;
      else if (*type == cudaGraphNodeTypeGraph
               && (!TG_CUDA_OK (cudaGraphChildGraphNodeGetGraph (nodes[i], &child),
                                error)
                   || !find_node (child, match, found, type, error)))
        return FALSE;
    }
  return TRUE;
}

/* What cudaGraphAddChildGraphNode refuses in a child graph. */
static gboolean
refused_in_child (enum cudaGraphNodeType type)
{
  return type == cudaGraphNodeTypeConditional || type == cudaGraphNodeTypeMemAlloc
         || type == cudaGraphNodeTypeMemFree;
}

gboolean
tg__capture_embeddable (cudaGraph_t graph, gboolean *embeddable, GError **error)
{
  enum cudaGraphNodeType type;
  gboolean found = FALSE,
           ok = find_node (graph, refused_in_child, &found, &type, error);

  *embeddable = ok && !found;
  return ok;
}

gboolean
tg__capture_embed (cudaStream_t stream, cudaGraph_t *child, GError **error)
{
  struct cudaGraphNodeParams params = { 0 };
  cudaGraphNode_t node = NULL;

  params.type = cudaGraphNodeTypeGraph;
  params.graph.graph = *child;
#if CUDART_VERSION >= 13000
  /* Moved into the node, not copied: a clone copies every node again, a
   * cost of a first RECORD that the same work captured by hand has not. */
  params.graph.ownership = cudaGraphChildGraphOwnershipMove;
  if (add_node (stream, &params, &node, NULL))
    {
      /* The caller's graph owns it now, and destroys it. */
      tg__live_add (TG_LIVE_GRAPHS, -1);
      *child = NULL;
      return follow_node (stream, node, error);
    }
  /* A driver older than the build refuses the move: clone, as before. */
  params.graph.ownership = cudaGraphChildGraphOwnershipClone;
#endif
  return add_node (stream, &params, &node, error) && follow_node (stream, node, error);
}

static const char *
forbidden_node_name (enum cudaGraphNodeType type)
{
  switch (type)
    {
    case cudaGraphNodeTypeKernel:
    case cudaGraphNodeTypeMemcpy:
    case cudaGraphNodeTypeMemset:
    case cudaGraphNodeTypeEmpty:
    case cudaGraphNodeTypeGraph:
    case cudaGraphNodeTypeConditional:
      return NULL;
    case cudaGraphNodeTypeHost:
      return "a host function (host node)";
    case cudaGraphNodeTypeMemAlloc:
      return "a memory allocation";
    case cudaGraphNodeTypeMemFree:
      return "a memory free";
    case cudaGraphNodeTypeWaitEvent:
    case cudaGraphNodeTypeEventRecord:
      return "an event record or wait";
    default:
      return "a node of a kind conditional bodies cannot hold";
    }
}

static gboolean
forbidden_in_body (enum cudaGraphNodeType type)
{
  return forbidden_node_name (type) != NULL;
}

gboolean
tg__capture_check_body (cudaGraph_t graph, const char *where, GError **error)
{
  enum cudaGraphNodeType type;
  gboolean found = FALSE;

  if (!find_node (graph, forbidden_in_body, &found, &type, error))
    return FALSE;
  if (found)
    {
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                     "%s holds %s; condition and loop bodies may hold only kernels, "
                     "copies, memsets and nested conditions: move it out of the body",
                     where, forbidden_node_name (type));
      return FALSE;
    }
  return TRUE;
}

gboolean
tg__capture_finish_body (cudaGraph_t body, const char *where, GError **error)
{
  cudaGraphNode_t empty = NULL;
  size_t n = 0;

  if (!tg__capture_check_body (body, where, error))
    return FALSE;
  /* A branch with nothing to do: the driver documents no rule for empty
   * bodies, so an empty node makes the body hold one. */
  return TG_CUDA_OK (cudaGraphGetNodes (body, NULL, &n), error)
         && (n > 0
             || TG_CUDA_OK (cudaGraphAddEmptyNode (&empty, body, NULL, 0), error));
}

gboolean
tg__capture_is_refusal (const GError *error)
{
  if (error == NULL || error->domain != TG_CUDA_ERROR)
    return FALSE;
  switch (error->code)
    {
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
    case cudaErrorStreamCaptureMerge:
    case cudaErrorStreamCaptureUnmatched:
    case cudaErrorStreamCaptureUnjoined:
    case cudaErrorStreamCaptureIsolation:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorCapturedEvent:
    case cudaErrorStreamCaptureWrongThread:
    case cudaErrorNotSupported:
      return TRUE;
    default:
      return FALSE;
    }
}

gboolean
tg__capture_conditionals_supported (TgConditionalKind kind, GError **error)
{
  static const struct
  {
    int version;
    const char *what;
  } needs[] = {
    [TG_CONDITIONAL_IF_WHILE] = { 12040, "conditional graph nodes" },
    [TG_CONDITIONAL_ELSE_SWITCH]
    = { 12080, "IF nodes with an else body and SWITCH nodes" },
  };
  /* Asked once: every new producer's first call asks. */
  static gint known;
  int driver = g_atomic_int_get (&known);

  if (driver == 0)
    {
      if (!TG_CUDA_OK (cudaDriverGetVersion (&driver), error))
        return FALSE;
      g_atomic_int_set (&known, driver);
    }
  if (driver < needs[kind].version || CUDART_VERSION < needs[kind].version)
    {
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                     "%s need CUDA %d.%d in the driver and in libtrackgen's build; the "
                     "driver is %d.%d and the build %d.%d: run eagerly, or upgrade",
                     needs[kind].what, needs[kind].version / 1000,
                     needs[kind].version % 1000 / 10, driver / 1000, driver % 1000 / 10,
                     CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
      return FALSE;
    }
  return TRUE;
}

/* Deferred releases: a user object's destructor or a host function pushes,
 * the reaper pops.  A release counts as pending from the moment it is
 * decided (the user object of a destroyed graph ran its destructor, a release
 * was enqueued after a stream's work), never while a live graph holds it, so
 * that tg_release_wait() waits for the first and never for the second. */
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
 * Deferred was made, out of TSan's sight. */
static void CUDART_CB
defer_release (void *data)
{
  TG_TSAN_ACQUIRE (data);
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
 * owner (tg__capture_hold_new()). */
struct _TgRetained
{
  unsigned long long capture_id; /* 0: a graph TrackGen saw no capture of */
  GArray *items;                 /* Deferred: the releases, in order */
  Deferred *destroyed; /* what the user object's destructor queues, or NULL */
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
  pending_add ();
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
tg__capture_retain (cudaGraph_t graph, unsigned long long capture_id, gpointer object,
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
tg__capture_hold_new (unsigned long long capture_id, GError **error)
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
tg__capture_hold_release (TgHold *hold, cudaStream_t stream)
{
  /* Later retentions into the capture, if any, get a user object. */
  tg__mutex_lock (&holds_lock);
  hold_unregister (hold);
  tg__mutex_unlock (&holds_lock);
  tg__capture_release_after (stream, hold, hold_release);
}

void
tg__capture_release_after (cudaStream_t stream, gpointer object, GDestroyNotify release)
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

/* Probes of the driver's destructor thread: sent, and seen to run. */
static guint64 probes_sent, probes_ran;

static void CUDART_CB
probe_ran (void *data)
{
  tg__mutex_lock (&release_lock);
  probes_ran++;
  g_cond_broadcast (&release_done);
  tg__mutex_unlock (&release_lock);
}

/* The driver runs a user object's destructor on a thread of its own, a
 * moment after the last graph holding it went.  A probe user object dropped
 * now runs its destructor behind those already due, which count their
 * releases pending before queueing them: once the probe ran, waiting for the
 * pending releases waits for theirs too.  Returns the probe's ticket. */
static guint64
flush_destructors (void)
{
  cudaUserObject_t probe = NULL;
  enum cudaStreamCaptureMode mode;
  cudaError_t status;
  guint64 ticket;

  tg__mutex_lock (&release_lock);
  ticket = ++probes_sent;
  tg__mutex_unlock (&release_lock);
  mode = tg__relaxed_begin ();
  status = TG_CUDA_CALL (
      cudaUserObjectCreate (&probe, NULL, probe_ran, 1, cudaUserObjectNoDestructorSync));
  if (status == cudaSuccess)
    (void)cudaUserObjectRelease (probe, 1);
  tg__relaxed_end (mode);
  if (status != cudaSuccess)
    {
      tg__cuda_clear (status);
      probe_ran (NULL);
    }
  return ticket;
}

gboolean
tg__capture_release_wait (gint64 timeout_us)
{
  gint64 now = g_get_monotonic_time ();
  /* A deadline past G_MAXINT64 (G_MAXINT64 itself: "forever") waits forever. */
  gboolean forever = timeout_us > G_MAXINT64 - now;
  gint64 deadline = forever ? G_MAXINT64 : now + timeout_us;
  gboolean done = TRUE;
  guint64 ticket = 0;
  TgLiveObjects live;

  /* Only graphs that hold a user object of ours have destructors to come.
   * The probe is waited for within the timeout only, and is no release: a
   * timeout that ends before it ran misses only destructors not run yet. */
  tg_get_live_objects (&live);
  if (live.user_objects > 0)
    ticket = flush_destructors ();
  tg__mutex_lock (&release_lock);
  while ((releases_pending > 0 || probes_ran < ticket) && done)
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
