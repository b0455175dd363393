/* SPDX-License-Identifier: Apache-2.0 */
/* taken-bench.c: conditions that run their body, around one long kernel (a
 * 47 us wait, about the work of a track regeneration), beside hand-built
 * floors in the same run (issue 27 section 3):
 *  - the host running ahead: 1000 REPLAY calls of a conditional producer
 *    back to back, host time per call, vs 1000 cudaGraphLaunch of a
 *    hand-built graph with the same IF node (a set kernel reading the
 *    flag, the IF, the kernel in its body).  The driver blocks the host
 *    once about 1000 launches of graphs with an IF node are queued (about
 *    2000 without), so this time is mostly the driver's: ours must not add
 *    to it.  Beside it the same without a condition (our producer called
 *    unconditionally vs the kernel captured alone), and both over 50 calls,
 *    which the queue holds: what a host loop running ahead pays;
 *  - a taken IF, GPU time: the conditional producer recorded into a
 *    caller's graph vs the hand-built IF graph, and that floor beside the
 *    kernel captured alone: what a taken condition costs the GPU.
 * Every graph is checked to run the kernel when the flag is set and not
 * when it is clear, and the floors' shapes are checked (hand.c). */
#include "config.h"
#include "bench.h"
#include "bench-kernels.h"

#define LONG_NS 47000
#define CALLS 1000
#define SHORT_CALLS 50

typedef struct
{
  cudaStream_t stream, side;
  guint32 *word;
  gint32 *flag;
  TgProducer *conditional, *plain; /* called with and without the flag */
  cudaGraphExec_t hand_if, hand_plain;
  cudaGraphExec_t exec; /* what launch_exec launches */
} Ctx;

static gboolean
long_stage (const TgLaunch *launch, gpointer unused, GError **error)
{
  return tg_bench_launched (tgb_launch_long (tg_launch_get_stream (launch),
                                             tg_launch_get_binding (launch, "word"),
                                             LONG_NS),
                            error);
}

/* The floors: the long kernel captured alone ("k"), or in the body of an IF
 * node that TrackGen's set kernel decides from the flag ("kc", its body
 * "k"); checked to be so. */
static cudaGraphExec_t
hand_graph (Ctx *c, gboolean conditional, const char *what)
{
  cudaGraph_t graph, body = NULL;

  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  if (conditional)
    {
      cudaGraphConditionalHandle h = tg_bench_hand_handle (c->stream);

      TG_BENCH_CUDA (tgb_launch_if_set (c->stream, h, c->flag));
      tg_bench_hand_conditional (c->stream, h, cudaGraphCondTypeIf, 1, &body);
      tg_bench_hand_begin_body (c->side, body);
      TG_BENCH_CUDA (tgb_launch_long (c->side, c->word, LONG_NS));
      tg_bench_hand_end_body (c->side);
    }
  else
    TG_BENCH_CUDA (tgb_launch_long (c->stream, c->word, LONG_NS));
  graph = tg_bench_end_capture (c->stream);
  tg_bench_assert_chain (graph, conditional ? "kc" : "k", what);
  if (conditional)
    {
      g_autofree char *body_what = g_strdup_printf ("%s's body", what);
      tg_bench_assert_chain (body, "k", body_what);
    }
  return tg_bench_instantiate_graph (graph);
}

static void
replay (TgProducer *p, cudaStream_t stream, TgCondition condition)
{
  g_autoptr (GError) error = NULL;

  if (!tg_producer_run (p, stream, TG_POLICY_REPLAY, condition, &error))
    g_error ("bench: %s", error->message);
}

static void
replay_conditional (gpointer data)
{
  Ctx *c = data;

  replay (c->conditional, c->stream, tg_conditional (c->flag));
}

static void
replay_plain (gpointer data)
{
  Ctx *c = data;

  replay (c->plain, c->stream, tg_unconditional ());
}

static void
launch_exec (gpointer data)
{
  Ctx *c = data;

  TG_BENCH_CUDA (cudaGraphLaunch (c->exec, c->stream));
}

static void
set_flag (Ctx *c, gint32 value)
{
  TG_BENCH_CUDA (cudaMemcpyAsync (c->flag, &value, sizeof value, cudaMemcpyHostToDevice,
                                  c->stream));
  TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
}

/* Fails the run unless one call of @fn runs the long kernel once with the
 * flag set and, when @conditional, never with it clear; leaves it set. */
static void
check_runs (TgBench *bench, Ctx *c, TgBenchFunc fn, gboolean conditional,
            const char *what)
{
  for (gint32 flag = conditional ? 0 : 1; flag <= 1; flag++)
    {
      guint32 before, ran;

      set_flag (c, flag);
      before = tg_bench_read_word (c->word, c->stream);
      fn (c);
      ran = tg_bench_read_word (c->word, c->stream) - before;
      if (ran != (guint32)flag)
        tg_bench_fail (bench,
                       "%s ran the long kernel %u times with the flag %d, not %d", what,
                       ran, flag, flag);
    }
}

/* check_runs for a graph. */
static void
check_graph (TgBench *bench, Ctx *c, cudaGraphExec_t exec, gboolean conditional,
             const char *what)
{
  c->exec = exec;
  check_runs (bench, c, launch_exec, conditional, what);
}

/* The host running ahead: @n calls back to back of @fn beside as many
 * launches of @floor, host time per call, alternated; between batches the
 * stream is drained.  Held to 1.10x when @target. */
static void
ahead_row (TgBench *bench, Ctx *c, const char *what, TgBenchFunc fn,
           cudaGraphExec_t floor, const char *floor_what, guint n, guint rounds,
           gboolean target)
{
  const TgBenchFunc fns[] = { launch_exec, fn };
  double t[G_N_ELEMENTS (fns)];

  c->exec = floor;
  tg_bench_wall_us_alternated (fns, G_N_ELEMENTS (fns), c, c->stream, n, rounds, TRUE,
                               t);
  tg_bench_add (bench, "taken", what, "us", t[1], t[0], floor_what,
                target ? TG_BENCH_LOWER_IS_BETTER : TG_BENCH_INFO, 1.1);
}

/* The rows over @n calls; the conditional one is held to its target at
 * CALLS, where the driver blocks the host. */
static void
bench_ahead (TgBench *bench, Ctx *c, guint n, guint rounds)
{
  g_autofree char *conditional
      = g_strdup_printf ("conditional REPLAY, %u calls back to back: host per call", n);
  g_autofree char *plain
      = g_strdup_printf ("REPLAY without a condition, %u calls back to back", n);

  ahead_row (bench, c, conditional, replay_conditional, c->hand_if,
             "cudaGraphLaunch of a hand-built IF: set kernel, IF (the kernel)", n,
             rounds, n == CALLS);
  ahead_row (bench, c, plain, replay_plain, c->hand_plain,
             "cudaGraphLaunch of the kernel captured alone", n, rounds, FALSE);
}

/* A taken IF, GPU time per launch: ours recorded into a caller's graph vs
 * the hand-built IF, and that floor vs the kernel alone. */
static void
bench_taken_gpu (TgBench *bench, Ctx *c, guint batch, guint rounds)
{
  cudaGraphExec_t ours
      = tg_bench_record (c->stream, c->conditional, tg_conditional (c->flag), NULL);
  double t_ours, t_if, t_plain;

  check_graph (bench, c, ours, TRUE, "the recorded conditional producer");
  t_if = tg_bench_graph_us (c->hand_if, c->stream, batch, rounds);
  t_ours = tg_bench_graph_us (ours, c->stream, batch, rounds);
  t_plain = tg_bench_graph_us (c->hand_plain, c->stream, batch, rounds);
  tg_bench_add (bench, "taken", "taken IF around a 47 us kernel: GPU time", "us",
                t_ours, t_if, "hand-built IF: set kernel, IF (the kernel)",
                TG_BENCH_LOWER_IS_BETTER, 1.1);
  tg_bench_add (bench, "taken", "hand-built taken IF vs the kernel alone: GPU time",
                "us", t_if, t_plain, "the kernel captured alone (what a taken IF adds)",
                TG_BENCH_INFO, 0);
  TG_BENCH_CUDA (cudaGraphExecDestroy (ours));
}

void
tg_bench_taken (TgBench *bench)
{
  const guint rounds = tg_bench_quick (bench) ? 5 : 41,
              batch = tg_bench_quick (bench) ? 10 : 64,
              ahead_rounds = tg_bench_quick (bench) ? 3 : 11;
  Ctx c = { 0 };
  TgRunnerStats stats;

  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&c.stream, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&c.side, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaMalloc ((void **)&c.word, sizeof (guint32)));
  TG_BENCH_CUDA (cudaMalloc ((void **)&c.flag, sizeof (gint32)));
  c.conditional = tg_bench_one_stage_producer ("bench-taken", long_stage, NULL, c.word);
  c.plain = tg_bench_one_stage_producer ("bench-taken-plain", long_stage, NULL, c.word);
  c.hand_if = hand_graph (&c, TRUE, "hand-built IF");
  c.hand_plain = hand_graph (&c, FALSE, "the kernel alone");
  check_graph (bench, &c, c.hand_if, TRUE, "the hand-built IF");
  check_graph (bench, &c, c.hand_plain, FALSE, "the kernel alone");
  check_runs (bench, &c, replay_conditional, TRUE, "the conditional producer (REPLAY)");
  check_runs (bench, &c, replay_plain, FALSE, "the producer (REPLAY)");

  bench_ahead (bench, &c, CALLS, ahead_rounds);
  bench_ahead (bench, &c, SHORT_CALLS, rounds);
  /* Every call after the first launched the producer's own graph. */
  tg_producer_get_runner_stats (c.conditional, &stats);
  if (stats.n_captures != 1 || stats.n_recaptures != 0)
    tg_bench_fail (bench,
                   "bench-taken: %" G_GUINT64_FORMAT " captures, %" G_GUINT64_FORMAT
                   " re-captures: not one capture then launches",
                   stats.n_captures, stats.n_recaptures);
  bench_taken_gpu (bench, &c, batch, rounds);

  TG_BENCH_CUDA (cudaGraphExecDestroy (c.hand_if));
  TG_BENCH_CUDA (cudaGraphExecDestroy (c.hand_plain));
  tg_producer_unref (c.conditional);
  tg_producer_unref (c.plain);
  TG_BENCH_CUDA (cudaFree (c.flag));
  TG_BENCH_CUDA (cudaFree (c.word));
  TG_BENCH_CUDA (cudaStreamDestroy (c.side));
  TG_BENCH_CUDA (cudaStreamDestroy (c.stream));
}
