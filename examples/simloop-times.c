/* SPDX-License-Identifier: Apache-2.0 */
/* simloop-times.c: what simloop prints of its timed steps (their median,
 * mean and p99 against the floor's) and, with overlap, of the refills beside
 * them (their GPU time, the ends that found no spare, their share of the
 * GPU and the loop's speed against it, the steps they ran beside against
 * the others). */
#include <stdio.h>
#include <stdlib.h>

#include "simloop-times.h"

static int
compare_floats (gconstpointer a, gconstpointer b)
{
  float x = *(const float *)a, y = *(const float *)b;

  return (x > y) - (x < y);
}

/* The @q quantile (0 to 1) of @n @times; 0 when there are none. */
static double
quantile (const float *times, guint n, double q)
{
  g_autofree float *sorted = g_memdup2 (times, n * sizeof (float));

  if (n == 0)
    return 0;
  qsort (sorted, n, sizeof (float), compare_floats);
  return sorted[MIN ((guint)(q * n), n - 1)];
}

/* The @q quantile (0 to 1) of the shard's step times of its last timed
 * replay; 0 when there are none. */
double
sim_step_quantile (SimShard *shard, double q)
{
  guint n = 0;
  const float *times = sim_shard_get_step_times (shard, &n);

  return quantile (times, n, q);
}

/* The mean of the shard's step times of its last timed replay. */
static double
step_mean (SimShard *shard)
{
  guint n = 0;
  const float *times = sim_shard_get_step_times (shard, &n);
  double sum = 0;

  for (guint i = 0; i < n; i++)
    sum += times[i];
  return n > 0 ? sum / n : 0;
}

/* The timed loop's step times against its floor's median: a stall shows
 * in the p99 (a refill in the step graph stalls its step; one beside should
 * not); the median is what every step pays, the mean beyond it what rarer
 * steps (refills) add.  The floor's own p99 beside: the jitter of a step
 * with no regeneration at all, under which no loop's p99 can go. */
void
sim_print_step_times (SimShard *shard, double floor_median, double floor_p99)
{
  const double median = sim_step_quantile (shard, 0.5),
               p99 = sim_step_quantile (shard, 0.99);

  printf ("  step times: floor median %.2f us, p99 %.2f us (%.2fx); loop median %.2f "
          "us (+%.2f), mean %.2f us, p99 %.2f us = %.2fx the floor's median (target "
          "<= 1.2x)\n",
          floor_median, floor_p99, floor_median > 0 ? floor_p99 / floor_median : 0.0,
          median, median - floor_median, step_mean (shard), p99,
          floor_median > 0 ? p99 / floor_median : 0.0);
}

/* The share of the GPU's SM time the refills' blocks (one an SM) held
 * between @from and @to, in @seconds, counted as if each held its SM whole. */
static double
sm_share (const TrackRefillerStats *from, const TrackRefillerStats *to, double seconds)
{
  return MIN ((to->totals.busy_ns - from->totals.busy_ns) / 1e9
                  / (MAX (to->blocks, 1u) * seconds),
              1.0);
}

/* The loop's speed against its floor's times (1 - @share); 0 with none left. */
static double
against_share (double floor_s, double graph_s, double share)
{
  return share < 1 ? floor_s / graph_s / (1 - share) : 0.0;
}

/* With overlap: the refills beside the timed loop (@before its run, @at_end
 * right after its last step, @after the last refill), against the issue's
 * other promises: only its share (the loop's speed against the floor's
 * times 1 - the refills' share of the GPU), and the ends that found no
 * spare ready.  A refill still running when the loop ends held the GPU
 * partly in it: its blocks' time counts once it is done, so the share is
 * between the one @at_end (it left out) and the one @after (it counted
 * whole), and so is the loop's figure against it. */
void
sim_print_overlap (const TrackRefillerStats *before, const TrackRefillerStats *at_end,
                   const TrackRefillerStats *after, double floor_median, double floor_s,
                   double graph_s)
{
  guint refills = after->started - before->started;
  guint freed = after->totals.freed - before->totals.freed;
  guint misses = after->totals.misses - before->totals.misses;
  double ms = after->gpu_ms - before->gpu_ms;
  double low = sm_share (before, at_end, graph_s),
         high = sm_share (before, after, graph_s);

  printf ("  overlapped refill: %u refills, %u spares made, %.2f ms of GPU each "
          "(%.0f steps of the floor)\n",
          refills, after->totals.made - before->totals.made,
          refills > 0 ? ms / refills : 0.0,
          refills > 0 && floor_median > 0 ? ms * 1e3 / refills / floor_median : 0.0);
  printf ("  ends: %u, of which %u found no spare ready and made their track at once "
          "(envs touched); %u steps left an env with no spare (each makes a refill "
          "due)\n",
          freed, misses, after->totals.urgent - before->totals.urgent);
  printf ("  a refill ran %.0f%% of the loop's time; its blocks (one an SM) held "
          "%.1f%% to %.1f%% of the GPU's SM time: its share (the refill running at "
          "the loop's end left out, counted whole)\n",
          MIN (ms / 1e3 / graph_s, 1.0) * 100, low * 100, high * 100);
  printf ("  only its share: the loop's speed is %.3fx to %.3fx its floor's times "
          "(1 - share), 1 - share being %.3f to %.3f (target >= 0.9x)\n",
          against_share (floor_s, graph_s, low), against_share (floor_s, graph_s, high),
          1 - low, 1 - high);
}

/* The loop's steps apart: those a refill ran beside on the GPU and those it
 * did not, both with every switch and the same kernels.  A refill that
 * stalled a step would show in the p99 of the first against the second. */
gboolean
sim_print_beside_refills (SimShard *shard, double floor_median, GError **error)
{
  guint n = 0, n_beside = 0, n_alone = 0;
  const float *times = sim_shard_get_step_times (shard, &n);
  g_autofree gboolean *beside = g_new (gboolean, MAX (n, 1u));
  g_autofree float *with = g_new (float, MAX (n, 1u));
  g_autofree float *without = g_new (float, MAX (n, 1u));

  if (!sim_shard_steps_beside_refills (shard, beside, error))
    return FALSE;
  for (guint t = 0; t < n; t++)
    if (beside[t])
      with[n_beside++] = times[t];
    else
      without[n_alone++] = times[t];
  printf ("  steps a refill ran beside: %u, median %.2f us, p99 %.2f us (%.2fx the "
          "floor's median); steps with none: %u, median %.2f us, p99 %.2f us (%.2fx)\n",
          n_beside, quantile (with, n_beside, 0.5), quantile (with, n_beside, 0.99),
          floor_median > 0 ? quantile (with, n_beside, 0.99) / floor_median : 0.0,
          n_alone, quantile (without, n_alone, 0.5), quantile (without, n_alone, 0.99),
          floor_median > 0 ? quantile (without, n_alone, 0.99) / floor_median : 0.0);
  return TRUE;
}
