/* condition-bench.c: conditions and loops beside their raw floors.
 *  - a skipped conditional producer of 32 kernels recorded into a graph vs a
 *    hand-built IF node around the same kernels, and vs a host readback skip;
 *  - a loop's cost per iteration vs a hand-built WHILE node, and vs a host
 *    loop that reads the flag back every iteration. */
#include "config.h"
#include "bench.h"
#include "bench-kernels.h"

#define KERNELS 32
#define ITERS 1000

typedef struct
{
  cudaStream_t stream;
  guint32 *word;
  gint32 *flag, *value, *target, *it;
  gint32 *pinned;
} Ctx;

static gboolean
reset_stage (const TgLaunch *launch, gpointer unused, GError **error)
{
  return tg_bench_launched (tgb_launch_reset (tg_launch_get_stream (launch),
                                              tg_launch_get_binding (launch, "value"),
                                              tg_launch_get_binding (launch, "flag")),
                            error);
}

static gboolean
relax_body (const TgLaunch *launch, gpointer unused, GError **error)
{
  return tg_bench_launched (tgb_launch_relax (tg_launch_get_stream (launch),
                                              tg_launch_get_binding (launch, "value"),
                                              tg_launch_get_binding (launch, "flag"),
                                              tg_launch_get_binding (launch, "target")),
                            error);
}

static void
record (Ctx *c, TgProducer *p, TgCondition condition)
{
  g_autoptr (GError) error = NULL;

  if (!tg_producer_run (p, c->stream, TG_POLICY_RECORD, condition, &error))
    g_error ("bench: %s", error->message);
}

/* Raw CUDA: a conditional node after the stream's dependencies, body graph
 * captured with cudaStreamBeginCaptureToGraph on @side. */
static cudaGraph_t
hand_conditional (cudaStream_t s, cudaStream_t side, cudaGraphConditionalHandle h,
                  enum cudaGraphConditionalNodeType type)
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
  params.conditional.size = 1;
  TG_BENCH_CUDA (cudaGraphAddNode (&node, graph, deps, edges, n, &params));
  TG_BENCH_CUDA (cudaStreamUpdateCaptureDependencies (
      s, &node, NULL, 1, cudaStreamSetCaptureDependencies));
  TG_BENCH_CUDA (cudaStreamBeginCaptureToGraph (side, params.conditional.phGraph_out[0],
                                                NULL, NULL, 0,
                                                cudaStreamCaptureModeThreadLocal));
  return params.conditional.phGraph_out[0];
}

static cudaGraphConditionalHandle
hand_handle (cudaStream_t s)
{
  enum cudaStreamCaptureStatus status;
  cudaGraph_t graph;
  cudaGraphConditionalHandle h;

  TG_BENCH_CUDA (cudaStreamGetCaptureInfo (s, &status, NULL, &graph, NULL, NULL, NULL));
  TG_BENCH_CUDA (cudaGraphConditionalHandleCreate (&h, graph, 0, 0));
  return h;
}

static void
end_body (cudaStream_t side)
{
  cudaGraph_t body = NULL;

  TG_BENCH_CUDA (cudaStreamEndCapture (side, &body));
}

static void
readback_skip (gpointer data)
{
  Ctx *c = data;

  TG_BENCH_CUDA (cudaMemcpyAsync (c->pinned, c->flag, sizeof (gint32),
                                  cudaMemcpyDeviceToHost, c->stream));
  TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
  if (*c->pinned != 0)
    for (guint i = 0; i < KERNELS; i++)
      TG_BENCH_CUDA (tgb_launch_tiny (c->stream, c->word));
}

static void
host_loop (gpointer data)
{
  Ctx *c = data;

  TG_BENCH_CUDA (tgb_launch_reset (c->stream, c->value, c->flag));
  do
    {
      TG_BENCH_CUDA (tgb_launch_relax (c->stream, c->value, c->flag, c->target));
      TG_BENCH_CUDA (cudaMemcpyAsync (c->pinned, c->flag, sizeof (gint32),
                                      cudaMemcpyDeviceToHost, c->stream));
      TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
    }
  while (*c->pinned != 0);
}

static void
bench_skip (TgBench *bench, Ctx *c, cudaStream_t side, guint batch, guint rounds)
{
  g_autoptr (TgProducer) p = tg_bench_tiny_producer ("bench-skip", c->word, KERNELS);
  cudaGraphExec_t ours, floor;
  cudaGraphConditionalHandle h;
  double t_ours, t_floor, t_readback;

  TG_BENCH_CUDA (cudaMemsetAsync (c->flag, 0, sizeof (gint32), c->stream));

  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  record (c, p, tg_conditional (c->flag));
  ours = tg_bench_instantiate (c->stream);

  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  h = hand_handle (c->stream);
  TG_BENCH_CUDA (tgb_launch_if_set (c->stream, h, c->flag));
  hand_conditional (c->stream, side, h, cudaGraphCondTypeIf);
  for (guint i = 0; i < KERNELS; i++)
    TG_BENCH_CUDA (tgb_launch_tiny (side, c->word));
  end_body (side);
  floor = tg_bench_instantiate (c->stream);

  t_floor = tg_bench_graph_us (floor, c->stream, batch, rounds);
  t_ours = tg_bench_graph_us (ours, c->stream, batch, rounds);
  t_readback = tg_bench_wall_us (readback_skip, c, c->stream, batch, rounds, FALSE);
  tg_bench_add (bench, "conditions", "skipped conditional producer (32 kernels)", "us",
                t_ours, t_floor, "hand-built IF", TG_BENCH_LOWER_IS_BETTER, 1.1);
  tg_bench_add (bench, "conditions", "skipped conditional producer vs readback", "us",
                t_ours, t_readback, "host readback skip", TG_BENCH_LOWER_IS_BETTER,
                1.0);
  TG_BENCH_CUDA (cudaGraphExecDestroy (ours));
  TG_BENCH_CUDA (cudaGraphExecDestroy (floor));
}

static void
bench_loop (TgBench *bench, Ctx *c, cudaStream_t side, guint rounds)
{
  const TgLoopSpec loop
      = { .flag_binding = "flag", .status_binding = "status", .max_iters = ITERS + 1 };
  g_autoptr (TgProducer) p = tg_producer_new ("bench-loop", 0);
  TgLoopStatus *status;
  cudaGraphExec_t ours, floor;
  cudaGraphConditionalHandle h;
  gint32 target = ITERS;
  guint reset, relax;
  double t_ours, t_floor, t_host;

  TG_BENCH_CUDA (cudaMalloc ((void **)&status, sizeof *status));
  TG_BENCH_CUDA (cudaMemcpyAsync (c->target, &target, sizeof target,
                                  cudaMemcpyHostToDevice, c->stream));
  TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
  reset = tg_producer_add_device_stage (p, "reset", TG_STAGE_CAPTURE_SAFE, reset_stage,
                                        NULL, NULL);
  relax = tg_producer_add_loop_stage (p, "relax", TG_STAGE_CAPTURE_SAFE, &loop,
                                      relax_body, NULL, NULL);
  tg_producer_declare_binding (p, reset, "value", sizeof (gint32));
  tg_producer_declare_binding (p, reset, "flag", sizeof (gint32));
  tg_producer_declare_binding (p, relax, "value", sizeof (gint32));
  tg_producer_declare_binding (p, relax, "target", sizeof (gint32));
  tg_bench_bind (p, "flag", c->flag, sizeof (gint32));
  tg_bench_bind (p, "value", c->value, sizeof (gint32));
  tg_bench_bind (p, "target", c->target, sizeof (gint32));
  tg_bench_bind (p, "status", status, sizeof *status);

  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  record (c, p, tg_unconditional ());
  ours = tg_bench_instantiate (c->stream);

  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  TG_BENCH_CUDA (tgb_launch_reset (c->stream, c->value, c->flag));
  h = hand_handle (c->stream);
  TG_BENCH_CUDA (tgb_launch_while_entry (c->stream, h, c->flag, c->it));
  hand_conditional (c->stream, side, h, cudaGraphCondTypeWhile);
  TG_BENCH_CUDA (tgb_launch_relax (side, c->value, c->flag, c->target));
  TG_BENCH_CUDA (tgb_launch_while_tail (side, h, c->flag, c->it, ITERS + 1));
  end_body (side);
  floor = tg_bench_instantiate (c->stream);

  t_floor = tg_bench_graph_us (floor, c->stream, 1, rounds) / ITERS;
  t_ours = tg_bench_graph_us (ours, c->stream, 1, rounds) / ITERS;
  t_host = tg_bench_wall_us (host_loop, c, c->stream, 1, rounds, FALSE) / ITERS;
  tg_bench_add (bench, "conditions", "loop: time per iteration", "us", t_ours, t_floor,
                "hand-built WHILE", TG_BENCH_LOWER_IS_BETTER, 1.1);
  tg_bench_add (bench, "conditions", "loop: time per iteration vs host loop", "us",
                t_ours, t_host, "host loop + readback", TG_BENCH_LOWER_IS_BETTER, 1.0);
  TG_BENCH_CUDA (cudaGraphExecDestroy (ours));
  TG_BENCH_CUDA (cudaGraphExecDestroy (floor));
  TG_BENCH_CUDA (cudaFree (status));
}

void
tg_bench_conditions (TgBench *bench)
{
  guint rounds = tg_bench_quick (bench) ? 5 : 41,
        batch = tg_bench_quick (bench) ? 10 : 64;
  cudaStream_t side;
  Ctx c = { 0 };

  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&c.stream, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&side, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaMalloc ((void **)&c.word, sizeof (guint32)));
  TG_BENCH_CUDA (cudaMalloc ((void **)&c.flag, 4 * sizeof (gint32)));
  c.value = c.flag + 1;
  c.target = c.flag + 2;
  c.it = c.flag + 3;
  TG_BENCH_CUDA (cudaMallocHost ((void **)&c.pinned, sizeof (gint32)));

  bench_skip (bench, &c, side, batch, rounds);
  bench_loop (bench, &c, side, tg_bench_quick (bench) ? 3 : 11);

  TG_BENCH_CUDA (cudaFreeHost (c.pinned));
  TG_BENCH_CUDA (cudaFree (c.flag));
  TG_BENCH_CUDA (cudaFree (c.word));
  TG_BENCH_CUDA (cudaStreamDestroy (side));
  TG_BENCH_CUDA (cudaStreamDestroy (c.stream));
}
