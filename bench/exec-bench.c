/* SPDX-License-Identifier: Apache-2.0 */
/* exec-bench.c: the execution layer's overhead beside raw CUDA.
 *  - EAGER: per-stage time of a 32-stage producer vs 32 raw launches;
 *  - REPLAY: host time of a call vs launching the same kernels captured by
 *    hand: with the driver's cuGraphLaunch, the runtime's cudaGraphLaunch,
 *    and cuStreamIsCapturing + cuGraphLaunch (the least a launch that keeps
 *    the policy's capture query can cost).  Shown, held to no target since
 *    issue 34: the capture check every call must make is the difference;
 *  - RECORD: GPU time of a caller's graph that recorded the producer vs the
 *    same kernels captured by hand.  Since 0.2 the recording is one
 *    child-graph node holding the 32 kernels, so this also shows what that
 *    node costs at replay;
 *  - checked mode (tg_set_checks): a REPLAY call, and a first call that
 *    captures and checks its 32 stages, with the mode on vs off.
 * The producer's stages read their buffer through a declared binding, so
 * REPLAY's time includes the per-call binding check. */
#include "config.h"
#include "bench.h"
#include "bench-kernels.h"

#include <cudaTypedefs.h>

#define STAGES 32

typedef struct
{
  TgProducer *producer;
  cudaStream_t stream;
  guint32 *word;
  cudaGraphExec_t exec;
  TgPolicy policy;
  PFN_cuGraphLaunch_v10000 driver_launch;
  PFN_cuStreamIsCapturing_v10000 driver_is_capturing;
} Ctx;

static void
raw_kernels (gpointer data)
{
  Ctx *c = data;

  tg_bench_hand_tiny (c->stream, c->word, STAGES);
}

static void
producer_call (gpointer data)
{
  Ctx *c = data;
  g_autoptr (GError) error = NULL;

  if (!tg_producer_run (c->producer, c->stream, c->policy, tg_unconditional (), &error))
    g_error ("bench: %s", error->message);
}

static void
graph_launch (gpointer data)
{
  Ctx *c = data;

  TG_BENCH_CUDA (cudaGraphLaunch (c->exec, c->stream));
}

/* The driver call under cudaGraphLaunch: the lowest host time there is. */
static void
driver_graph_launch (gpointer data)
{
  Ctx *c = data;

  if (c->driver_launch ((CUgraphExec)c->exec, (CUstream)c->stream) != CUDA_SUCCESS)
    g_error ("bench: cuGraphLaunch failed");
}

/* A launch that keeps one check per call, by hand: the capture query that
 * the policy table needs, then the driver's launch. */
static void
checked_graph_launch (gpointer data)
{
  Ctx *c = data;
  CUstreamCaptureStatus status;

  if (c->driver_is_capturing ((CUstream)c->stream, &status) != CUDA_SUCCESS
      || status != CU_STREAM_CAPTURE_STATUS_NONE)
    g_error ("bench: cuStreamIsCapturing failed, or the stream is capturing");
  driver_graph_launch (data);
}

static gpointer
driver_entry_point (const char *symbol)
{
  enum cudaDriverEntryPointQueryResult found;
  void *fn = NULL;

#if CUDART_VERSION >= 12050
  TG_BENCH_CUDA (
      cudaGetDriverEntryPointByVersion (symbol, &fn, 12000, cudaEnableDefault, &found));
#else
  TG_BENCH_CUDA (cudaGetDriverEntryPoint (symbol, &fn, cudaEnableDefault, &found));
#endif
  if (found != cudaDriverEntryPointSuccess)
    g_error ("bench: the driver has no %s", symbol);
  return fn;
}

/* What one call of a cheap runtime query costs here, for reading the table. */
static void
print_query_costs (cudaStream_t stream)
{
  const guint n = 100000;
  enum cudaStreamCaptureStatus status;
  unsigned long long id;
  cudaGraph_t graph;
  int device;
  gint64 t0;

  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < n; i++)
    (void)cudaStreamGetCaptureInfo (stream, &status, &id, &graph, NULL, NULL, NULL);
  g_print ("  # cudaStreamGetCaptureInfo: %.3f us per call\n",
           (double)(g_get_monotonic_time () - t0) / n);
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < n; i++)
    (void)cudaStreamIsCapturing (stream, &status);
  g_print ("  # cudaStreamIsCapturing:    %.3f us per call\n",
           (double)(g_get_monotonic_time () - t0) / n);
  {
    PFN_cuStreamIsCapturing_v10000 driver_is_capturing
        = driver_entry_point ("cuStreamIsCapturing");
    CUstreamCaptureStatus driver_status;

    t0 = g_get_monotonic_time ();
    for (guint i = 0; i < n; i++)
      (void)driver_is_capturing ((CUstream)stream, &driver_status);
    g_print ("  # cuStreamIsCapturing:      %.3f us per call\n",
             (double)(g_get_monotonic_time () - t0) / n);
  }
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < n; i++)
    (void)cudaStreamGetDevice (stream, &device);
  g_print ("  # cudaStreamGetDevice:      %.3f us per call\n",
           (double)(g_get_monotonic_time () - t0) / n);
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < n; i++)
    (void)cudaGetDevice (&device);
  g_print ("  # cudaGetDevice:            %.3f us per call\n",
           (double)(g_get_monotonic_time () - t0) / n);
}

/* The layer's own cost per call, without any GPU work: REPLAY of a producer
 * with no stages still resolves the stream and the policy. */
static void
print_call_overhead (Ctx *c)
{
  Ctx empty = *c;

  empty.producer = tg_producer_new ("bench-empty", 0);
  empty.policy = TG_POLICY_REPLAY;
  g_print ("  # a call with no stages (REPLAY): %.3f us\n",
           tg_bench_wall_us (producer_call, &empty, c->stream, 1000, 21, TRUE));
  empty.policy = TG_POLICY_EAGER;
  g_print ("  # a call with no stages (EAGER):  %.3f us\n",
           tg_bench_wall_us (producer_call, &empty, c->stream, 1000, 21, TRUE));
  tg_producer_unref (empty.producer);
}

/* A producer's first call: its 32 stages captured (each checked when checked
 * mode is on), its graph instantiated and launched. */
static void
first_call (gpointer data)
{
  Ctx fresh = *(Ctx *)data;

  fresh.producer = tg_bench_tiny_producer ("bench-first", fresh.word, STAGES);
  producer_call (&fresh);
  tg_producer_unref (fresh.producer);
}

/* Checked mode's cost: on, every CUDA call of the process that enqueues
 * work or orders streams passes CUPTI's callback, and each stage a call
 * runs is checked.  Measured one after the other: turning the mode on and
 * off is no per-call cost. */
static void
add_checked_rows (TgBench *bench, Ctx *c, guint rounds)
{
  g_autoptr (GError) error = NULL;
  gboolean was = tg_get_checks ();
  double off, on, first_off, first_on;

  if (!tg_set_checks (FALSE, &error))
    g_error ("bench: %s", error->message);
  off = tg_bench_wall_us (producer_call, c, c->stream, 8, rounds * 5, TRUE);
  first_off = tg_bench_wall_us (first_call, c, c->stream, 1, rounds, FALSE);
  if (!tg_set_checks (TRUE, &error))
    {
      g_print ("  # checked mode unavailable: %s\n", error->message);
      return;
    }
  on = tg_bench_wall_us (producer_call, c, c->stream, 8, rounds * 5, TRUE);
  first_on = tg_bench_wall_us (first_call, c, c->stream, 1, rounds, FALSE);
  if (!tg_set_checks (was, &error))
    g_error ("bench: %s", error->message);
  tg_bench_add (bench, "exec", "replay: host time per call, checked mode on", "us", on,
                off, "checked mode off", TG_BENCH_INFO, 0);
  tg_bench_add (bench, "exec", "first call: capture of 32 stages, checked mode on",
                "us", first_on, first_off, "checked mode off", TG_BENCH_INFO, 0);
}

/* The same 32 kernels captured on another stream and launched on ours: the
 * way REPLAY's own graphs are made (never on the caller's stream). */
static void
print_cross_stream_launch (Ctx *c)
{
  Ctx other = *c;
  cudaStream_t side;

  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&side, cudaStreamNonBlocking));
  other.stream = side;
  TG_BENCH_CUDA (cudaStreamBeginCapture (side, cudaStreamCaptureModeThreadLocal));
  raw_kernels (&other);
  other.exec = tg_bench_instantiate (side);
  other.stream = c->stream;
  g_print ("  # cudaGraphLaunch, graph captured on another stream: %.3f us\n",
           tg_bench_wall_us (graph_launch, &other, c->stream, 8, 201, TRUE));
  g_print ("  # cudaGraphLaunch, graph captured on this stream:    %.3f us\n",
           tg_bench_wall_us (graph_launch, c, c->stream, 8, 201, TRUE));
  TG_BENCH_CUDA (cudaGraphExecDestroy (other.exec));
  TG_BENCH_CUDA (cudaStreamDestroy (side));
}

void
tg_bench_exec (TgBench *bench)
{
  guint rounds = tg_bench_quick (bench) ? 5 : 41,
        batch = tg_bench_quick (bench) ? 10 : 64;
  Ctx c = { 0 };
  cudaGraphExec_t hand, recorded;
  g_autoptr (GError) error = NULL;
  double ours, floor;

  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&c.stream, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaMalloc ((void **)&c.word, sizeof (guint32)));
  c.producer = tg_bench_tiny_producer ("bench-32", c.word, STAGES);
  print_query_costs (c.stream);

  /* EAGER: wall time until the work completed, per stage. */
  c.policy = TG_POLICY_EAGER;
  {
    const TgBenchFunc fns[] = { raw_kernels, producer_call };
    double t[G_N_ELEMENTS (fns)];

    tg_bench_wall_us_alternated (fns, G_N_ELEMENTS (fns), &c, c.stream, batch, rounds,
                                 FALSE, t);
    tg_bench_add (bench, "exec", "eager: time per stage (32 stages)", "us",
                  t[1] / STAGES, t[0] / STAGES, "raw launch", TG_BENCH_LOWER_IS_BETTER,
                  1.05);
  }

  /* REPLAY: host time of one call, vs launching a hand-captured graph with
   * the driver's call, with the runtime's call above it, and
   * with the driver's capture query before the driver's launch (what no
   * checked launch can go below).  In short batches, alternated, so that the
   * launch queue never fills (the GPU needs ~20 us per graph, the host ~2)
   * and drift affects all four alike. */
  TG_BENCH_CUDA (cudaStreamBeginCapture (c.stream, cudaStreamCaptureModeThreadLocal));
  raw_kernels (&c);
  hand = c.exec = tg_bench_instantiate (c.stream);
  c.policy = TG_POLICY_REPLAY;
  c.driver_launch = driver_entry_point ("cuGraphLaunch");
  c.driver_is_capturing = driver_entry_point ("cuStreamIsCapturing");
  {
    const TgBenchFunc fns[]
        = { driver_graph_launch, producer_call, graph_launch, checked_graph_launch };
    double t[G_N_ELEMENTS (fns)];

    tg_bench_wall_us_alternated (fns, G_N_ELEMENTS (fns), &c, c.stream, 8, rounds * 5,
                                 TRUE, t);
    tg_bench_add (bench, "exec", "replay: host time per call (32 kernels)", "us", t[1],
                  t[0], "cuGraphLaunch", TG_BENCH_INFO, 0);
    tg_bench_add (bench, "exec", "replay: same, vs the runtime's launch", "us", t[1],
                  t[2], "cudaGraphLaunch", TG_BENCH_INFO, 0);
    tg_bench_add (bench, "exec", "replay: same, vs a checked launch by hand", "us",
                  t[1], t[3], "cuStreamIsCapturing + cuGraphLaunch", TG_BENCH_INFO, 0);
  }
  add_checked_rows (bench, &c, rounds);
  print_call_overhead (&c);
  print_cross_stream_launch (&c);

  /* RECORD: GPU time of the caller's graph. */
  TG_BENCH_CUDA (cudaStreamBeginCapture (c.stream, cudaStreamCaptureModeThreadLocal));
  if (!tg_producer_run (c.producer, c.stream, TG_POLICY_RECORD, tg_unconditional (),
                        &error))
    g_error ("bench: %s", error->message);
  recorded = tg_bench_instantiate (c.stream);
  floor = tg_bench_graph_us (hand, c.stream, batch, rounds);
  ours = tg_bench_graph_us (recorded, c.stream, batch, rounds);
  tg_bench_add (bench, "exec", "record: GPU time of the caller's graph", "us", ours,
                floor, "hand-captured", TG_BENCH_LOWER_IS_BETTER, 1.02);

  TG_BENCH_CUDA (cudaGraphExecDestroy (hand));
  TG_BENCH_CUDA (cudaGraphExecDestroy (recorded));
  tg_producer_unref (c.producer);
  TG_BENCH_CUDA (cudaFree (c.word));
  TG_BENCH_CUDA (cudaStreamDestroy (c.stream));
}
