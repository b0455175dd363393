/* condition-bench.c: conditions, switches and loops beside their raw floors.
 *  - a skipped conditional producer of 32 kernels recorded into a graph vs a
 *    hand-built IF node around the same kernels, and vs a host readback skip;
 *  - a guarded stage with an else branch, its flag 0: the IF/ELSE node skips
 *    the then-branch (32 kernels) and runs the else-branch (1 kernel), vs a
 *    hand-built IF node with the same two bodies;
 *  - a switch stage of 4 cases of 8 kernels, one case selected and then an
 *    index out of range (nothing runs), vs a hand-built SWITCH node;
 *  - a loop's cost per iteration vs a hand-built WHILE node, and vs a host
 *    loop that reads the flag back every iteration. */
#include "config.h"
#include "bench.h"
#include "bench-kernels.h"

#define KERNELS 32
#define CASES 4
#define CASE_KERNELS 8
#define ITERS 1000

typedef struct
{
  cudaStream_t stream, side;
  guint32 *word;
  gint32 *flag, *index;
  gint32 *pinned;
  TgBenchLoop loop;
  guint batch, rounds;
} Ctx;

typedef cudaError_t (*SetterFunc) (cudaStream_t s, cudaGraphConditionalHandle h,
                                   const gint32 *value);

/* The caller's graph: @p recorded under @condition.  What it holds at its
 * top is shown, for reading the rows beside the floors' shapes (the bodies
 * of our conditional nodes cannot be queried before CUDA 13.1). */
static cudaGraphExec_t
recorded_graph (Ctx *c, TgProducer *p, TgCondition condition)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *chain = NULL;
  cudaGraph_t graph;

  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  if (!tg_producer_run (p, c->stream, TG_POLICY_RECORD, condition, &error))
    g_error ("bench: %s", error->message);
  graph = tg_bench_end_capture (c->stream);
  chain = tg_bench_graph_chain (graph);
  g_print ("  # %s records, at the top of the caller's graph: %s\n",
           tg_producer_get_name (p), chain);
  return tg_bench_instantiate_graph (graph);
}

/* Captures @n small kernels into the conditional body @body. */
static void
capture_tiny_body (Ctx *c, cudaGraph_t body, guint n)
{
  tg_bench_hand_begin_body (c->side, body);
  tg_bench_hand_tiny (c->side, c->word, n);
  tg_bench_hand_end_body (c->side);
}

/* Aborts unless body b of the floor @what is a chain of kernels[b] kernels. */
static void
assert_bodies (const cudaGraph_t *bodies, guint n_bodies, const guint *kernels,
               const char *what)
{
  for (guint b = 0; b < n_bodies; b++)
    {
      g_autofree char *chain = g_strnfill (kernels[b], 'k');
      g_autofree char *where = g_strdup_printf ("%s, body %u", what, b);
      tg_bench_assert_chain (bodies[b], chain, where);
    }
}

/* The floor: @setter sets a handle from @value, then one conditional node of
 * @type whose body i holds kernels[i] small kernels (checked: a set kernel,
 * the node, and those bodies). */
static cudaGraphExec_t
hand_graph (Ctx *c, enum cudaGraphConditionalNodeType type, SetterFunc setter,
            const gint32 *value, guint n_bodies, const guint *kernels, const char *what)
{
  cudaGraph_t bodies[8], graph;
  cudaGraphConditionalHandle h;

  g_assert_cmpuint (n_bodies, <=, G_N_ELEMENTS (bodies));
  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  h = tg_bench_hand_handle (c->stream);
  TG_BENCH_CUDA (setter (c->stream, h, value));
  tg_bench_hand_conditional (c->stream, h, type, n_bodies, bodies);
  for (guint b = 0; b < n_bodies; b++)
    capture_tiny_body (c, bodies[b], kernels[b]);
  graph = tg_bench_end_capture (c->stream);
  tg_bench_assert_chain (graph, "kc", what);
  assert_bodies (bodies, n_bodies, kernels, what);
  return tg_bench_instantiate_graph (graph);
}

/* GPU time per launch of @floor, then of @ours, as a row held to 1.10x;
 * returns ours. */
static double
graph_row (TgBench *bench, Ctx *c, const char *what, cudaGraphExec_t ours,
           cudaGraphExec_t floor, const char *floor_what)
{
  double t_floor = tg_bench_graph_us (floor, c->stream, c->batch, c->rounds);
  double t_ours = tg_bench_graph_us (ours, c->stream, c->batch, c->rounds);

  tg_bench_add (bench, "conditions", what, "us", t_ours, t_floor, floor_what,
                TG_BENCH_LOWER_IS_BETTER, 1.1);
  return t_ours;
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

  TG_BENCH_CUDA (tgb_launch_reset (c->stream, c->loop.value, c->loop.flag));
  do
    {
      TG_BENCH_CUDA (
          tgb_launch_relax (c->stream, c->loop.value, c->loop.flag, c->loop.target));
      TG_BENCH_CUDA (cudaMemcpyAsync (c->pinned, c->loop.flag, sizeof (gint32),
                                      cudaMemcpyDeviceToHost, c->stream));
      TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
    }
  while (*c->pinned != 0);
}

static void
bench_skip (TgBench *bench, Ctx *c)
{
  g_autoptr (TgProducer) p = tg_bench_tiny_producer ("bench-skip", c->word, KERNELS);
  const guint kernels[] = { KERNELS };
  cudaGraphExec_t ours, floor;
  double t_ours, t_readback;

  TG_BENCH_CUDA (cudaMemsetAsync (c->flag, 0, sizeof (gint32), c->stream));
  ours = recorded_graph (c, p, tg_conditional (c->flag));
  floor = hand_graph (c, cudaGraphCondTypeIf, tgb_launch_if_set, c->flag, 1, kernels,
                      "hand-built IF");
  t_ours = graph_row (bench, c, "skipped conditional producer (32 kernels)", ours,
                      floor, "hand-built IF");
  t_readback
      = tg_bench_wall_us (readback_skip, c, c->stream, c->batch, c->rounds, FALSE);
  tg_bench_add (bench, "conditions", "skipped conditional producer vs readback", "us",
                t_ours, t_readback, "host readback skip", TG_BENCH_LOWER_IS_BETTER,
                1.0);
  TG_BENCH_CUDA (cudaGraphExecDestroy (ours));
  TG_BENCH_CUDA (cudaGraphExecDestroy (floor));
}

#if CUDART_VERSION >= 12080
static gboolean
then_body (const TgLaunch *launch, gpointer unused, GError **error)
{
  return tg_bench_tiny_kernels (launch, KERNELS, error);
}

static gboolean
else_body (const TgLaunch *launch, gpointer unused, GError **error)
{
  return tg_bench_tiny_kernels (launch, 1, error);
}

static gboolean
case_body (const TgLaunch *launch, gpointer unused, GError **error)
{
  return tg_bench_tiny_kernels (launch, CASE_KERNELS, error);
}

static void
bench_if_else (TgBench *bench, Ctx *c)
{
  g_autoptr (TgProducer) p = tg_producer_new ("bench-if-else", 0);
  const guint kernels[] = { KERNELS, 1 };
  cudaGraphExec_t ours, floor;
  guint stage;

  stage = tg_producer_add_device_stage (p, "then", TG_STAGE_CAPTURE_SAFE, then_body,
                                        NULL, NULL);
  tg_producer_declare_binding (p, stage, "word", sizeof (guint32));
  tg_producer_set_stage_condition (p, stage, "flag");
  tg_producer_set_stage_else (p, stage, else_body);
  tg_bench_bind (p, "word", c->word, sizeof (guint32));
  tg_bench_bind (p, "flag", c->flag, sizeof (gint32));

  TG_BENCH_CUDA (cudaMemsetAsync (c->flag, 0, sizeof (gint32), c->stream));
  ours = recorded_graph (c, p, tg_unconditional ());
  floor = hand_graph (c, cudaGraphCondTypeIf, tgb_launch_if_set, c->flag, 2, kernels,
                      "hand-built IF/ELSE");
  graph_row (bench, c, "skipped IF/ELSE producer (then: 32 kernels, else: 1 runs)",
             ours, floor, "hand-built IF/ELSE (2 bodies)");
  TG_BENCH_CUDA (cudaGraphExecDestroy (ours));
  TG_BENCH_CUDA (cudaGraphExecDestroy (floor));
}

static void
set_index (Ctx *c, gint32 index)
{
  TG_BENCH_CUDA (cudaMemcpyAsync (c->index, &index, sizeof index,
                                  cudaMemcpyHostToDevice, c->stream));
  TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
}

static void
bench_switch (TgBench *bench, Ctx *c)
{
  g_autoptr (TgProducer) p = tg_producer_new ("bench-switch", 0);
  TgDeviceFunc cases[CASES];
  guint kernels[CASES], stage;
  cudaGraphExec_t ours, floor;

  for (guint i = 0; i < CASES; i++)
    {
      cases[i] = case_body;
      kernels[i] = CASE_KERNELS;
    }
  stage = tg_producer_add_switch_stage (p, "switch", TG_STAGE_CAPTURE_SAFE, "index",
                                        CASES, cases, NULL, NULL);
  tg_producer_declare_binding (p, stage, "word", sizeof (guint32));
  tg_bench_bind (p, "word", c->word, sizeof (guint32));
  tg_bench_bind (p, "index", c->index, sizeof (gint32));

  /* Both graphs read the index at every launch: one recording serves both
   * rows. */
  set_index (c, 2);
  ours = recorded_graph (c, p, tg_unconditional ());
  floor = hand_graph (c, cudaGraphCondTypeSwitch, tgb_launch_switch_set, c->index,
                      CASES, kernels, "hand-built SWITCH");
  graph_row (bench, c, "SWITCH producer (4 cases x 8 kernels, case 2 runs)", ours,
             floor, "hand-built SWITCH (4 bodies)");
  set_index (c, -1);
  graph_row (bench, c, "SWITCH producer, index out of range (-1: none runs)", ours,
             floor, "hand-built SWITCH (4 bodies)");
  TG_BENCH_CUDA (cudaGraphExecDestroy (ours));
  TG_BENCH_CUDA (cudaGraphExecDestroy (floor));
}

/* IF nodes with two bodies and SWITCH nodes need a 12.8 driver too. */
static void
bench_branches (TgBench *bench, Ctx *c)
{
  int driver = 0;

  TG_BENCH_CUDA (cudaDriverGetVersion (&driver));
  if (driver < 12080)
    {
      g_print ("  IF/ELSE and SWITCH rows skipped: driver < 12.8 (it is %d.%d)\n",
               driver / 1000, driver % 1000 / 10);
      return;
    }
  bench_if_else (bench, c);
  bench_switch (bench, c);
}
#else
static void
bench_branches (TgBench *bench, Ctx *c)
{
  g_print ("  IF/ELSE and SWITCH rows skipped: built with CUDA < 12.8\n");
}
#endif

/* Builds a floor of the loop into the capture on @s, its WHILE body on
 * @side; returns the body. */
typedef cudaGraph_t (*LoopFunc) (cudaStream_t s, cudaStream_t side,
                                 const TgBenchLoop *loop);

/* The floor @build makes, checked to be the chain @top with the body @body
 * (see tg_bench_graph_chain). */
static cudaGraphExec_t
loop_graph (Ctx *c, LoopFunc build, const char *top, const char *body, const char *what)
{
  g_autofree char *body_what = g_strdup_printf ("%s's body", what);
  cudaGraph_t graph, body_graph;

  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  body_graph = build (c->stream, c->side, &c->loop);
  graph = tg_bench_end_capture (c->stream);
  tg_bench_assert_chain (graph, top, what);
  tg_bench_assert_chain (body_graph, body, body_what);
  return tg_bench_instantiate_graph (graph);
}

static void
bench_loop (TgBench *bench, Ctx *c, guint rounds)
{
  g_autoptr (TgProducer) p = tg_producer_new ("bench-loop", 0);
  cudaGraphExec_t ours, floor;
  double t_ours, t_floor, t_host;

  tg_bench_add_relax_stages (p, &c->loop);
  ours = recorded_graph (c, p, tg_unconditional ());
  /* reset, the entry set kernel, the WHILE; its body: relax, the tail. */
  floor = loop_graph (c, tg_bench_hand_relax, "kkc", "kk", "hand-built WHILE");

  t_floor = tg_bench_graph_us (floor, c->stream, 1, rounds) / ITERS;
  t_ours = tg_bench_graph_us (ours, c->stream, 1, rounds) / ITERS;
  t_host = tg_bench_wall_us (host_loop, c, c->stream, 1, rounds, FALSE) / ITERS;
  tg_bench_add (bench, "conditions", "loop: time per iteration", "us", t_ours, t_floor,
                "hand-built WHILE", TG_BENCH_LOWER_IS_BETTER, 1.1);
  tg_bench_add (bench, "conditions", "loop: time per iteration vs host loop", "us",
                t_ours, t_host, "host loop + readback", TG_BENCH_LOWER_IS_BETTER, 1.0);
  TG_BENCH_CUDA (cudaGraphExecDestroy (ours));
  TG_BENCH_CUDA (cudaGraphExecDestroy (floor));
}

void
tg_bench_conditions (TgBench *bench)
{
  Ctx c = { 0 };

  c.rounds = tg_bench_quick (bench) ? 5 : 41;
  c.batch = tg_bench_quick (bench) ? 10 : 64;
  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&c.stream, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&c.side, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaMalloc ((void **)&c.word, sizeof (guint32)));
  TG_BENCH_CUDA (cudaMalloc ((void **)&c.flag, 2 * sizeof (gint32)));
  c.index = c.flag + 1;
  TG_BENCH_CUDA (cudaMallocHost ((void **)&c.pinned, sizeof (gint32)));
  tg_bench_loop_init (&c.loop, ITERS, c.stream);

  g_print ("  # graph shapes, one letter per node along its chain: k kernel, "
           "c conditional node, g child graph\n");
  bench_skip (bench, &c);
  bench_branches (bench, &c);
  bench_loop (bench, &c, tg_bench_quick (bench) ? 3 : 11);

  tg_bench_loop_clear (&c.loop);
  TG_BENCH_CUDA (cudaFreeHost (c.pinned));
  TG_BENCH_CUDA (cudaFree (c.flag));
  TG_BENCH_CUDA (cudaFree (c.word));
  TG_BENCH_CUDA (cudaStreamDestroy (c.side));
  TG_BENCH_CUDA (cudaStreamDestroy (c.stream));
}
