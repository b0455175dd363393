/* SPDX-License-Identifier: Apache-2.0 */
/* loop.c: the relaxation loop of the condition and soak benchmarks, as
 * TrackGen stages (driven by the flag, or deciding its own loop) and as its
 * raw CUDA floors (our topology, the minimal one, Warp's).  A reset sets value = 0 and
 * flag = 1; each iteration bumps value and clears flag once value reaches target, so
 * the loop converges after target iterations. */
#include "config.h"
#include "bench.h"
#include "bench-kernels.h"

void
tg_bench_loop_init (TgBenchLoop *loop, gint32 iters, cudaStream_t stream)
{
  gint32 *words;

  TG_BENCH_CUDA (cudaMalloc ((void **)&words, 4 * sizeof *words));
  TG_BENCH_CUDA (cudaMalloc ((void **)&loop->status, sizeof *loop->status));
  loop->flag = words;
  loop->value = words + 1;
  loop->target = words + 2;
  loop->it = words + 3;
  loop->iters = iters;
  TG_BENCH_CUDA (cudaMemcpyAsync (loop->target, &iters, sizeof iters,
                                  cudaMemcpyHostToDevice, stream));
  TG_BENCH_CUDA (cudaStreamSynchronize (stream));
}

void
tg_bench_loop_clear (TgBenchLoop *loop)
{
  TG_BENCH_CUDA (cudaFree (loop->flag));
  TG_BENCH_CUDA (cudaFree (loop->status));
}

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

static gboolean
relax_next_body (const TgLaunch *launch, gpointer unused, GError **error)
{
  return tg_bench_launched (
      tgb_launch_relax_next (tg_launch_get_stream (launch), tg_launch_get_loop (launch),
                             tg_launch_get_binding (launch, "value"),
                             tg_launch_get_binding (launch, "flag"),
                             tg_launch_get_binding (launch, "target")),
      error);
}

/* The reset stage and the relaxation loop of @body over @loop's buffers.  A
 * cap above the target: the loop converges, it is never capped.  With
 * @set_by_body the flag is read at entry only; then the body decides. */
static void
add_relax_stages (TgProducer *p, const TgBenchLoop *loop, TgDeviceFunc body,
                  gboolean set_by_body)
{
  const TgLoopSpec spec = { .flag_binding = "flag",
                            .status_binding = "status",
                            .max_iters = loop->iters + 1,
                            .set_by_body = set_by_body };
  guint reset, relax;

  reset = tg_producer_add_device_stage (p, "reset", TG_STAGE_CAPTURE_SAFE, reset_stage,
                                        NULL, NULL, NULL);
  relax = tg_producer_add_loop_stage (p, "relax", TG_STAGE_CAPTURE_SAFE, &spec, body,
                                      NULL, NULL, NULL);
  tg_producer_declare_binding (p, reset, "value", sizeof (gint32), NULL);
  tg_producer_declare_binding (p, reset, "flag", sizeof (gint32), NULL);
  tg_producer_declare_binding (p, relax, "value", sizeof (gint32), NULL);
  tg_producer_declare_binding (p, relax, "target", sizeof (gint32), NULL);
  tg_bench_bind (p, "flag", loop->flag, sizeof (gint32));
  tg_bench_bind (p, "value", loop->value, sizeof (gint32));
  tg_bench_bind (p, "target", loop->target, sizeof (gint32));
  tg_bench_bind (p, "status", loop->status, sizeof *loop->status);
}

void
tg_bench_add_relax_stages (TgProducer *p, const TgBenchLoop *loop)
{
  add_relax_stages (p, loop, relax_body, FALSE);
}

void
tg_bench_add_relax_next_stages (TgProducer *p, const TgBenchLoop *loop)
{
  add_relax_stages (p, loop, relax_next_body, TRUE);
}

cudaGraph_t
tg_bench_hand_relax (cudaStream_t s, cudaStream_t side, const TgBenchLoop *loop)
{
  cudaGraphConditionalHandle h;
  cudaGraph_t body;

  TG_BENCH_CUDA (tgb_launch_reset (s, loop->value, loop->flag));
  h = tg_bench_hand_handle (s);
  TG_BENCH_CUDA (tgb_launch_while_entry (s, h, loop->flag, loop->it));
  tg_bench_hand_conditional (s, h, cudaGraphCondTypeWhile, 1, &body);
  tg_bench_hand_begin_body (side, body);
  TG_BENCH_CUDA (tgb_launch_relax (side, loop->value, loop->flag, loop->target));
  TG_BENCH_CUDA (
      tgb_launch_while_tail (side, h, loop->flag, loop->it, loop->iters + 1));
  tg_bench_hand_end_body (side);
  return body;
}

cudaGraph_t
tg_bench_minimal_relax (cudaStream_t s, cudaStream_t side, const TgBenchLoop *loop)
{
  cudaGraphConditionalHandle h = tg_bench_hand_handle (s);
  cudaGraph_t body;

  TG_BENCH_CUDA (tgb_launch_reset_set (s, h, loop->value, loop->flag, loop->it));
  tg_bench_hand_conditional (s, h, cudaGraphCondTypeWhile, 1, &body);
  tg_bench_hand_begin_body (side, body);
  TG_BENCH_CUDA (tgb_launch_relax_set (side, h, loop->value, loop->flag, loop->target,
                                       loop->it, loop->iters + 1));
  tg_bench_hand_end_body (side);
  return body;
}

cudaGraph_t
tg_bench_minimal_relax_child (cudaStream_t s, cudaStream_t side,
                              const TgBenchLoop *loop)
{
  cudaGraphConditionalHandle h = tg_bench_hand_handle (s);
  cudaGraph_t body, child;
  cudaGraphNode_t node;

  TG_BENCH_CUDA (tgb_launch_reset_set (s, h, loop->value, loop->flag, loop->it));
  tg_bench_hand_conditional (s, h, cudaGraphCondTypeWhile, 1, &body);
  TG_BENCH_CUDA (cudaGraphCreate (&child, 0));
  tg_bench_hand_begin_body (side, child);
  TG_BENCH_CUDA (tgb_launch_relax_set (side, h, loop->value, loop->flag, loop->target,
                                       loop->it, loop->iters + 1));
  tg_bench_hand_end_body (side);
  TG_BENCH_CUDA (cudaGraphAddChildGraphNode (&node, body, NULL, 0, child));
  TG_BENCH_CUDA (cudaGraphDestroy (child));
  return body;
}

cudaGraph_t
tg_bench_minimal_relax_next (cudaStream_t s, cudaStream_t side, const TgBenchLoop *loop)
{
  cudaGraphConditionalHandle h = tg_bench_hand_handle (s);
  /* The decision tg_launch_get_loop() gives a captured loop's body: the
   * node's handle, the loop's status, the cap. */
  const TgDeviceLoop next = { .next = { .how = TG_DEVICE_CONDITION_GRAPH, .handle = h },
                              .status = loop->status,
                              .max_iters = (uint32_t)loop->iters + 1 };
  cudaGraph_t body;

  /* The reset zeroes the status's count, as the minimal one's counter. */
  TG_BENCH_CUDA (
      tgb_launch_reset_set (s, h, loop->value, loop->flag, &loop->status->iterations));
  tg_bench_hand_conditional (s, h, cudaGraphCondTypeWhile, 1, &body);
  tg_bench_hand_begin_body (side, body);
  TG_BENCH_CUDA (
      tgb_launch_relax_next (side, next, loop->value, loop->flag, loop->target));
  tg_bench_hand_end_body (side);
  return body;
}

cudaGraph_t
tg_bench_warp_relax (cudaStream_t s, cudaStream_t side, const TgBenchLoop *loop)
{
  cudaGraphConditionalHandle h;
  cudaGraph_t body;

  TG_BENCH_CUDA (tgb_launch_reset (s, loop->value, loop->flag));
  h = tg_bench_warp_insert_while (s, loop->flag, &body);
  tg_bench_hand_begin_body (side, body);
  TG_BENCH_CUDA (tgb_launch_relax (side, loop->value, loop->flag, loop->target));
  tg_bench_warp_set_condition (side, loop->flag, h);
  tg_bench_hand_end_body (side);
  return body;
}

cudaGraph_t
tg_bench_loop_graph (cudaStream_t s, cudaStream_t side, const TgBenchLoop *loop,
                     TgBenchLoopFunc build, const char *top, const char *body,
                     const char *what)
{
  g_autofree char *body_what = g_strdup_printf ("%s's body", what);
  cudaGraph_t graph, body_graph;

  TG_BENCH_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeThreadLocal));
  body_graph = build (s, side, loop);
  graph = tg_bench_end_capture (s);
  tg_bench_assert_chain (graph, top, what);
  tg_bench_assert_chain (body_graph, body, body_what);
  return graph;
}

gboolean
tg_bench_loop_converged (const TgBenchLoop *loop, cudaStream_t stream)
{
  gint32 words[2] = { -1, -1 }; /* flag, value: side by side on the device */

  TG_BENCH_CUDA (cudaMemcpyAsync (words, loop->flag, sizeof words,
                                  cudaMemcpyDeviceToHost, stream));
  TG_BENCH_CUDA (cudaStreamSynchronize (stream));
  return words[0] == 0 && words[1] == loop->iters;
}
