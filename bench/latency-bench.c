/* SPDX-License-Identifier: Apache-2.0 */
/* latency-bench.c: how long a new producer takes to its first result (issue
 * 20 item 7), from the call until the result is on the device and the
 * stream synchronized, beside the same work done by hand in the same run:
 *  - first REPLAY: the call captures the producer's own graph, instantiates
 *    and launches it;
 *  - first RECORD: the call records into the caller's capture, which the
 *    caller then ends, instantiates and launches;
 *  - by hand, the floor of both: the same 32 kernels captured on the
 *    stream, instantiated, launched.
 * Every sample is a new producer, made (stages added, buffer bound) and
 * released outside the clock, as are the graphs' destroys; the kinds of
 * sample take turns, so that drift affects them alike.  What a first call
 * does that the hand-made one does not (its checks, its own graph, a
 * capture stream when no freed producer left one) is what these rows
 * measure.  Beside them, the same work by hand with one of those costs
 * added, so that one run says what each costs: a new stream, own graphs'
 * instantiation flag, and RECORD's trial capture on another stream joined
 * to the caller's capture as a child graph, copied or moved. */
#include "config.h"
#include "bench.h"
#include "bench-kernels.h"

#define STAGES 32

typedef struct
{
  cudaStream_t stream;
  cudaStream_t side; /* the by-hand trial capture's */
  guint32 *word;
} Ctx;

/* A sample: microseconds from the first call to the synchronized result. */
typedef double (*SampleFunc) (Ctx *c);

static TgProducer *
new_producer (Ctx *c)
{
  return tg_bench_tiny_producer ("bench-first-call", c->word, STAGES);
}

/* Ends the capture on @c->stream, instantiates, launches and waits: what
 * turns a capture into a result.  The graph and its exec are handed back
 * to be destroyed once the clock stopped. */
static void
instantiate_and_run (Ctx *c, cudaGraph_t *graph, cudaGraphExec_t *exec)
{
  *graph = tg_bench_end_capture (c->stream);
  TG_BENCH_CUDA (cudaGraphInstantiate (exec, *graph, 0));
  TG_BENCH_CUDA (cudaGraphLaunch (*exec, c->stream));
  TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
}

static void
destroy (cudaGraph_t graph, cudaGraphExec_t exec)
{
  TG_BENCH_CUDA (cudaGraphExecDestroy (exec));
  TG_BENCH_CUDA (cudaGraphDestroy (graph));
}

static double
by_hand (Ctx *c)
{
  gint64 t0 = g_get_monotonic_time (), t1;
  cudaGraph_t graph;
  cudaGraphExec_t exec;

  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  tg_bench_hand_tiny (c->stream, c->word, STAGES);
  instantiate_and_run (c, &graph, &exec);
  t1 = g_get_monotonic_time ();
  destroy (graph, exec);
  return (double)(t1 - t0);
}

/* By hand, and a stream created and destroyed: what a first call costs when
 * it makes its capture stream. */
static double
hand_new_stream (Ctx *c)
{
  gint64 t0 = g_get_monotonic_time ();
  cudaStream_t s;

  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&s, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaStreamDestroy (s));
  return (double)(g_get_monotonic_time () - t0) + by_hand (c);
}

/* By hand, instantiated as own graphs are (stages may allocate). */
static double
hand_auto_free (Ctx *c)
{
  gint64 t0 = g_get_monotonic_time (), t1;
  cudaGraph_t graph;
  cudaGraphExec_t exec;

  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  tg_bench_hand_tiny (c->stream, c->word, STAGES);
  graph = tg_bench_end_capture (c->stream);
  TG_BENCH_CUDA (
      cudaGraphInstantiate (&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch));
  TG_BENCH_CUDA (cudaGraphLaunch (exec, c->stream));
  TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
  t1 = g_get_monotonic_time ();
  destroy (graph, exec);
  return (double)(t1 - t0);
}

/* By hand, as RECORD does it: the kernels captured on another stream into
 * a graph of their own, which joins the caller's capture as a child graph
 * node, copied (@move FALSE) or moved into it. */
static double
hand_record (Ctx *c, gboolean move)
{
  gint64 t0 = g_get_monotonic_time (), t1;
  struct cudaGraphNodeParams params = { 0 };
  enum cudaStreamCaptureStatus status;
  const cudaGraphNode_t *deps = NULL;
  const cudaGraphEdgeData *edges = NULL;
  size_t n_deps = 0;
  cudaGraph_t trial, graph = NULL;
  cudaGraphNode_t node;
  cudaGraphExec_t exec;

  TG_BENCH_CUDA (cudaStreamBeginCapture (c->side, cudaStreamCaptureModeThreadLocal));
  tg_bench_hand_tiny (c->side, c->word, STAGES);
  trial = tg_bench_end_capture (c->side);
  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  TG_BENCH_CUDA (cudaStreamGetCaptureInfo (c->stream, &status, NULL, &graph, &deps,
                                           &edges, &n_deps));
  params.type = cudaGraphNodeTypeGraph;
  params.graph.graph = trial;
#if CUDART_VERSION >= 13000
  params.graph.ownership
      = move ? cudaGraphChildGraphOwnershipMove : cudaGraphChildGraphOwnershipClone;
#endif
  TG_BENCH_CUDA (cudaGraphAddNode (&node, graph, deps, edges, n_deps, &params));
  TG_BENCH_CUDA (cudaStreamUpdateCaptureDependencies (
      c->stream, &node, NULL, 1, cudaStreamSetCaptureDependencies));
  instantiate_and_run (c, &graph, &exec);
  t1 = g_get_monotonic_time ();
  destroy (graph, exec);
  if (!move || CUDART_VERSION < 13000)
    TG_BENCH_CUDA (cudaGraphDestroy (trial));
  return (double)(t1 - t0);
}

static double
hand_record_copy (Ctx *c)
{
  return hand_record (c, FALSE);
}

static double
hand_record_move (Ctx *c)
{
  return hand_record (c, TRUE);
}

static double
first_replay (Ctx *c)
{
  g_autoptr (TgProducer) p = new_producer (c);
  g_autoptr (GError) error = NULL;
  gint64 t0 = g_get_monotonic_time (), t1;

  if (!tg_producer_run (p, c->stream, TG_POLICY_REPLAY, tg_unconditional (), &error))
    g_error ("bench: %s", error->message);
  TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
  t1 = g_get_monotonic_time ();
  return (double)(t1 - t0);
}

static double
first_record (Ctx *c)
{
  g_autoptr (TgProducer) p = new_producer (c);
  g_autoptr (GError) error = NULL;
  gint64 t0 = g_get_monotonic_time (), t1;
  cudaGraph_t graph;
  cudaGraphExec_t exec;

  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  if (!tg_producer_run (p, c->stream, TG_POLICY_RECORD, tg_unconditional (), &error))
    g_error ("bench: %s", error->message);
  instantiate_and_run (c, &graph, &exec);
  t1 = g_get_monotonic_time ();
  destroy (graph, exec);
  return (double)(t1 - t0);
}

void
tg_bench_latency (TgBench *bench)
{
  static const SampleFunc fns[]
      = { by_hand,        first_replay,     first_record,    hand_new_stream,
          hand_auto_free, hand_record_copy, hand_record_move };
  static const char *const parts[] = {
    NULL,
    NULL,
    NULL,
    "by hand, and a stream created and destroyed",
    "by hand, instantiated with AutoFreeOnLaunch",
    "by hand as RECORD: trial graph, copied as a child",
    "by hand as RECORD: trial graph, moved as a child",
  };
  G_STATIC_ASSERT (G_N_ELEMENTS (parts) == G_N_ELEMENTS (fns));
  const guint rounds = tg_bench_quick (bench) ? 5 : 41;
  g_autofree double *samples = g_new (double, G_N_ELEMENTS (fns) * rounds);
  double median[G_N_ELEMENTS (fns)];
  Ctx c = { 0 };

  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&c.stream, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&c.side, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaMalloc ((void **)&c.word, sizeof (guint32)));
  /* One round first, not counted: the kernels' modules load lazily, and
   * TrackGen's first call in the process makes what later calls share. */
  for (guint f = 0; f < G_N_ELEMENTS (fns); f++)
    (void)fns[f](&c);
  for (guint r = 0; r < rounds; r++)
    for (guint f = 0; f < G_N_ELEMENTS (fns); f++)
      {
        guint32 before = tg_bench_read_word (c.word, c.stream), ran;

        samples[f * rounds + r] = fns[f](&c);
        /* Each sample must have produced its result: 32 kernels ran. */
        if ((ran = tg_bench_read_word (c.word, c.stream) - before) != STAGES)
          tg_bench_fail (bench, "a first-call sample ran %u kernels, not %d", ran,
                         STAGES);
      }
  for (guint f = 0; f < G_N_ELEMENTS (fns); f++)
    median[f] = tg_bench_median (samples + f * rounds, rounds);

  tg_bench_add (bench, "latency", "first REPLAY of a new producer (32 kernels)", "us",
                median[1], median[0], "by hand: capture, instantiate, launch, sync",
                TG_BENCH_LOWER_IS_BETTER, 1.2);
  tg_bench_add (bench, "latency", "first RECORD, then instantiate, launch, sync", "us",
                median[2], median[0], "by hand: capture, instantiate, launch, sync",
                TG_BENCH_LOWER_IS_BETTER, 1.2);
  /* What each cost of a first call amounts to, to read the two rows above. */
  for (guint f = 3; f < G_N_ELEMENTS (fns); f++)
    tg_bench_add (bench, "latency", parts[f], "us", median[f], median[0],
                  "by hand: capture, instantiate, launch, sync", TG_BENCH_INFO, 0);
  TG_BENCH_CUDA (cudaFree (c.word));
  TG_BENCH_CUDA (cudaStreamDestroy (c.side));
  TG_BENCH_CUDA (cudaStreamDestroy (c.stream));
}
