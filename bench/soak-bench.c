/* SPDX-License-Identifier: Apache-2.0 */
/* soak-bench.c: a simulator's step graph replayed 10^5 times while device
 * memory, host RSS and TrackGen's live objects are sampled (issue 12 item 5).
 *
 * The step graph: a kernel that sets a flag at every other replay (from a
 * counter on the device), then a producer recorded under that flag (a
 * call-level tg_conditional): a small kernel, a reset and a bounded loop (a
 * WHILE inside the IF).  Its floor, the same step graph built by hand with
 * raw CUDA, is soaked first in the same run, so growth of the driver's own
 * can be told from ours.  Each is sampled before its first replay and every
 * 10^4 replays (every tenth of a shorter run); the first interval is the
 * warm-up.  The run fails when, after the warm-up, our step graph's device
 * memory or a live-object count grew, or RSS grew by more than 1 MiB, or
 * when either graph did not do its work.  cudaMemGetInfo sees the whole
 * device: soak on a GPU no other process uses. */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "config.h"
#include "bench.h"
#include "bench-kernels.h"

#include <stdio.h>
#include <unistd.h>

#define LOOP_ITERS 4
#define SAMPLE_EVERY 10000
#define MIB (1024.0 * 1024.0)

/* What is sampled; the live objects are TgLiveObjects' fields. */
enum
{
  DEVICE_USED,
  RSS,
  PRODUCERS,
  GRAPHS,
  GRAPH_EXECS,
  STREAMS,
  CAPTURES,
  FAILED_RELEASES,
  N_FIGURES
};

static const struct
{
  const char *name;  /* in the JSON file */
  const char *title; /* in messages */
  gint64 slack;      /* growth allowed after the warm-up */
} figures[N_FIGURES] = {
  [DEVICE_USED] = { "device_used_bytes", "device memory in use", 0 },
  [RSS] = { "rss_bytes", "host RSS", 1 << 20 },
  [PRODUCERS] = { "producers", "live producers", 0 },
  [GRAPHS] = { "graphs", "live graphs", 0 },
  [GRAPH_EXECS] = { "graph_execs", "live graph execs", 0 },
  [STREAMS] = { "streams", "live streams", 0 },
  [CAPTURES] = { "captures", "live captures", 0 },
  [FAILED_RELEASES] = { "failed_releases", "failed releases", 0 },
};

typedef struct
{
  guint64 replays;
  gint64 value[N_FIGURES];
} Sample;

/* One soaked step graph. */
typedef struct
{
  const char *name;
  GArray *samples; /* of Sample: before, then one per interval */
  double gpu_ms;
} Soak;

typedef struct
{
  cudaStream_t stream, side, inner_side;
  guint32 *word, *counter;
  gint32 *go;
  TgBenchLoop loop;
  guint replays, interval;
} Ctx;

static gint64
rss_bytes (void)
{
  g_autofree char *statm = NULL;
  unsigned long size = 0, resident = 0;

  if (!g_file_get_contents ("/proc/self/statm", &statm, NULL, NULL)
      || sscanf (statm, "%lu %lu", &size, &resident) != 2)
    g_error ("soak: cannot read /proc/self/statm");
  return (gint64)resident * sysconf (_SC_PAGESIZE);
}

static void
take_sample (Soak *soak, guint64 replays)
{
  size_t free_bytes = 0, total_bytes = 0;
  TgLiveObjects live;
  Sample s = { replays, { 0 } };

  TG_BENCH_CUDA (cudaMemGetInfo (&free_bytes, &total_bytes));
  tg_get_live_objects (&live);
  s.value[DEVICE_USED] = (gint64)(total_bytes - free_bytes);
  s.value[RSS] = rss_bytes ();
  s.value[PRODUCERS] = live.producers;
  s.value[GRAPHS] = live.graphs;
  s.value[GRAPH_EXECS] = live.graph_execs;
  s.value[STREAMS] = live.streams;
  s.value[CAPTURES] = live.captures;
  s.value[FAILED_RELEASES] = live.failed_releases;
  g_array_append_val (soak->samples, s);
}

static const Sample *
sample_at (const Soak *soak, guint i)
{
  return &g_array_index (soak->samples, Sample, i);
}

/* The largest value of figure @f from sample @first on, and (optional) the
 * replay it was sampled at. */
static gint64
peak (const Soak *soak, guint f, guint first, guint64 *at)
{
  gint64 best = G_MININT64;

  for (guint i = first; i < soak->samples->len; i++)
    if (sample_at (soak, i)->value[f] > best)
      {
        best = sample_at (soak, i)->value[f];
        if (at != NULL)
          *at = sample_at (soak, i)->replays;
      }
  return best;
}

static char *
format_figure (guint f, gint64 value)
{
  return f == DEVICE_USED || f == RSS ? g_strdup_printf ("%.2f MiB", value / MIB)
                                      : g_strdup_printf ("%" G_GINT64_FORMAT, value);
}

/* Replays @exec c->replays times: a sample before, one every c->interval. */
static void
run_soak (Ctx *c, cudaGraphExec_t exec, Soak *soak)
{
  cudaEvent_t start, stop;

  TG_BENCH_CUDA (cudaEventCreate (&start));
  TG_BENCH_CUDA (cudaEventCreate (&stop));
  /* What check_work() reads, cleared so one graph's work cannot pass for
   * the other's. */
  TG_BENCH_CUDA (cudaMemsetAsync (c->word, 0, 2 * sizeof (guint32), c->stream));
  TG_BENCH_CUDA (cudaMemsetAsync (c->loop.value, 0, sizeof (gint32), c->stream));
  TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
  take_sample (soak, 0);
  for (guint done = 0; done < c->replays;)
    {
      guint n = MIN (c->interval, c->replays - done);
      float ms = 0;

      TG_BENCH_CUDA (cudaEventRecord (start, c->stream));
      for (guint i = 0; i < n; i++)
        TG_BENCH_CUDA (cudaGraphLaunch (exec, c->stream));
      TG_BENCH_CUDA (cudaEventRecord (stop, c->stream));
      TG_BENCH_CUDA (cudaEventSynchronize (stop));
      TG_BENCH_CUDA (cudaEventElapsedTime (&ms, start, stop));
      soak->gpu_ms += ms;
      done += n;
      take_sample (soak, done);
    }
  TG_BENCH_CUDA (cudaEventDestroy (start));
  TG_BENCH_CUDA (cudaEventDestroy (stop));
}

/* A soak of a graph that does nothing would look flat too.  The guarded
 * work ran at the odd replays: one small kernel each time, and the loop
 * ended with value at its target. */
static void
check_work (TgBench *bench, Ctx *c, const Soak *soak)
{
  guint32 words[2] = { 0, 0 }; /* word, counter */
  gint32 value = 0;
  guint32 runs = (c->replays + 1) / 2;

  TG_BENCH_CUDA (cudaMemcpyAsync (words, c->word, sizeof words, cudaMemcpyDeviceToHost,
                                  c->stream));
  TG_BENCH_CUDA (cudaMemcpyAsync (&value, c->loop.value, sizeof value,
                                  cudaMemcpyDeviceToHost, c->stream));
  TG_BENCH_CUDA (cudaStreamSynchronize (c->stream));
  if (words[1] != c->replays || words[0] != runs || value != LOOP_ITERS)
    tg_bench_fail (bench,
                   "soak: the %s step graph did not do its work: %u replays counted "
                   "(expected %u), its guarded kernel ran %u times (expected %u), "
                   "its loop ended at %d (expected %d)",
                   soak->name, words[1], c->replays, words[0], runs, value, LOOP_ITERS);
}

/* Fails the run for each figure of ours that grew after the warm-up (the
 * sample after the first interval) by more than it may. */
static void
check_flat (TgBench *bench, const Soak *ours, const Soak *floor)
{
  if (ours->samples->len < 3)
    {
      g_print ("  soak: the run ends with the warm-up: nothing to compare it with\n");
      return;
    }
  for (guint f = 0; f < N_FIGURES; f++)
    {
      const Sample *warm = sample_at (ours, 1);
      guint64 at = 0;
      gint64 top = peak (ours, f, 2, &at);
      gint64 floor_growth = peak (floor, f, 2, NULL) - sample_at (floor, 1)->value[f];
      g_autofree char *from = NULL, *to = NULL, *slack = NULL, *floor_grew = NULL;

      if (top <= warm->value[f] + figures[f].slack)
        continue;
      from = format_figure (f, warm->value[f]);
      to = format_figure (f, top);
      slack = format_figure (f, figures[f].slack);
      floor_grew = format_figure (f, floor_growth);
      tg_bench_fail (
          bench,
          "soak: %s grew after the warm-up, from %s at replay %" G_GUINT64_FORMAT
          " to %s at replay %" G_GUINT64_FORMAT
          " (%s allowed; the hand-built step graph's grew by %s)",
          figures[f].title, from, warm->replays, to, at, slack, floor_grew);
    }
}

static void
print_row (const char *label, const char *replays, const gint64 *ours,
           const gint64 *floor)
{
  g_print ("  %-8s %9s %10.2f %10.2f %9.2f %9.2f ", label, replays,
           ours[DEVICE_USED] / MIB, floor[DEVICE_USED] / MIB, ours[RSS] / MIB,
           floor[RSS] / MIB);
  for (guint f = PRODUCERS; f < N_FIGURES; f++)
    g_print (" %" G_GINT64_FORMAT, ours[f]);
  g_print ("\n");
}

/* Every sample, ours beside the floor's, then the peaks. */
static void
print_samples (const Soak *ours, const Soak *floor)
{
  guint last = ours->samples->len - 1;
  gint64 ours_peak[N_FIGURES], floor_peak[N_FIGURES];

  g_print ("  %-8s %9s %10s %10s %9s %9s  %s\n", "", "replays", "device MiB", "(floor)",
           "RSS MiB", "(floor)",
           "live: producers graphs execs streams captures failed-releases");
  for (guint i = 0; i <= last; i++)
    {
      const char *label = i == 0      ? "before"
                          : i == last ? "after"
                          : i == 1    ? "warm-up"
                                      : "";
      g_autofree char *replays
          = g_strdup_printf ("%" G_GUINT64_FORMAT, sample_at (ours, i)->replays);
      print_row (label, replays, sample_at (ours, i)->value,
                 sample_at (floor, i)->value);
    }
  for (guint f = 0; f < N_FIGURES; f++)
    {
      ours_peak[f] = peak (ours, f, 0, NULL);
      floor_peak[f] = peak (floor, f, 0, NULL);
    }
  print_row ("peak", "", ours_peak, floor_peak);
}

static void
append_figures (GString *s, const char *key, const gint64 *value)
{
  g_string_append_printf (s, "\"%s\": {", key);
  for (guint f = 0; f < N_FIGURES; f++)
    g_string_append_printf (s, "%s\"%s\": %" G_GINT64_FORMAT, f > 0 ? ", " : "",
                            figures[f].name, value[f]);
  g_string_append (s, "}");
}

/* "name": {before, warm-up, after and peak figures, GPU time, samples}. */
static void
append_soak_json (GString *s, const Soak *soak)
{
  guint last = soak->samples->len - 1;
  gint64 top[N_FIGURES];

  for (guint f = 0; f < N_FIGURES; f++)
    top[f] = peak (soak, f, 0, NULL);
  g_string_append_printf (s, "\"%s\": {", soak->name);
  append_figures (s, "before", sample_at (soak, 0)->value);
  g_string_append (s, ", ");
  append_figures (s, "warmup", sample_at (soak, 1)->value);
  g_string_append (s, ", ");
  append_figures (s, "after", sample_at (soak, last)->value);
  g_string_append (s, ", ");
  append_figures (s, "peak", top);
  g_string_append_printf (s, ", \"gpu_us_per_replay\": %.6g, \"samples\": [",
                          1000.0 * soak->gpu_ms / sample_at (soak, last)->replays);
  for (guint i = 0; i <= last; i++)
    {
      g_string_append_printf (s, "%s[%" G_GUINT64_FORMAT, i > 0 ? ", " : "",
                              sample_at (soak, i)->replays);
      for (guint f = 0; f < N_FIGURES; f++)
        g_string_append_printf (s, ", %" G_GINT64_FORMAT,
                                sample_at (soak, i)->value[f]);
      g_string_append (s, "]");
    }
  g_string_append (s, "]}");
}

static char *
soak_json (const Ctx *c, const Soak *ours, const Soak *floor)
{
  GString *s = g_string_new (NULL);

  g_string_append_printf (s,
                          "{\"replays\": %u, \"sample_every\": %u, \"sample_fields\": "
                          "[\"replays\"",
                          c->replays, c->interval);
  for (guint f = 0; f < N_FIGURES; f++)
    g_string_append_printf (s, ", \"%s\"", figures[f].name);
  g_string_append (s, "], ");
  append_soak_json (s, ours);
  g_string_append (s, ", ");
  append_soak_json (s, floor);
  g_string_append (s, "}");
  return g_string_free (s, FALSE);
}

/* Our step graph: the decision kernel, then the producer recorded under the
 * flag it sets. */
static cudaGraphExec_t
our_step_graph (Ctx *c, TgProducer *p)
{
  g_autoptr (GError) error = NULL;

  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  TG_BENCH_CUDA (tgb_launch_alternate (c->stream, c->counter, c->go));
  if (!tg_producer_run (p, c->stream, TG_POLICY_RECORD, tg_conditional (c->go), &error))
    g_error ("soak: %s", error->message);
  return tg_bench_instantiate (c->stream);
}

/* The floor: the same nodes by hand, an IF node whose body holds the small
 * kernel, the reset and the WHILE node. */
static cudaGraphExec_t
hand_step_graph (Ctx *c)
{
  cudaGraphConditionalHandle h;
  cudaGraph_t body;

  TG_BENCH_CUDA (cudaStreamBeginCapture (c->stream, cudaStreamCaptureModeThreadLocal));
  TG_BENCH_CUDA (tgb_launch_alternate (c->stream, c->counter, c->go));
  h = tg_bench_hand_handle (c->stream);
  TG_BENCH_CUDA (tgb_launch_if_set (c->stream, h, c->go));
  tg_bench_hand_conditional (c->stream, h, cudaGraphCondTypeIf, 1, &body);
  tg_bench_hand_begin_body (c->side, body);
  TG_BENCH_CUDA (tgb_launch_tiny (c->side, c->word));
  tg_bench_hand_relax (c->side, c->inner_side, &c->loop);
  tg_bench_hand_end_body (c->side);
  return tg_bench_instantiate (c->stream);
}

void
tg_bench_soak (TgBench *bench)
{
  Soak ours = { "ours", g_array_new (FALSE, FALSE, sizeof (Sample)), 0 };
  Soak floor = { "floor", g_array_new (FALSE, FALSE, sizeof (Sample)), 0 };
  g_autofree char *what = NULL, *json = NULL;
  cudaGraphExec_t our_exec, hand_exec;
  TgProducer *p;
  Ctx c = { 0 };

  c.replays = tg_bench_soak_replays (bench);
  c.interval = MIN (SAMPLE_EVERY, MAX (c.replays / 10, 1));
  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&c.stream, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&c.side, cudaStreamNonBlocking));
  TG_BENCH_CUDA (cudaStreamCreateWithFlags (&c.inner_side, cudaStreamNonBlocking));
  /* word and counter side by side: one memset clears both. */
  TG_BENCH_CUDA (cudaMalloc ((void **)&c.word, 2 * sizeof (guint32)));
  c.counter = c.word + 1;
  TG_BENCH_CUDA (cudaMalloc ((void **)&c.go, sizeof (gint32)));
  tg_bench_loop_init (&c.loop, LOOP_ITERS, c.stream);
  p = tg_bench_tiny_producer ("soak", c.word, 1);
  tg_bench_add_relax_stages (p, &c.loop);
  our_exec = our_step_graph (&c, p);
  hand_exec = hand_step_graph (&c);

  g_print ("  %u replays of a step graph, sampled every %u (the first %u: warm-up); "
           "the floor, the same graph built by hand, soaks first\n",
           c.replays, c.interval, c.interval);
  run_soak (&c, hand_exec, &floor);
  check_work (bench, &c, &floor);
  run_soak (&c, our_exec, &ours);
  check_work (bench, &c, &ours);
  print_samples (&ours, &floor);
  check_flat (bench, &ours, &floor);

  what = g_strdup_printf ("soak: GPU time per step replay (%u replays)", c.replays);
  tg_bench_add (bench, "soak", what, "us", 1000.0 * ours.gpu_ms / c.replays,
                1000.0 * floor.gpu_ms / c.replays, "hand-built step graph",
                TG_BENCH_INFO, 0);
  json = soak_json (&c, &ours, &floor);
  tg_bench_add_json (bench, "soak", json);

  TG_BENCH_CUDA (cudaGraphExecDestroy (our_exec));
  TG_BENCH_CUDA (cudaGraphExecDestroy (hand_exec));
  tg_producer_unref (p);
  tg_bench_loop_clear (&c.loop);
  TG_BENCH_CUDA (cudaFree (c.go));
  TG_BENCH_CUDA (cudaFree (c.word));
  TG_BENCH_CUDA (cudaStreamDestroy (c.inner_side));
  TG_BENCH_CUDA (cudaStreamDestroy (c.side));
  TG_BENCH_CUDA (cudaStreamDestroy (c.stream));
  g_array_unref (ours.samples);
  g_array_unref (floor.samples);
}
