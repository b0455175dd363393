/* SPDX-License-Identifier: Apache-2.0 */
/* warp.c: the Warp-shaped floors' building blocks: what NVIDIA Warp adds
 * to a capture for wp.capture_if and wp.capture_while, built by hand in raw
 * CUDA, one function per entry point of Warp's warp/native/warp.cu.  Read
 * from Warp's source, the same in 1.10, 1.12, 1.14, 1.16 and 1.19.0 (the
 * version bench/warp-bench.py runs beside these floors).  Every condition is
 * a one-thread kernel that reads the int32 flag and sets a handle, then the
 * node:
 *  - wp_cuda_graph_insert_if_else, one branch: a set kernel, one IF node;
 *    both branches (one capture_if with on_true and on_false): ONE set
 *    kernel that sets two handles (flag, !flag), then two IF nodes one after
 *    the other, never one IF with two bodies (Warp avoids those for a
 *    12.8/12.9 driver bug).  Issue 20 reads it as a set kernel per IF node:
 *    that is what two capture_if calls, one per branch, build;
 *  - wp_cuda_graph_insert_while: a set kernel, one WHILE node; the body ends
 *    with wp_cuda_graph_set_condition, the same set kernel again; no cap.
 * Warp captures the bodies on the capturing stream itself (pause, then
 * cudaStreamBeginCaptureToGraph); ours go on a side stream: the same graph.
 * What differs from Warp is only the host side (its kernels come from
 * NVRTC and go through cuLaunchKernel), which GPU time does not see. */
#include "config.h"
#include "bench.h"
#include "bench-kernels.h"

void
tg_bench_warp_insert_if_else (cudaStream_t s, const gint32 *flag, cudaGraph_t *if_body,
                              cudaGraph_t *else_body)
{
  cudaGraphConditionalHandle h, h_else;

  g_assert_true (if_body != NULL || else_body != NULL);
  h = tg_bench_hand_handle (s);
  if (if_body != NULL && else_body != NULL)
    {
      h_else = tg_bench_hand_handle (s);
      TG_BENCH_CUDA (tgb_launch_warp_set_if_else (s, h, h_else, flag));
      tg_bench_hand_conditional (s, h, cudaGraphCondTypeIf, 1, if_body);
      tg_bench_hand_conditional (s, h_else, cudaGraphCondTypeIf, 1, else_body);
      return;
    }
  TG_BENCH_CUDA (if_body != NULL ? tgb_launch_warp_set_if (s, h, flag)
                                 : tgb_launch_warp_set_else (s, h, flag));
  tg_bench_hand_conditional (s, h, cudaGraphCondTypeIf, 1,
                             if_body != NULL ? if_body : else_body);
}

cudaGraphConditionalHandle
tg_bench_warp_insert_while (cudaStream_t s, const gint32 *flag, cudaGraph_t *body)
{
  cudaGraphConditionalHandle h = tg_bench_hand_handle (s);

  TG_BENCH_CUDA (tgb_launch_warp_set_if (s, h, flag));
  tg_bench_hand_conditional (s, h, cudaGraphCondTypeWhile, 1, body);
  return h;
}

void
tg_bench_warp_set_condition (cudaStream_t s, const gint32 *flag,
                             cudaGraphConditionalHandle h)
{
  TG_BENCH_CUDA (tgb_launch_warp_set_if (s, h, flag));
}
