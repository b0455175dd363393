/* SPDX-License-Identifier: Apache-2.0 */
/* same-clock.c: issue 34's "one clock": the condition rows' graphs (ours
 * as a user records them, and the hand-built minimal floors of
 * condition-bench.c, built by the same functions) and one timing loop, as a
 * shared object that bench/warp-bench.py loads with ctypes.  The script
 * captures NVIDIA Warp's graphs of the same rows in the same process (their
 * bodies enqueue these kernels: tgb_clock_tiny and kin), and every graph,
 * Warp's included, is launched by tgb_clock_time: on one stream, behind one
 * spin kernel, between one pair of events, round by round in turn.  The
 * exported names are tgb_clock_* alone (same-clock.map); a row is named by
 * a string: "skip", "if-else", "while-by" or "switch".  bench/python-bench.py
 * loads it too, for tg-bench's REPLAY call in its own process
 * (tgb_clock_replay_us), beside the same call made from Python. */
#include "config.h"
#include "bench.h"
#include "bench-kernels.h"

#include <stdio.h>

/* The spin before each timed batch outlasts this many times the host's
 * slowest enqueue of a batch (untimed, first), so that the events time the
 * GPU alone. */
#define SPIN_MARGIN 3.0
#define SPIN_MIN_US 20.0
#define SPIN_MAX_US 1e6 /* what the spin kernel's 32-bit nanoseconds hold */
#define SWITCH_CASE 2
#define REPLAY_STAGES 32 /* exec-bench.c's REPLAY row */

typedef struct
{
  cudaStream_t stream, side;
  guint32 *word; /* what the small kernels bump */
  guint32 *spun; /* what the spin bumps */
  gint32 *flag, *index;
  TgBenchLoop loop;
  cudaEvent_t start, stop;
  GPtrArray *producers; /* kept as long as the graphs that recorded them */
  TgProducer *replay;   /* tgb_clock_replay_us's, made at its first call */
} TgbClock;

/* Every function exported: -Wmissing-prototypes wants them declared, and
 * the script is their only caller. */
TgbClock *tgb_clock_new (void);
void tgb_clock_free (TgbClock *c);
int tgb_clock_constant (const char *name);
void *tgb_clock_stream (TgbClock *c);
void *tgb_clock_address (TgbClock *c, const char *name);
void tgb_clock_set (TgbClock *c, const char *name, gint32 value);
void *tgb_clock_ours (TgbClock *c, const char *row);
void *tgb_clock_floor (TgbClock *c, const char *row);
void *tgb_clock_instantiate (void *graph, int autofree);
void *tgb_clock_instantiate_kept (void *graph);
void tgb_clock_exec_destroy (void *exec);
void tgb_clock_begin (TgbClock *c);
void *tgb_clock_end (TgbClock *c);
char *tgb_clock_chain (void *graph);
void tgb_clock_string_free (char *s);
int tgb_clock_dot (void *graph, const char *path);
void tgb_clock_tiny (TgbClock *c, void *stream, guint n);
void tgb_clock_reset (TgbClock *c, void *stream);
void tgb_clock_relax (TgbClock *c, void *stream);
guint tgb_clock_runs (TgbClock *c, void *exec);
int tgb_clock_converged (TgbClock *c);
void tgb_clock_sync (TgbClock *c);
double tgb_clock_replay_us (TgbClock *c, guint batch);
double tgb_clock_time (TgbClock *c, void *const *execs, guint n, guint batch,
                       guint rounds, double spin_us, double *samples,
                       double *enqueue_us);

/* NULL without a usable GPU (the message printed). */
TgbClock *
tgb_clock_new (void)
{
  g_autoptr (GError) error = NULL;
  TgbClock *c;

  if (!tg_device_check (0, &error))
    {
      g_printerr ("same-clock: needs a CUDA GPU: %s\n", error->message);
      return NULL;
    }
  c = g_new0 (TgbClock, 1);
  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&c->stream, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&c->side, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaMalloc ((void **)&c->word, 2 * sizeof (guint32)));
  c->spun = c->word + 1;
  TG_BENCH_CUDA (cudaMalloc ((void **)&c->flag, 2 * sizeof (gint32)));
  c->index = c->flag + 1;
  TG_BENCH_CUDA (cudaMemsetAsync (c->word, 0, 2 * sizeof (guint32), c->stream));
  TG_BENCH_CUDA (cudaMemsetAsync (c->flag, 0, 2 * sizeof (gint32), c->stream));
  TG_BENCH_CUDA (cudaEventCreate (&c->start));
  TG_BENCH_CUDA (cudaEventCreate (&c->stop));
  tg_bench_loop_init (&c->loop, TG_BENCH_LOOP_ITERS, c->stream);
  c->producers = g_ptr_array_new_with_free_func ((GDestroyNotify)tg_producer_unref);
  /* Each kernel that Warp's bodies enqueue runs once outside any capture,
   * so that none is loaded (lazily) during one. */
  TG_BENCH_CUDA (tgb_launch_tiny (c->stream, c->spun));
  TG_BENCH_CUDA (tgb_launch_long (c->stream, c->spun, 1000));
  TG_BENCH_CUDA (tgb_launch_reset (c->stream, c->loop.value, c->loop.flag));
  TG_BENCH_CUDA (
      tgb_launch_relax (c->stream, c->loop.value, c->loop.flag, c->loop.target));
  TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
  return c;
}

void
tgb_clock_free (TgbClock *c)
{
  TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
  g_ptr_array_unref (c->producers);
  tg_bench_loop_clear (&c->loop);
  TG_BENCH_CUDA (cudaEventDestroy (c->start));
  TG_BENCH_CUDA (cudaEventDestroy (c->stop));
  TG_BENCH_CUDA (cudaFree (c->flag));
  TG_BENCH_CUDA (cudaFree (c->word));
  TG_BENCH_CUDA (cudaStreamDestroy (c->side));
  TG_BENCH_CUDA (cudaStreamDestroy (c->stream));
  g_free (c);
}

/* The rows' shapes, so that the script checks and scales by them: "kernels"
 * (a then-branch), "cases", "case-kernels", "case" (the one selected),
 * "iters" (of the loop), "replay-stages" (of tgb_clock_replay_us's
 * producer); -1 for another name. */
int
tgb_clock_constant (const char *name)
{
  static const struct
  {
    const char *name;
    int value;
  } constants[] = { { "kernels", TG_BENCH_COND_KERNELS },
                    { "cases", TG_BENCH_CASES },
                    { "case-kernels", TG_BENCH_CASE_KERNELS },
                    { "case", SWITCH_CASE },
                    { "iters", TG_BENCH_LOOP_ITERS },
                    { "replay-stages", REPLAY_STAGES } };

  for (guint i = 0; i < G_N_ELEMENTS (constants); i++)
    if (g_str_equal (name, constants[i].name))
      return constants[i].value;
  return -1;
}

/* The stream every graph is launched on and timed. */
void *
tgb_clock_stream (TgbClock *c)
{
  return c->stream;
}

/* The device address of the int32 "flag" (IF rows), "index" (SWITCH) or
 * "loop-flag" (the loop's flag, which Warp's WHILE reads), or of the
 * 32-bit "word" that the small kernels bump; NULL for another name. */
void *
tgb_clock_address (TgbClock *c, const char *name)
{
  return g_str_equal (name, "flag")        ? (void *)c->flag
         : g_str_equal (name, "index")     ? (void *)c->index
         : g_str_equal (name, "loop-flag") ? (void *)c->loop.flag
         : g_str_equal (name, "word")      ? (void *)c->word
                                           : NULL;
}

/* Writes @value to the int32 tgb_clock_address (@name), in stream order. */
void
tgb_clock_set (TgbClock *c, const char *name, gint32 value)
{
  gint32 *address = tgb_clock_address (c, name);

  g_return_if_fail (address != NULL);
  TG_BENCH_CUDA (cudaMemcpyAsync (address, &value, sizeof value, cudaMemcpyHostToDevice,
                                  c->stream));
  TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
}

static gboolean
branches_supported (void)
{
#if CUDART_VERSION >= 12080
  int driver = 0;

  TG_BENCH_CUDA (cudaDriverGetVersion (&driver));
  return driver >= 12080;
#else
  return FALSE;
#endif
}

static TgProducer *
kept (TgbClock *c, TgProducer *p)
{
  g_ptr_array_add (c->producers, p);
  return p;
}

static void *
record (TgbClock *c, const char *row)
{
  if (g_str_equal (row, "skip"))
    return tg_bench_record_graph (
        c->stream,
        kept (c, tg_bench_tiny_producer ("clock-skip", c->word, TG_BENCH_COND_KERNELS)),
        tg_conditional (c->flag), NULL);
  if (g_str_equal (row, "while-by"))
    {
      TgProducer *p = kept (c, tg_producer_new ("clock-while-by", 0));

      tg_bench_add_relax_next_stages (p, &c->loop);
      return tg_bench_record_graph (c->stream, p, tg_unconditional (), "gkc");
    }
  if (!branches_supported ())
    return NULL;
#if CUDART_VERSION >= 12080
  if (g_str_equal (row, "if-else"))
    return tg_bench_record_graph (
        c->stream,
        kept (c, tg_bench_if_else_producer ("clock-if-else", c->word, c->flag)),
        tg_unconditional (), NULL);
  if (g_str_equal (row, "switch"))
    return tg_bench_record_graph (
        c->stream,
        kept (c, tg_bench_switch_producer ("clock-switch", c->word, c->index)),
        tg_unconditional (), NULL);
#endif
  return NULL;
}

/* Our graph of @row, as a user records it: the producer of tg-bench's row
 * (condition-bench.c) recorded into a capture on the clock's stream, not
 * instantiated; NULL for a row this build or driver cannot make (IF/ELSE
 * and SWITCH need CUDA 12.8) or an unknown one. */
void *
tgb_clock_ours (TgbClock *c, const char *row)
{
  void *graph = record (c, row);

  /* What tg_bench_record_graph printed, before the script's next lines. */
  fflush (stdout);
  return graph;
}

/* The hand-built minimal floor of @row, checked to be its topology (a set
 * kernel and the node; for the loop, a reset that sets the handle and a
 * WHILE whose relaxation sets it), not instantiated; NULL as
 * tgb_clock_ours. */
void *
tgb_clock_floor (TgbClock *c, const char *row)
{
  const guint then_else[] = { TG_BENCH_COND_KERNELS, 1 };
  guint cases[TG_BENCH_CASES];

  if (g_str_equal (row, "skip"))
    return tg_bench_hand_graph (c->stream, c->side, c->word, cudaGraphCondTypeIf,
                                tgb_launch_if_set, c->flag, 1, then_else,
                                "hand-built IF");
  if (g_str_equal (row, "while-by"))
    return tg_bench_loop_graph (c->stream, c->side, &c->loop, tg_bench_minimal_relax,
                                "kc", "k", "minimal WHILE");
  if (!branches_supported ())
    return NULL;
  if (g_str_equal (row, "if-else"))
    return tg_bench_hand_graph (c->stream, c->side, c->word, cudaGraphCondTypeIf,
                                tgb_launch_if_set, c->flag, 2, then_else,
                                "hand-built IF/ELSE");
  if (g_str_equal (row, "switch"))
    {
      for (guint i = 0; i < TG_BENCH_CASES; i++)
        cases[i] = TG_BENCH_CASE_KERNELS;
      return tg_bench_hand_graph (c->stream, c->side, c->word, cudaGraphCondTypeSwitch,
                                  tgb_launch_switch_set, c->index, TG_BENCH_CASES,
                                  cases, "hand-built SWITCH");
    }
  return NULL;
}

/* Instantiates @graph and destroys it: flags 0, as tg-bench does, or with
 * @autofree cudaGraphInstantiateFlagAutoFreeOnLaunch, as Warp does. */
void *
tgb_clock_instantiate (void *graph, int autofree)
{
  return tg_bench_instantiate_graph_flags (
      graph, autofree ? cudaGraphInstantiateFlagAutoFreeOnLaunch : 0);
}

/* The same for a graph of someone else's (Warp's), left as it is: how
 * the graph runs without its owner's instantiation flags.  A graph holding
 * conditional nodes takes one executable at a time: pass one its owner did
 * not instantiate.  NULL when the driver refuses it (the message printed):
 * the row goes without that column. */
void *
tgb_clock_instantiate_kept (void *graph)
{
  cudaGraphExec_t exec = NULL;
  cudaError_t status = cudaGraphInstantiate (&exec, graph, 0);

  if (status == cudaSuccess)
    return exec;
  g_printerr ("same-clock: cudaGraphInstantiate of Warp's graph: %s\n",
              cudaGetErrorName (status));
  (void)cudaGetLastError ();
  return NULL;
}

void
tgb_clock_exec_destroy (void *exec)
{
  TG_BENCH_CUDA (cudaGraphExecDestroy (exec));
}

/* A capture of the clock's stream (thread-local mode, as the floors'), for
 * the script to record into through the Python package; its graph, not
 * instantiated, or NULL when the capture was lost (the message printed). */
void
tgb_clock_begin (TgbClock *c)
{
  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
}

void *
tgb_clock_end (TgbClock *c)
{
  cudaGraph_t graph = NULL;
  cudaError_t status = cudaStreamEndCapture (c->stream, &graph);

  if (status == cudaSuccess)
    return graph;
  g_printerr ("same-clock: cudaStreamEndCapture: %s\n", cudaGetErrorName (status));
  (void)cudaGetLastError ();
  return NULL;
}

/* tg_bench_graph_chain (@graph), any graph's (Warp's too); free it with
 * tgb_clock_string_free. */
char *
tgb_clock_chain (void *graph)
{
  return tg_bench_graph_chain (graph);
}

void
tgb_clock_string_free (char *s)
{
  g_free (s);
}

/* cudaGraphDebugDotPrint of @graph, verbose (kernel parameters, node
 * attributes, conditional handles), to @path: its cudaError_t. */
int
tgb_clock_dot (void *graph, const char *path)
{
  return cudaGraphDebugDotPrint (graph, path, cudaGraphDebugDotFlagsVerbose);
}

/* The work of Warp's bodies, enqueued on @stream (Warp's capturing
 * stream): @n small kernels; the loop's reset and one relaxation. */
void
tgb_clock_tiny (TgbClock *c, void *stream, guint n)
{
  tg_bench_hand_tiny (stream, c->word, n);
}

void
tgb_clock_reset (TgbClock *c, void *stream)
{
  TG_BENCH_CUDA (tgb_launch_reset (stream, c->loop.value, c->loop.flag));
}

void
tgb_clock_relax (TgbClock *c, void *stream)
{
  TG_BENCH_CUDA (
      tgb_launch_relax (stream, c->loop.value, c->loop.flag, c->loop.target));
}

/* The small kernels that one launch of @exec ran on the clock's stream. */
guint
tgb_clock_runs (TgbClock *c, void *exec)
{
  guint32 before = tg_bench_read_word (c->word, c->stream);

  TG_BENCH_CUDA (cudaGraphLaunch (exec, c->stream));
  return tg_bench_read_word (c->word, c->stream) - before;
}

/* Whether the loop's last run made its iterations, then stopped. */
int
tgb_clock_converged (TgbClock *c)
{
  return tg_bench_loop_converged (&c->loop, c->stream);
}

/* Waits for the work on the clock's stream. */
void
tgb_clock_sync (TgbClock *c)
{
  TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
}

static void
replay_call (gpointer data)
{
  TgbClock *c = data;
  g_autoptr (GError) error = NULL;

  if (!tg_producer_run (c->replay, c->stream, TG_POLICY_REPLAY, tg_unconditional (),
                        &error))
    g_error ("same-clock: %s", error->message);
}

/* One sample of tg-bench's REPLAY row, in this process: the host time per
 * call of @batch REPLAY calls on the clock's stream, after one call and a
 * wait (tg_bench_wall_us), in microseconds, of a producer of REPLAY_STAGES
 * small-kernel stages (tg_bench_tiny_producer, as exec-bench.c's). */
double
tgb_clock_replay_us (TgbClock *c, guint batch)
{
  g_return_val_if_fail (batch > 0, -1.0);
  if (c->replay == NULL)
    c->replay = kept (c, tg_bench_tiny_producer ("clock-replay", c->word, REPLAY_STAGES));
  return tg_bench_wall_us (replay_call, c, c->stream, batch, 1, TRUE);
}

static void
launch_batch (TgbClock *c, void *exec, guint batch)
{
  for (guint b = 0; b < batch; b++)
    TG_BENCH_CUDA (cudaGraphLaunch (exec, c->stream));
}

/* GPU time per launch of each of the @n executable graphs @execs (any
 * one's: ours, Warp's, a floor), in microseconds: in each of @rounds
 * rounds, each graph in turn (the first one rotating, so that none always
 * follows the same one) is launched @batch times back to back on the
 * clock's stream, behind a spin kernel of @spin_us (0: SPIN_MARGIN times
 * the host's slowest enqueue of a batch, measured first, at least
 * SPIN_MIN_US), between two events.  Sample r of graph i goes to
 * samples[i * rounds + r], and the host's time to enqueue that spin and
 * batch to enqueue_us[i * rounds + r]: where it exceeds the spin, the GPU
 * waited for the host.  Returns the spin. */
double
tgb_clock_time (TgbClock *c, void *const *execs, guint n, guint batch, guint rounds,
                double spin_us, double *samples, double *enqueue_us)
{
  gint64 slowest = 0;

  g_return_val_if_fail (n > 0 && batch > 0 && rounds > 0, -1.0);
  for (guint i = 0; i < n; i++)
    {
      gint64 t0;

      launch_batch (c, execs[i], 1); /* warm-up */
      TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
      t0 = g_get_monotonic_time ();
      launch_batch (c, execs[i], batch);
      slowest = MAX (slowest, g_get_monotonic_time () - t0);
      TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
    }
  if (spin_us <= 0)
    spin_us = MAX (SPIN_MARGIN * slowest, SPIN_MIN_US);
  spin_us = MIN (spin_us, SPIN_MAX_US);
  for (guint r = 0; r < rounds; r++)
    for (guint k = 0; k < n; k++)
      {
        guint i = (r + k) % n;
        gint64 t0 = g_get_monotonic_time ();
        float ms = 0;

        TG_BENCH_CUDA (tgb_launch_long (c->stream, c->spun, (guint32)(spin_us * 1e3)));
        TG_BENCH_CUDA (cudaEventRecord (c->start, c->stream));
        launch_batch (c, execs[i], batch);
        enqueue_us[(gsize)i * rounds + r] = (double)(g_get_monotonic_time () - t0);
        TG_BENCH_CUDA (cudaEventRecord (c->stop, c->stream));
        TG_BENCH_CUDA (cudaEventSynchronize (c->stop));
        TG_BENCH_CUDA (cudaEventElapsedTime (&ms, c->start, c->stop));
        samples[(gsize)i * rounds + r] = 1000.0 * ms / batch;
      }
  return spin_us;
}
