/* hand.c: raw CUDA floors built by hand: conditional nodes added to a
 * capturing stream's graph, their bodies captured on a side stream with
 * cudaStreamBeginCaptureToGraph (what TrackGen does, without TrackGen). */
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
