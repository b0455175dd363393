/* SPDX-License-Identifier: Apache-2.0 */
/* hand.c: raw CUDA floors built by hand: conditional nodes added to a
 * capturing stream's graph, their bodies captured on a side stream with
 * cudaStreamBeginCaptureToGraph (what TrackGen does, without TrackGen); and
 * the check that a floor built so is the topology it claims. */
#include "config.h"
#include "bench.h"
#include "bench-kernels.h"

cudaGraphConditionalHandle
tg_bench_hand_handle (cudaStream_t s)
{
  enum cudaStreamCaptureStatus status;
  cudaGraph_t graph;
  cudaGraphConditionalHandle h;

  TG_BENCH_CUDA (cudaStreamGetCaptureInfo (s, &status, NULL, &graph, NULL, NULL, NULL));
  TG_BENCH_CUDA (cudaGraphConditionalHandleCreate (&h, graph, 0, 0));
  return h;
}

void
tg_bench_hand_conditional (cudaStream_t s, cudaGraphConditionalHandle h,
                           enum cudaGraphConditionalNodeType type, guint size,
                           cudaGraph_t *bodies)
{
  enum cudaStreamCaptureStatus status;
  cudaGraph_t graph;
  const cudaGraphNode_t *deps;
  const cudaGraphEdgeData *edges;
  size_t n;
  cudaGraphNode_t node;
  struct cudaGraphNodeParams params = { 0 };

  TG_BENCH_CUDA (
      cudaStreamGetCaptureInfo (s, &status, NULL, &graph, &deps, &edges, &n));
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = h;
  params.conditional.type = type;
  params.conditional.size = size;
  TG_BENCH_CUDA (cudaGraphAddNode (&node, graph, deps, edges, n, &params));
  TG_BENCH_CUDA (cudaStreamUpdateCaptureDependencies (
      s, &node, NULL, 1, cudaStreamSetCaptureDependencies));
  for (guint i = 0; i < size; i++)
    bodies[i] = params.conditional.phGraph_out[i];
}

void
tg_bench_hand_begin_body (cudaStream_t side, cudaGraph_t body)
{
  TG_BENCH_CUDA (cudaStreamBeginCaptureToGraph (side, body, NULL, NULL, 0,
                                                cudaStreamCaptureModeThreadLocal));
}

void
tg_bench_hand_end_body (cudaStream_t side)
{
  cudaGraph_t body = NULL;

  TG_BENCH_CUDA (cudaStreamEndCapture (side, &body));
}

void
tg_bench_hand_tiny (cudaStream_t s, guint32 *word, guint n)
{
  for (guint i = 0; i < n; i++)
    TG_BENCH_CUDA (tgb_launch_tiny (s, word));
}

void
tg_bench_hand_tiny_body (cudaStream_t side, cudaGraph_t body, guint32 *word, guint n)
{
  tg_bench_hand_begin_body (side, body);
  tg_bench_hand_tiny (side, word, n);
  tg_bench_hand_end_body (side);
}

void
tg_bench_hand_assert_bodies (const cudaGraph_t *bodies, guint n_bodies,
                             const guint *kernels, const char *what)
{
  for (guint b = 0; b < n_bodies; b++)
    {
      g_autofree char *chain = g_strnfill (kernels[b], 'k');
      g_autofree char *where = g_strdup_printf ("%s, body %u", what, b);
      tg_bench_assert_chain (bodies[b], chain, where);
    }
}

cudaGraph_t
tg_bench_hand_graph (cudaStream_t s, cudaStream_t side, guint32 *word,
                     enum cudaGraphConditionalNodeType type, TgBenchSetter setter,
                     const gint32 *value, guint n_bodies, const guint *kernels,
                     const char *what)
{
  cudaGraph_t bodies[8], graph;
  cudaGraphConditionalHandle h;

  g_assert_cmpuint (n_bodies, <=, G_N_ELEMENTS (bodies));
  TG_BENCH_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeThreadLocal));
  h = tg_bench_hand_handle (s);
  TG_BENCH_CUDA (setter (s, h, value));
  tg_bench_hand_conditional (s, h, type, n_bodies, bodies);
  for (guint b = 0; b < n_bodies; b++)
    tg_bench_hand_tiny_body (side, bodies[b], word, kernels[b]);
  graph = tg_bench_end_capture (s);
  tg_bench_assert_chain (graph, "kc", what);
  tg_bench_hand_assert_bodies (bodies, n_bodies, kernels, what);
  return graph;
}

static void CUDART_CB
no_destructor (void *data)
{
}

void
tg_bench_hand_user_object (cudaGraph_t graph)
{
  cudaUserObject_t object;

  TG_BENCH_CUDA (cudaUserObjectCreate (&object, NULL, no_destructor, 1,
                                       cudaUserObjectNoDestructorSync));
  TG_BENCH_CUDA (cudaGraphRetainUserObject (graph, object, 1, cudaGraphUserObjectMove));
}

static char
node_letter (cudaGraphNode_t node)
{
  enum cudaGraphNodeType type;

  TG_BENCH_CUDA (cudaGraphNodeGetType (node, &type));
  switch (type)
    {
    case cudaGraphNodeTypeKernel:
      return 'k';
    case cudaGraphNodeTypeConditional:
      return 'c';
    case cudaGraphNodeTypeGraph:
      return 'g';
    case cudaGraphNodeTypeEmpty:
      return 'e';
    default:
      return '?';
    }
}

char *
tg_bench_graph_chain (cudaGraph_t graph)
{
  GString *chain = g_string_new (NULL);
  size_t n = 0, n_roots = 0, n_edges = 0, visited = 0;
  g_autofree cudaGraphNode_t *roots = NULL;
  g_autofree cudaGraphNode_t *from = NULL;
  g_autofree cudaGraphNode_t *to = NULL;
  g_autofree cudaGraphEdgeData *edges = NULL;
  cudaGraphNode_t node;

  TG_BENCH_CUDA (cudaGraphGetNodes (graph, NULL, &n));
  if (n == 0)
    return g_string_free (chain, FALSE);
  TG_BENCH_CUDA (cudaGraphGetRootNodes (graph, NULL, &n_roots));
  roots = g_new0 (cudaGraphNode_t, MAX (n_roots, 1));
  TG_BENCH_CUDA (cudaGraphGetRootNodes (graph, roots, &n_roots));
  TG_BENCH_CUDA (cudaGraphGetEdges (graph, NULL, NULL, NULL, &n_edges));
  from = g_new0 (cudaGraphNode_t, MAX (n_edges, 1));
  to = g_new0 (cudaGraphNode_t, MAX (n_edges, 1));
  /* With the edge data asked for, an edge that is not a plain dependency
   * cannot fail the query. */
  edges = g_new0 (cudaGraphEdgeData, MAX (n_edges, 1));
  if (n_edges > 0)
    TG_BENCH_CUDA (cudaGraphGetEdges (graph, from, to, edges, &n_edges));
  if (n_roots != 1)
    {
      g_string_append_printf (chain, "(%zu roots)", n_roots);
      return g_string_free (chain, FALSE);
    }
  for (node = roots[0]; node != NULL && visited < n; visited++)
    {
      cudaGraphNode_t next = NULL;
      guint n_next = 0;

      g_string_append_c (chain, node_letter (node));
      for (size_t i = 0; i < n_edges; i++)
        if (from[i] == node)
          {
            next = to[i];
            n_next++;
          }
      if (n_next > 1)
        {
          g_string_append_c (chain, '<');
          visited++;
          break;
        }
      node = next;
    }
  /* A walk from the one root that visits every node over n - 1 edges is a
   * chain: nothing runs beside it. */
  if (visited != n || n_edges != n - 1)
    g_string_append_printf (chain, " (not one chain: %zu nodes, %zu edges)", n,
                            n_edges);
  return g_string_free (chain, FALSE);
}

void
tg_bench_assert_chain (cudaGraph_t graph, const char *chain, const char *what)
{
  g_autofree char *built = tg_bench_graph_chain (graph);

  if (!g_str_equal (built, chain))
    g_error ("bench: %s is %s, not %s: the floor is not the topology it claims", what,
             built, chain);
}
