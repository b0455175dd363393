/* SPDX-License-Identifier: Apache-2.0 */
/* bench.h: the benchmark program's table.  Every row sets ours beside a raw
 * CUDA floor measured in the same run. */
#ifndef TG_BENCH_H
#define TG_BENCH_H

#include <trackgen/trackgen.h>

G_BEGIN_DECLS

typedef struct _TgBench TgBench;

typedef enum
{
  TG_BENCH_LOWER_IS_BETTER,  /* times: met when ours / floor <= target */
  TG_BENCH_HIGHER_IS_BETTER, /* rates: met when ours / floor >= target */
  TG_BENCH_INFO,             /* shown beside its floor, held to no target */
} TgBenchSense;

/* Adds a row: @what measured as @ours, against @floor (what @floor_what
 * measured, same @unit); the ratio ours / floor is held to @target. */
void tg_bench_add (TgBench *bench, const char *group, const char *what,
                   const char *unit, double ours, double floor, const char *floor_what,
                   TgBenchSense sense, double target);

/* Scales chosen by the command line (--quick for a smoke run). */
gboolean tg_bench_quick (const TgBench *bench);

/* Replays of the soak's step graph (--soak-replays). */
guint tg_bench_soak_replays (const TgBench *bench);

/* Adds the member "@key": @json (a JSON value) to the JSON file. */
void tg_bench_add_json (TgBench *bench, const char *key, const char *json);

/* Fails the run: the message is printed now and again after the table, goes
 * into the JSON file, and the program exits with status 1. */
void tg_bench_fail (TgBench *bench, const char *format, ...) G_GNUC_PRINTF (2, 3);

/* Median of @n samples (sorts them). */
double tg_bench_median (double *samples, guint n);

/* Median over @rounds of the GPU time per launch of @exec, launched @batch
 * times back to back on @stream between two events, in microseconds. */
double tg_bench_graph_us (cudaGraphExec_t exec, cudaStream_t stream, guint batch,
                          guint rounds);

/* Median over @rounds of the wall time per call of @fn, called @batch times
 * and then waited for (@stream synchronized), in microseconds.  With
 * @host_only, the clock stops before the wait: the host time of the calls. */
typedef void (*TgBenchFunc) (gpointer data);
double tg_bench_wall_us (TgBenchFunc fn, gpointer data, cudaStream_t stream,
                         guint batch, guint rounds, gboolean host_only);

/* tg_bench_wall_us for @n_fns functions sampled in turn, one batch of each
 * per round, so that drift during the run affects them alike: the median of
 * each in @medians. */
void tg_bench_wall_us_alternated (const TgBenchFunc *fns, guint n_fns, gpointer data,
                                  cudaStream_t stream, guint batch, guint rounds,
                                  gboolean host_only, double *medians);

/* Ends the capture on @stream and instantiates it (the graph is destroyed). */
cudaGraphExec_t tg_bench_instantiate (cudaStream_t stream);
/* The two halves of it: the capture's graph, so that its shape can be
 * checked first; and its instantiation, which destroys @graph. */
cudaGraph_t tg_bench_end_capture (cudaStream_t stream);
cudaGraphExec_t tg_bench_instantiate_graph (cudaGraph_t graph);
/* The same with cudaGraphInstantiateWithFlags' @flags (0: the same). */
cudaGraphExec_t tg_bench_instantiate_graph_flags (cudaGraph_t graph,
                                                  unsigned long long flags);

/* The caller's graph, captured on @stream: @p recorded under @condition.
 * What it holds at its top is shown, for reading the rows beside the
 * floors' shapes (the bodies of our conditional nodes cannot be queried
 * before CUDA 13.1), and checked to be @chain_is unless it is NULL (see
 * tg_bench_graph_chain). */
cudaGraphExec_t tg_bench_record (cudaStream_t stream, TgProducer *p,
                                 TgCondition condition, const char *chain_is);
/* The same, not instantiated. */
cudaGraph_t tg_bench_record_graph (cudaStream_t stream, TgProducer *p,
                                   TgCondition condition, const char *chain_is);

/* Aborts with a message when a CUDA call fails. */
#define TG_BENCH_CUDA(call)                                                            \
  G_STMT_START                                                                         \
  {                                                                                    \
    cudaError_t tg_bench_status_ = (call);                                             \
    if (tg_bench_status_ != cudaSuccess)                                               \
      g_error ("%s failed: %s", #call, cudaGetErrorName (tg_bench_status_));           \
  }                                                                                    \
  G_STMT_END

/* A kernel launcher's result as a stage's result. */
gboolean tg_bench_launched (cudaError_t status, GError **error);

/* Binds @device_ptr as @name; aborts with a message when it fails. */
void tg_bench_bind (TgProducer *p, const char *name, gpointer device_ptr, gsize size);

/* Enqueues @n small kernels on the binding "word", which the running stage
 * declared: the work of every benchmark's stages and bodies. */
gboolean tg_bench_tiny_kernels (const TgLaunch *launch, guint n, GError **error);

/* The word that small kernels bump (once each), read once the work on
 * @stream is done: the difference of two reads counts the kernels that ran. */
guint32 tg_bench_read_word (const guint32 *word, cudaStream_t stream);

/* A producer of @n_stages DEVICE stages, each one small kernel on @word
 * (bound as "word", declared by every stage). */
TgProducer *tg_bench_tiny_producer (const char *name, guint32 *word, guint n_stages);

/* A producer of one DEVICE stage, @fn called with @data, which declares
 * "word", bound to @word. */
TgProducer *tg_bench_one_stage_producer (const char *name, TgDeviceFunc fn,
                                         gpointer data, guint32 *word);

/* Raw CUDA floors built by hand (hand.c).  In a capture on @s: a new
 * conditional handle of the capture's graph; a conditional node of @type
 * with @size bodies after the stream's dependencies (its bodies in @bodies);
 * a body captured on @side between begin and end. */
cudaGraphConditionalHandle tg_bench_hand_handle (cudaStream_t s);
void tg_bench_hand_conditional (cudaStream_t s, cudaGraphConditionalHandle h,
                                enum cudaGraphConditionalNodeType type, guint size,
                                cudaGraph_t *bodies);
void tg_bench_hand_begin_body (cudaStream_t side, cudaGraph_t body);
void tg_bench_hand_end_body (cudaStream_t side);
/* @n small kernels on @s (the floor of @n tiny stages). */
void tg_bench_hand_tiny (cudaStream_t s, guint32 *word, guint n);
/* A body captured on @side: @n small kernels on @word. */
void tg_bench_hand_tiny_body (cudaStream_t side, cudaGraph_t body, guint32 *word,
                              guint n);
/* Aborts unless body b of the floor @what is a chain of kernels[b] kernels. */
void tg_bench_hand_assert_bodies (const cudaGraph_t *bodies, guint n_bodies,
                                  const guint *kernels, const char *what);
/* A kernel that sets a conditional handle from a device value (the floors'
 * set kernels, bench-kernels.h). */
typedef cudaError_t (*TgBenchSetter) (cudaStream_t s, cudaGraphConditionalHandle h,
                                      const gint32 *value);
/* The minimal floor of a condition, captured on @s: @setter sets a handle
 * from @value, then one conditional node of @type whose body i, captured on
 * @side, holds kernels[i] small kernels on @word (checked: a set kernel, the
 * node, and those bodies; @what names it in the message). */
cudaGraph_t tg_bench_hand_graph (cudaStream_t s, cudaStream_t side, guint32 *word,
                                 enum cudaGraphConditionalNodeType type,
                                 TgBenchSetter setter, const gint32 *value,
                                 guint n_bodies, const guint *kernels,
                                 const char *what);
/* Ties one CUDA user object, whose destructor does nothing, to @graph:
 * what a graph retaining anything pays at every launch. */
void tg_bench_hand_user_object (cudaGraph_t graph);

/* The shape of a graph, so that each hand-built floor is checked to be the
 * topology it claims before it is timed: one letter per node along its
 * chain of dependencies from its one root (k kernel, c conditional node,
 * g child graph, e empty, ? other), and a note when the graph is not one
 * chain (free with g_free).  The bodies of a conditional node are graphs of
 * their own: check them through the handles the node gave. */
char *tg_bench_graph_chain (cudaGraph_t graph);
/* Aborts unless tg_bench_graph_chain (@graph) is @chain; @what names the
 * graph in the message. */
void tg_bench_assert_chain (cudaGraph_t graph, const char *chain, const char *what);

/* Warp-shaped floors (warp.c): what NVIDIA Warp adds to the capture on @s
 * for wp.capture_if, a set kernel then an IF node per branch given (its
 * body in @if_body or @else_body; one of them may be NULL), and for
 * wp.capture_while, a set kernel then a WHILE node (its body in @body), whose
 * handle is returned for the set kernel that ends the body
 * (tg_bench_warp_set_condition).  @flag is the int32 condition. */
void tg_bench_warp_insert_if_else (cudaStream_t s, const gint32 *flag,
                                   cudaGraph_t *if_body, cudaGraph_t *else_body);
cudaGraphConditionalHandle
tg_bench_warp_insert_while (cudaStream_t s, const gint32 *flag, cudaGraph_t *body);
void tg_bench_warp_set_condition (cudaStream_t s, const gint32 *flag,
                                  cudaGraphConditionalHandle h);

/* The relaxation loop (loop.c): device buffers, then the same work as
 * TrackGen stages and by hand.  Converges after @iters iterations. */
typedef struct
{
  gint32 *flag, *value, *target;
  gint32 *it;           /* the hand-built WHILE's counter */
  TgLoopStatus *status; /* TrackGen's loop status */
  gint32 iters;
} TgBenchLoop;

void tg_bench_loop_init (TgBenchLoop *loop, gint32 iters, cudaStream_t stream);
void tg_bench_loop_clear (TgBenchLoop *loop);
/* Adds the stages "reset" (DEVICE) and "relax" (LOOP) to @p and binds their
 * buffers. */
void tg_bench_add_relax_stages (TgProducer *p, const TgBenchLoop *loop);
/* The same, the relaxation deciding its own loop (a loop stage with
 * set_by_body, its kernel calling tg_loop_next): no tail kernel. */
void tg_bench_add_relax_next_stages (TgProducer *p, const TgBenchLoop *loop);
/* The floor of those stages, in a capture on @s: reset, then a WHILE node
 * whose body is captured on @side; returns the body (owned by the graph).
 * The same nodes as TrackGen's loop: a set kernel before the WHILE and at
 * the end of its body, both keeping the cap's counter. */
cudaGraph_t tg_bench_hand_relax (cudaStream_t s, cudaStream_t side,
                                 const TgBenchLoop *loop);
/* The minimal floor of those stages, what is strictly needed: the reset and
 * the relaxation set the WHILE's handle themselves (the cap folded into the
 * relaxation's write), so no set kernel runs. */
cudaGraph_t tg_bench_minimal_relax (cudaStream_t s, cudaStream_t side,
                                    const TgBenchLoop *loop);
/* The same with the relaxation in a child graph node of the body, as
 * TrackGen moves each captured segment of a body into it (lib/exec/body.c):
 * what that node costs an iteration. */
cudaGraph_t tg_bench_minimal_relax_child (cudaStream_t s, cudaStream_t side,
                                          const TgBenchLoop *loop);
/* The minimal WHILE with the body's kernel of the loop its body decides
 * (tgb_launch_relax_next(): tg_loop_next() keeps the status and the cap),
 * straight in the body: what that kernel costs an iteration. */
cudaGraph_t tg_bench_minimal_relax_next (cudaStream_t s, cudaStream_t side,
                                         const TgBenchLoop *loop);
/* The Warp-shaped floor of those stages: reset, then what wp.capture_while
 * adds (warp.c) with the relaxation as its body; no cap. */
cudaGraph_t tg_bench_warp_relax (cudaStream_t s, cudaStream_t side,
                                 const TgBenchLoop *loop);
/* A floor of the loop: @build makes it in a capture on @s, its WHILE body
 * captured on @side; checked to be the chain @top with the body @body (see
 * tg_bench_graph_chain; @what names it in the message). */
typedef cudaGraph_t (*TgBenchLoopFunc) (cudaStream_t s, cudaStream_t side,
                                        const TgBenchLoop *loop);
cudaGraph_t tg_bench_loop_graph (cudaStream_t s, cudaStream_t side,
                                 const TgBenchLoop *loop, TgBenchLoopFunc build,
                                 const char *top, const char *body, const char *what);
/* Whether the loop's last run did its work: @loop->iters iterations, then
 * stopped.  Synchronizes @stream. */
gboolean tg_bench_loop_converged (const TgBenchLoop *loop, cudaStream_t stream);

/* The shapes of the condition rows: a then-branch of 32 small kernels (an
 * else branch runs 1), a SWITCH of 4 cases of 8, a loop that converges
 * after 1000 iterations. */
#define TG_BENCH_COND_KERNELS 32
#define TG_BENCH_CASES 4
#define TG_BENCH_CASE_KERNELS 8
#define TG_BENCH_LOOP_ITERS 1000

/* The producers of the condition rows (condition-bench.c), for the same
 * rows timed beside NVIDIA Warp (same-clock.c): a stage of 32 small kernels
 * on @word guarded by @flag, with an else branch of one; a SWITCH stage of 4
 * cases of 8 small kernels, the case read from @index.  IF nodes with two
 * bodies and SWITCH nodes need CUDA 12.8. */
#if CUDART_VERSION >= 12080
TgProducer *tg_bench_if_else_producer (const char *name, guint32 *word, gint32 *flag);
TgProducer *tg_bench_switch_producer (const char *name, guint32 *word, gint32 *index);
#endif

/* The sections, one per issue's benchmarks. */
void tg_bench_exec (TgBench *bench);
void tg_bench_conditions (TgBench *bench);
void tg_bench_taken (TgBench *bench);
void tg_bench_latency (TgBench *bench);
void tg_bench_seeds (TgBench *bench);
void tg_bench_soak (TgBench *bench);

/* tg-bench --seeds-ranges=@launches (bench/advance-fill-ncu.sh, issue 34):
 * the one seeds call's kernel, masked as the seeds rows are and unmasked, its
 * other shapes and the copy its row is held to, at E = 2^20 and 2^22, each
 * @launches times between cudaProfilerStart and cudaProfilerStop, so that a
 * profiler started with profiling off sees these alone (a range each in
 * ncu's range replay).  Prints each range as it starts ("range", its index,
 * log2 E, "kernel" or "copy", bytes a launch moves, launches, what), then
 * each one's GPU time a launch as the seeds rows take it ("time", log2 E,
 * microseconds, what). */
void tg_bench_seeds_ranges (guint launches);

G_END_DECLS

#endif
