/* SPDX-License-Identifier: Apache-2.0 */
/* bench.c: runs every benchmark section and prints one table (what, ours,
 * floor, ratio, target, what the floor is) plus a JSON file. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "config.h"
#include "bench.h"
#include "bench-kernels.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct
{
  char *group, *what, *unit, *floor_what;
  double ours, floor, target;
  TgBenchSense sense;
} Row;

struct _TgBench
{
  GArray *rows;
  gboolean quick;
  guint soak_replays;
  GPtrArray *json_members; /* "\"key\": value", in the order added */
  GPtrArray *failures;
};

static void
row_clear (gpointer data)
{
  Row *r = data;

  g_free (r->group);
  g_free (r->what);
  g_free (r->unit);
  g_free (r->floor_what);
}

void
tg_bench_add (TgBench *bench, const char *group, const char *what, const char *unit,
              double ours, double floor, const char *floor_what, TgBenchSense sense,
              double target)
{
  Row r = { g_strdup (group),
            g_strdup (what),
            g_strdup (unit),
            g_strdup (floor_what),
            ours,
            floor,
            target,
            sense };

  g_array_append_val (bench->rows, r);
  g_print ("  %-58s %12.3f %-6s floor %12.3f (%s)\n", what, ours, unit, floor,
           floor_what);
}

gboolean
tg_bench_quick (const TgBench *bench)
{
  return bench->quick;
}

guint
tg_bench_soak_replays (const TgBench *bench)
{
  return bench->soak_replays;
}

void
tg_bench_add_json (TgBench *bench, const char *key, const char *json)
{
  g_ptr_array_add (bench->json_members, g_strdup_printf ("\"%s\": %s", key, json));
}

void
tg_bench_fail (TgBench *bench, const char *format, ...)
{
  va_list args;
  char *message;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_printerr ("tg-bench: FAILED: %s\n", message);
  g_ptr_array_add (bench->failures, message);
}

/* @text as a JSON string literal. */
static void
append_json_string (GString *s, const char *text)
{
  g_string_append_c (s, '"');
  for (const char *c = text; *c != '\0'; c++)
    if (*c == '"' || *c == '\\')
      g_string_append_printf (s, "\\%c", *c);
    else if ((guchar)*c < 0x20)
      g_string_append_printf (s, "\\u%04x", (guchar)*c);
    else
      g_string_append_c (s, *c);
  g_string_append_c (s, '"');
}

static int
compare_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return (x > y) - (x < y);
}

double
tg_bench_median (double *samples, guint n)
{
  qsort (samples, n, sizeof *samples, compare_double);
  return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

double
tg_bench_graph_us (cudaGraphExec_t exec, cudaStream_t stream, guint batch, guint rounds)
{
  g_autofree double *samples = g_new (double, rounds);
  cudaEvent_t start, stop;

  TG_BENCH_CUDA (cudaEventCreate (&start));
  TG_BENCH_CUDA (cudaEventCreate (&stop));
  TG_BENCH_CUDA (cudaGraphLaunch (exec, stream)); /* warm-up */
  for (guint r = 0; r < rounds; r++)
    {
      float ms = 0;
      TG_BENCH_CUDA (cudaEventRecord (start, stream));
      for (guint i = 0; i < batch; i++)
        TG_BENCH_CUDA (cudaGraphLaunch (exec, stream));
      TG_BENCH_CUDA (cudaEventRecord (stop, stream));
      TG_BENCH_CUDA (cudaEventSynchronize (stop));
      TG_BENCH_CUDA (cudaEventElapsedTime (&ms, start, stop));
      samples[r] = 1000.0 * ms / batch;
    }
  TG_BENCH_CUDA (cudaEventDestroy (start));
  TG_BENCH_CUDA (cudaEventDestroy (stop));
  return tg_bench_median (samples, rounds);
}

static double
now_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

double
tg_bench_wall_us (TgBenchFunc fn, gpointer data, cudaStream_t stream, guint batch,
                  guint rounds, gboolean host_only)
{
  g_autofree double *samples = g_new (double, rounds);

  fn (data); /* warm-up */
  TG_BENCH_CUDA (cudaStreamSynchronize (stream));
  for (guint r = 0; r < rounds; r++)
    {
      double t0 = now_us (), t1;
      for (guint i = 0; i < batch; i++)
        fn (data);
      t1 = now_us ();
      TG_BENCH_CUDA (cudaStreamSynchronize (stream));
      if (!host_only)
        t1 = now_us ();
      samples[r] = (t1 - t0) / batch;
    }
  return tg_bench_median (samples, rounds);
}

void
tg_bench_wall_us_alternated (const TgBenchFunc *fns, guint n_fns, gpointer data,
                             cudaStream_t stream, guint batch, guint rounds,
                             gboolean host_only, double *medians)
{
  gsize n_samples = (gsize)n_fns * rounds;
  g_autofree double *samples = g_new (double, n_samples);

  for (guint r = 0; r < rounds; r++)
    for (guint f = 0; f < n_fns; f++)
      samples[f * rounds + r]
          = tg_bench_wall_us (fns[f], data, stream, batch, 1, host_only);
  for (guint f = 0; f < n_fns; f++)
    medians[f] = tg_bench_median (samples + f * rounds, rounds);
}

gboolean
tg_bench_launched (cudaError_t status, GError **error)
{
  if (status != cudaSuccess)
    g_set_error (error, TG_CUDA_ERROR, status, "launch: %s", cudaGetErrorName (status));
  return status == cudaSuccess;
}

gboolean
tg_bench_tiny_kernels (const TgLaunch *launch, guint n, GError **error)
{
  guint32 *word = tg_launch_get_binding (launch, "word");

  for (guint i = 0; i < n; i++)
    if (!tg_bench_launched (tgb_launch_tiny (tg_launch_get_stream (launch), word),
                            error))
      return FALSE;
  return TRUE;
}

guint32
tg_bench_read_word (const guint32 *word, cudaStream_t stream)
{
  guint32 host = 0;

  TG_BENCH_CUDA (
      cudaMemcpyAsync (&host, word, sizeof host, cudaMemcpyDeviceToHost, stream));
  TG_BENCH_CUDA (cudaStreamSynchronize (stream));
  return host;
}

static gboolean
tiny_stage (const TgLaunch *launch, gpointer unused, GError **error)
{
  return tg_bench_tiny_kernels (launch, 1, error);
}

void
tg_bench_bind (TgProducer *p, const char *name, gpointer device_ptr, gsize size)
{
  g_autoptr (GError) error = NULL;

  if (!tg_producer_bind (p, name, device_ptr, size, &error))
    g_error ("bench: %s", error->message);
}

/* Adds the DEVICE stage @fn, declaring "word", to @p. */
static void
add_word_stage (TgProducer *p, const char *name, TgDeviceFunc fn, gpointer data)
{
  guint index
      = tg_producer_add_device_stage (p, name, TG_STAGE_CAPTURE_SAFE, fn, data, NULL,
                                      NULL);

  tg_producer_declare_binding (p, index, "word", sizeof (guint32), NULL);
}

TgProducer *
tg_bench_tiny_producer (const char *name, guint32 *word, guint n_stages)
{
  TgProducer *p = tg_producer_new (name, 0);

  for (guint i = 0; i < n_stages; i++)
    {
      g_autofree char *stage = g_strdup_printf ("tiny-%u", i);
      add_word_stage (p, stage, tiny_stage, NULL);
    }
  tg_bench_bind (p, "word", word, sizeof *word);
  return p;
}

TgProducer *
tg_bench_one_stage_producer (const char *name, TgDeviceFunc fn, gpointer data,
                             guint32 *word)
{
  TgProducer *p = tg_producer_new (name, 0);

  add_word_stage (p, name, fn, data);
  tg_bench_bind (p, "word", word, sizeof *word);
  return p;
}

cudaGraph_t
tg_bench_end_capture (cudaStream_t stream)
{
  cudaGraph_t graph = NULL;

  TG_BENCH_CUDA (cudaStreamEndCapture (stream, &graph));
  return graph;
}

cudaGraphExec_t
tg_bench_instantiate_graph_flags (cudaGraph_t graph, unsigned long long flags)
{
  cudaGraphExec_t exec = NULL;

  TG_BENCH_CUDA (cudaGraphInstantiateWithFlags (&exec, graph, flags));
  TG_BENCH_CUDA (cudaGraphDestroy (graph));
  return exec;
}

cudaGraphExec_t
tg_bench_instantiate_graph (cudaGraph_t graph)
{
  return tg_bench_instantiate_graph_flags (graph, 0);
}

cudaGraphExec_t
tg_bench_instantiate (cudaStream_t stream)
{
  return tg_bench_instantiate_graph (tg_bench_end_capture (stream));
}

cudaGraph_t
tg_bench_record_graph (cudaStream_t stream, TgProducer *p, TgCondition condition,
                       const char *chain_is)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *chain = NULL;
  cudaGraph_t graph;

  TG_BENCH_CUDA (cudaStreamBeginCapture (stream, cudaStreamCaptureModeThreadLocal));
  if (!tg_producer_run (p, stream, TG_POLICY_RECORD, condition, &error))
    g_error ("bench: %s", error->message);
  graph = tg_bench_end_capture (stream);
  chain = tg_bench_graph_chain (graph);
  g_print ("  # %s records, at the top of the caller's graph: %s\n",
           tg_producer_get_name (p), chain);
  if (chain_is != NULL)
    tg_bench_assert_chain (graph, chain_is, tg_producer_get_name (p));
  return graph;
}

cudaGraphExec_t
tg_bench_record (cudaStream_t stream, TgProducer *p, TgCondition condition,
                 const char *chain_is)
{
  return tg_bench_instantiate_graph (
      tg_bench_record_graph (stream, p, condition, chain_is));
}

static const char *
row_met (const Row *r)
{
  double ratio = r->ours / r->floor;

  switch (r->sense)
    {
    case TG_BENCH_LOWER_IS_BETTER:
      return ratio <= r->target ? "PASS" : "MISS";
    case TG_BENCH_HIGHER_IS_BETTER:
      return ratio >= r->target ? "PASS" : "MISS";
    default:
      return "-";
    }
}

static const char *
row_bound (const Row *r)
{
  return r->sense == TG_BENCH_LOWER_IS_BETTER    ? "<="
         : r->sense == TG_BENCH_HIGHER_IS_BETTER ? ">="
                                                 : "";
}

static void
print_table (const TgBench *bench)
{
  const char *group = NULL;

  g_print ("\n%-58s %12s %12s %-6s %7s %8s %-4s %s\n", "what", "ours", "floor", "unit",
           "ratio", "target", "met", "the floor");
  for (guint i = 0; i < bench->rows->len; i++)
    {
      const Row *r = &g_array_index (bench->rows, Row, i);
      if (group == NULL || !g_str_equal (group, r->group))
        g_print ("[%s]\n", group = r->group);
      g_print ("%-58s %12.3f %12.3f %-6s %7.3f %2s%6.2f %-4s %s\n", r->what, r->ours,
               r->floor, r->unit, r->ours / r->floor, row_bound (r),
               r->sense == TG_BENCH_INFO ? 0.0 : r->target, row_met (r), r->floor_what);
    }
}

static gboolean
write_json (const TgBench *bench, const char *path, GError **error)
{
  g_autoptr (GString) s = g_string_new ("{\n  \"rows\": [\n");

  for (guint i = 0; i < bench->rows->len; i++)
    {
      const Row *r = &g_array_index (bench->rows, Row, i);
      g_string_append_printf (
          s,
          "    {\"group\": \"%s\", \"what\": \"%s\", \"unit\": \"%s\", \"ours\": %.6g, "
          "\"floor\": %.6g, \"floor_what\": \"%s\", \"ratio\": "
          "%.6g, \"target\": \"%s%.3g\", \"met\": \"%s\"}%s\n",
          r->group, r->what, r->unit, r->ours, r->floor, r->floor_what,
          r->ours / r->floor, row_bound (r),
          r->sense == TG_BENCH_INFO ? 0.0 : r->target, row_met (r),
          i + 1 < bench->rows->len ? "," : "");
    }
  g_string_append (s, "  ],\n");
  for (guint i = 0; i < bench->json_members->len; i++)
    g_string_append_printf (s, "  %s,\n", (const char *)bench->json_members->pdata[i]);
  g_string_append (s, "  \"failures\": [");
  for (guint i = 0; i < bench->failures->len; i++)
    {
      g_string_append (s, i > 0 ? ", " : "");
      append_json_string (s, bench->failures->pdata[i]);
    }
  g_string_append (s, "]\n}\n");
  return g_file_set_contents (path, s->str, s->len, error);
}

static const struct
{
  const char *name;
  void (*run) (TgBench *);
} sections[] = { { "exec", tg_bench_exec },   { "conditions", tg_bench_conditions },
                 { "taken", tg_bench_taken }, { "latency", tg_bench_latency },
                 { "seeds", tg_bench_seeds }, { "soak", tg_bench_soak } };

static gboolean
section_known (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (sections); i++)
    if (g_str_equal (name, sections[i].name))
      return TRUE;
  return FALSE;
}

int
main (int argc, char **argv)
{
  g_autofree char *json = g_strdup ("bench-results.json");
  g_autofree char *only = NULL;
  gboolean quick = FALSE;
  gint soak_replays = -1; /* not given */
  gint seeds_ranges = 0;  /* not given */
  GOptionEntry entries[] = {
    { "json", 'j', 0, G_OPTION_ARG_FILENAME, &json, "Write the table as JSON to FILE",
      "FILE" },
    { "only", 'o', 0, G_OPTION_ARG_STRING, &only,
      "Run one section: exec, conditions, taken, latency, seeds or soak", "SECTION" },
    { "quick", 'q', 0, G_OPTION_ARG_NONE, &quick,
      "Small sizes and few repeats (a smoke run)", NULL },
    { "soak-replays", 0, 0, G_OPTION_ARG_INT, &soak_replays,
      "Replays of the soak's step graph (default 100000; 10000 with --quick)", "N" },
    { "seeds-ranges", 0, 0, G_OPTION_ARG_INT, &seeds_ranges,
      "Only the advance_fill kernels and their copy, N launches each between "
      "cudaProfilerStart and Stop, for a profiler (bench/advance-fill-ncu.sh)",
      "N" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- libtrackgen benchmarks");
  g_autoptr (GError) error = NULL;
  TgBench bench = { g_array_new (FALSE, FALSE, sizeof (Row)), FALSE, 0,
                    g_ptr_array_new_with_free_func (g_free),
                    g_ptr_array_new_with_free_func (g_free) };
  int status;

  g_array_set_clear_func (bench.rows, row_clear);
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      g_printerr ("tg-bench: %s\n", error->message);
      return 2;
    }
  if (only != NULL && !section_known (only))
    {
      g_printerr ("tg-bench: no section '%s': exec, conditions, taken, latency, seeds "
                  "or soak\n",
                  only);
      return 2;
    }
  if (soak_replays == 0 || soak_replays < -1)
    {
      g_printerr ("tg-bench: --soak-replays takes a positive count\n");
      return 2;
    }
  if (seeds_ranges < 0)
    {
      g_printerr ("tg-bench: --seeds-ranges takes a positive count\n");
      return 2;
    }
  bench.quick = quick;
  bench.soak_replays = soak_replays > 0 ? (guint)soak_replays : quick ? 10000 : 100000;
  if (!tg_device_check (0, &error))
    {
      g_printerr ("tg-bench: needs a CUDA GPU: %s\n", error->message);
      return 77;
    }
  if (seeds_ranges > 0)
    {
      tg_bench_seeds_ranges ((guint)seeds_ranges);
      return 0;
    }
  for (guint i = 0; i < G_N_ELEMENTS (sections); i++)
    if (only == NULL || g_str_equal (only, sections[i].name))
      {
        g_print ("[%s]\n", sections[i].name);
        sections[i].run (&bench);
      }
  print_table (&bench);
  status = bench.failures->len > 0 ? 1 : 0;
  if (!write_json (&bench, json, &error))
    {
      g_printerr ("tg-bench: %s\n", error->message);
      status = 1;
    }
  else
    g_print ("\nwrote %s\n", json);
  for (guint i = 0; i < bench.failures->len; i++)
    g_printerr ("tg-bench: FAILED: %s\n", (const char *)bench.failures->pdata[i]);
  g_ptr_array_unref (bench.failures);
  g_ptr_array_unref (bench.json_members);
  g_array_unref (bench.rows);
  return status;
}
