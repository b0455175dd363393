/* SPDX-License-Identifier: Apache-2.0 */
/* capture.c: capture-status queries, own and body captures, conditional
 * nodes (what graphs keep alive: keep.c).  The CUDA 12.x/13.x signature
 * differences of the capture API are absorbed here alone. */
#include "config.h"
#include "capture-private.h"
#include "driver-private.h"
#include "resource-private.h"

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
tg__capture_require (cudaStream_t stream, const char *what, TgCaptureInfo *info,
                     GError **error)
{
  if (!tg__capture_query (stream, info, error))
    return FALSE;
  if (info->state == TG_CAPTURE_INVALIDATED)
    {
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED,
                     "the capture on stream %p is invalidated, so there is none to %s: "
                     "end it with cudaStreamEndCapture and capture again",
                     (void *)stream, what);
      return FALSE;
    }
  if (info->state != TG_CAPTURE_ACTIVE)
    {
      tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_NOT_CAPTURING,
                     "stream %p has no capture in progress to %s: call it between "
                     "cudaStreamBeginCapture and cudaStreamEndCapture (inside "
                     "torch.cuda.graph)",
                     (void *)stream, what);
      return FALSE;
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
tg__capture_new_handle (cudaStream_t stream, cudaGraph_t graph,
                        cudaGraphConditionalHandle *handle, GError **error)
{
  TgCaptureInfo info;

  if (graph == NULL)
    {
      if (!tg__capture_query (stream, &info, error))
        return FALSE;
      graph = info.graph;
    }
  return TG_CUDA_OK (cudaGraphConditionalHandleCreate (handle, graph, 0, 0), error);
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

static struct cudaGraphNodeParams
conditional_params (cudaGraphConditionalHandle handle,
                    enum cudaGraphConditionalNodeType type, guint n_bodies)
{
  struct cudaGraphNodeParams params = { 0 };

  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = type;
  params.conditional.size = n_bodies;
  return params;
}

gboolean
tg__capture_add_conditional (cudaStream_t stream, cudaGraphConditionalHandle handle,
                             enum cudaGraphConditionalNodeType type, guint n_bodies,
                             cudaGraph_t *bodies, GError **error)
{
  struct cudaGraphNodeParams params = conditional_params (handle, type, n_bodies);

  if (!append_node (stream, &params, error))
    return FALSE;
  for (guint i = 0; i < n_bodies; i++)
    bodies[i] = params.conditional.phGraph_out[i];
  return TRUE;
}

gboolean
tg__graph_add_conditional (cudaGraph_t graph, cudaGraphNode_t after,
                           cudaGraphConditionalHandle handle,
                           enum cudaGraphConditionalNodeType type, guint n_bodies,
                           cudaGraph_t *bodies, cudaGraphNode_t *node, GError **error)
{
  struct cudaGraphNodeParams params = conditional_params (handle, type, n_bodies);

  if (!TG_CUDA_OK (graph_add_node (node, graph, &after, NULL, after != NULL ? 1 : 0,
                                   &params),
                   error))
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

gboolean
tg__capture_add_child (cudaGraph_t graph, cudaGraphNode_t after, cudaGraph_t *child,
                       cudaGraphNode_t *node, GError **error)
{
  struct cudaGraphNodeParams params = { 0 };
  const size_t n_deps = after != NULL ? 1 : 0;

  params.type = cudaGraphNodeTypeGraph;
  params.graph.graph = *child;
#if CUDART_VERSION >= 13000
  params.graph.ownership = cudaGraphChildGraphOwnershipMove;
  if (TG_CUDA_OK (graph_add_node (node, graph, &after, NULL, n_deps, &params), NULL))
    {
      tg__live_add (TG_LIVE_GRAPHS, -1);
      *child = NULL;
      return TRUE;
    }
  params.graph.ownership = cudaGraphChildGraphOwnershipClone;
#endif
  if (!TG_CUDA_OK (graph_add_node (node, graph, &after, NULL, n_deps, &params), error))
    return FALSE;
  g_clear_pointer (child, tg__graph_free);
  return TRUE;
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
