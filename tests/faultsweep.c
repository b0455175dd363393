/* SPDX-License-Identifier: Apache-2.0 */
/* faultsweep.c: the fault-injection sweep (make faultsweep, in a build
 * configured with --enable-fault-injection).  Each scenario runs once to
 * warm up, once to count the CUDA calls TrackGen makes through its one
 * check, then once per call with that call failing.  After each injection:
 * (1) the scenario failed with a GError, or it succeeded and the call was a
 * release whose failure was reported (counted and logged); (2) nothing
 * leaked but the objects whose release failed, and no capture of TrackGen's
 * is open; (3) the scenario's stream is not capturing and no CUDA error is
 * left pending; (4) the scenario then runs again, unarmed, and succeeds.
 * One TAP line per scenario; one comment line per injection. */
#include "config.h"
#include "faultsweep.h"
#include "../lib/exec/error-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !TG_FAULT_INJECTION
#error "tests/faultsweep needs a build configured with --enable-fault-injection"
#endif

/* clang-format off */
G_DEFINE_QUARK (fs-error-quark, fs_error)
/* clang-format on */

typedef struct
{
  const char *name;
  FsScenario run;
} Scenario;

static const Scenario scenarios[] = {
  { "exec", fs_scenario_exec },
  { "condition", fs_scenario_condition },
  { "seeds", fs_scenario_seeds },
  { "interop", fs_scenario_interop },
};

static char **opt_scenarios;
static gint opt_error = cudaErrorMemoryAllocation;
static gint opt_sample = 1;

static const GOptionEntry entries[] = {
  { "scenario", 0, 0, G_OPTION_ARG_STRING_ARRAY, &opt_scenarios,
    "Sweep only scenario NAME: exec, condition, seeds or interop (repeatable)",
    "NAME" },
  { "error", 0, 0, G_OPTION_ARG_INT, &opt_error,
    "The cudaError_t to inject (default 2, cudaErrorMemoryAllocation)", "N" },
  { "sample", 0, 0, G_OPTION_ARG_INT, &opt_sample,
    "Inject into calls 1, K + 1, 2K + 1, ... only, to fit a time budget", "K" },
  { NULL },
};

/* Release failures are logged as warnings: counted here, never fatal. */
static gint n_warnings;

static void
count_warning (const char *domain, GLogLevelFlags level, const char *message,
               gpointer data)
{
  g_atomic_int_inc (&n_warnings);
  g_print ("# %s warning: %s\n", domain, message);
}

/* ------------------------------------------------------------------------ */
/* Helpers of the scenarios                                                  */

void
fs_step (FsCtx *ctx, const char *step)
{
  /* The last step begun before call @at is the one that made it. */
  if (ctx->at != 0 && tg__fault_count () < ctx->at)
    ctx->where = step;
}

gboolean
fs_cuda_ok (cudaError_t status, const char *call, GError **error)
{
  if (status == cudaSuccess)
    return TRUE;
  if (cudaPeekAtLastError () == status)
    (void)cudaGetLastError ();
  if (error != NULL && *error == NULL)
    g_set_error (error, FS_ERROR, status, "the scenario's own %s failed: %s", call,
                 cudaGetErrorName (status));
  return FALSE;
}

gboolean
fs_count_runs (const TgLaunch *launch, gpointer data, GError **error)
{
  return FS_CUDA (tgt_launch_count (tg_launch_get_stream (launch),
                                    tg_launch_get_binding (launch, "runs")),
                  error);
}

gboolean
fs_check_equal (const char *what, gconstpointer got, gconstpointer expected, gsize size,
                GError **error)
{
  const guint8 *g = got, *e = expected;

  for (gsize i = 0; i < size; i++)
    if (g[i] != e[i])
      {
        g_set_error (error, FS_ERROR, 0,
                     "wrong %s: byte %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT
                     " is 0x%02x, expected 0x%02x",
                     what, i, size, g[i], e[i]);
        return FALSE;
      }
  return TRUE;
}

gboolean
fs_capture_begin (FsCtx *ctx, GError **error)
{
  return FS_CUDA (cudaStreamBeginCapture (ctx->stream, cudaStreamCaptureModeGlobal),
                  error);
}

gboolean
fs_capture_end (FsCtx *ctx, gboolean recorded, GError **error)
{
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  /* After a failed call the capture may be invalidated: ending it is all
   * that is left to do, and its status does not matter. */
  gboolean ok = fs_cuda_ok (cudaStreamEndCapture (ctx->stream, &graph),
                            "cudaStreamEndCapture", recorded ? error : NULL)
                && recorded && FS_CUDA (cudaGraphInstantiate (&exec, graph, 0), error)
                && FS_CUDA (cudaGraphLaunch (exec, ctx->stream), error)
                && FS_CUDA (cudaStreamSynchronize (ctx->stream), error);

  if (exec != NULL)
    (void)FS_CUDA (cudaGraphExecDestroy (exec), NULL);
  if (graph != NULL)
    (void)FS_CUDA (cudaGraphDestroy (graph), NULL);
  return ok;
}

gboolean
fs_run_policies (FsCtx *ctx, TgProducer *producer, GError **error)
{
  static const struct
  {
    TgPolicy policy;
    const char *step;
  } runs[] = {
    { TG_POLICY_EAGER, "run EAGER" },
    { TG_POLICY_REPLAY, "run REPLAY (capture)" },
    { TG_POLICY_REPLAY, "run REPLAY (replay)" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (runs); i++)
    {
      fs_step (ctx, runs[i].step);
      if (!tg_producer_run (producer, ctx->stream, runs[i].policy, tg_unconditional (),
                            error))
        return FALSE;
    }
  fs_step (ctx, "run RECORD");
  return fs_capture_begin (ctx, error)
         && fs_capture_end (ctx,
                            tg_producer_run (producer, ctx->stream, TG_POLICY_RECORD,
                                             tg_unconditional (), error),
                            error);
}

/* ------------------------------------------------------------------------ */
/* The sweep                                                                 */

typedef struct
{
  guint64 calls;    /* CUDA calls of one run */
  guint64 injected; /* runs with one of them failing */
  guint gerrors;    /* ... that failed with a GError of the library */
  guint named;      /* ... whose message names the injected error */
  guint releases;   /* ... that succeeded with the failed release reported */
  /* Sweep failures: */
  guint silent;      /* succeeded, no failure reported */
  guint wrong;       /* FALSE without a proper GError, or a wrong result */
  guint leaks;       /* check (2) */
  guint dirty;       /* check (3) */
  guint unusable;    /* check (4) */
  guint missed;      /* the run made fewer calls than the one armed */
  GHashTable *codes; /* "domain/code" -> GErrors */
} Tally;

static void
count_code (Tally *t, const GError *error)
{
  char *key = g_strdup_printf ("%s/%d", g_quark_to_string (error->domain), error->code);
  guint n = GPOINTER_TO_UINT (g_hash_table_lookup (t->codes, key));

  g_hash_table_replace (t->codes, key, GUINT_TO_POINTER (n + 1));
}

/* A CUDA error's call site is named from the source tree's root
 * (-fmacro-prefix-map), never from the build machine's directories. */
static gboolean
names_build_path (const char *message)
{
  const char *at = strstr (message, " failed at ");

  return at != NULL && !g_str_has_prefix (at + strlen (" failed at "), "lib/");
}

/* (1): how the failure of call @k came back; the run made @made calls. */
static void
classify (Tally *t, guint64 k, guint64 made, gboolean ok, const GError *error,
          gint failed, gint warned, GString *line)
{
  g_autofree char *message
      = error != NULL ? g_strdelimit (g_strdup (error->message), "\n", ' ') : NULL;

  if (made < k)
    {
      t->missed++;
      g_string_append_printf (
          line, "FAIL not reached: the run made only %" G_GUINT64_FORMAT " calls",
          made);
    }
  else if (!ok && error != NULL && error->domain != FS_ERROR && message[0] != '\0'
           && names_build_path (message))
    {
      t->wrong++;
      g_string_append_printf (line, "FAIL a call site outside lib/: %s", message);
    }
  else if (!ok && error != NULL && error->domain != FS_ERROR && message[0] != '\0')
    {
      t->gerrors++;
      t->named += strstr (message, cudaGetErrorName (opt_error)) != NULL;
      count_code (t, error);
      g_string_append_printf (line, "GError %s/%d: %s",
                              g_quark_to_string (error->domain), error->code, message);
    }
  else if (ok && failed > 0 && warned > 0)
    {
      t->releases++;
      g_string_append_printf (line, "reported release (%d failed, %d warnings)", failed,
                              warned);
    }
  else if (ok)
    {
      t->silent++;
      g_string_append_printf (line,
                              "FAIL succeeded with no failure reported (%d failed "
                              "releases, %d warnings)",
                              failed, warned);
    }
  else
    {
      t->wrong++;
      g_string_append_printf (line, "FAIL %s",
                              message == NULL      ? "returned FALSE without an error"
                              : message[0] == '\0' ? "an error with no message"
                                                   : message);
    }
}

/* (2): objects whose release failed stay counted and may remain; nothing
 * else may, and no capture of TrackGen's may be open. */
static gboolean
no_leaks (const TgLiveObjects *before, const TgLiveObjects *after, GString *line)
{
  const gint grown[] = {
    after->producers - before->producers,
    after->graphs - before->graphs,
    after->graph_execs - before->graph_execs,
    after->streams - before->streams,
  };
  gint failed = after->failed_releases - before->failed_releases, sum = 0;
  gboolean ok = after->captures == 0;

  for (guint i = 0; i < G_N_ELEMENTS (grown); i++)
    {
      ok = ok && grown[i] >= 0;
      sum += grown[i];
    }
  if (ok && sum <= failed)
    return TRUE;
  g_string_append_printf (
      line,
      "; FAIL leak: producers %+d, graphs %+d, execs %+d, streams %+d, "
      "captures %d, failed releases %+d",
      grown[0], grown[1], grown[2], grown[3], after->captures, failed);
  return FALSE;
}

/* (3): the scenario's stream is not capturing (a capture left open is ended,
 * so that the sweep goes on) and no CUDA error is pending. */
static gboolean
stream_clean (FsCtx *ctx, GString *line)
{
  cudaError_t pending = cudaGetLastError ();
  g_autoptr (GError) error = NULL;
  TgCaptureState state = TG_CAPTURE_NONE;
  gboolean ok = pending == cudaSuccess;

  if (!ok)
    g_string_append_printf (line, "; FAIL %s left pending", cudaGetErrorName (pending));
  if (!tg_stream_get_capture_state (ctx->stream, &state, NULL, &error))
    {
      g_string_append_printf (line, "; FAIL capture state unknown: %s", error->message);
      return FALSE;
    }
  if (state != TG_CAPTURE_NONE)
    {
      g_string_append_printf (line, "; FAIL stream left capturing (state %d)", state);
      (void)fs_capture_end (ctx, FALSE, NULL);
      return FALSE;
    }
  return ok;
}

static void
inject (const Scenario *s, FsCtx *ctx, guint64 k, Tally *t)
{
  g_autoptr (GString) line = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) again = NULL;
  gint warnings = g_atomic_int_get (&n_warnings);
  TgLiveObjects before, after;
  gboolean ok, released;
  guint64 made;

  tg_get_live_objects (&before);
  ctx->at = k;
  ctx->where = "entry";
  tg__fault_arm (k, (cudaError_t)opt_error);
  ok = s->run (ctx, &error);
  made = tg__fault_count ();
  tg__fault_arm (0, (cudaError_t)opt_error);
  ctx->at = 0;
  t->injected++;

  /* Releases that graphs held run on TrackGen's reaper thread. */
  released = tg_release_wait (5 * G_USEC_PER_SEC);
  tg_get_live_objects (&after);
  g_string_printf (line, "# %s call %" G_GUINT64_FORMAT " (%s): ", s->name, k,
                   ctx->where);
  classify (t, k, made, ok, error, after.failed_releases - before.failed_releases,
            g_atomic_int_get (&n_warnings) - warnings, line);
  if (!released)
    g_string_append (line, "; releases still pending after 5 s");
  t->leaks += !no_leaks (&before, &after, line) || !released;
  t->dirty += !stream_clean (ctx, line);
  if (!s->run (ctx, &again))
    {
      t->unusable++;
      g_string_append_printf (line, "; FAIL the next run failed: %s", again->message);
    }
  g_print ("%s\n", line->str);
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

static void
append_count (GString *line, guint n, const char *what)
{
  if (n > 0)
    g_string_append_printf (line, ", %u %s", n, what);
}

static gboolean
report (guint number, const Scenario *s, const Tally *t, gint64 elapsed_us)
{
  guint failures = t->silent + t->wrong + t->leaks + t->dirty + t->unusable + t->missed;
  g_autoptr (GString) line = g_string_new (NULL);
  g_autofree gpointer *keys = NULL;
  guint n_keys = 0;

  g_string_printf (line,
                   "%s %u - %s: %" G_GUINT64_FORMAT " calls, %" G_GUINT64_FORMAT
                   " failures injected",
                   failures > 0 ? "not ok" : "ok", number, s->name, t->calls,
                   t->injected);
  if (opt_sample > 1)
    g_string_append_printf (line, " (one call in %d: %.0f%% of the calls)", opt_sample,
                            100.0 * t->injected / MAX (t->calls, 1));
  g_string_append_printf (line, ", %u GErrors, %u reported releases, %u leaks",
                          t->gerrors, t->releases, t->leaks);
  append_count (line, t->silent, "silent successes");
  append_count (line, t->wrong, "wrong results or errors");
  append_count (line, t->dirty, "streams left capturing or errors left pending");
  append_count (line, t->unusable, "failed next runs");
  append_count (line, t->missed, "injections not reached");
  g_print ("%s\n", line->str);

  keys = g_hash_table_get_keys_as_array (t->codes, &n_keys);
  qsort (keys, n_keys, sizeof *keys, compare_strings);
  g_string_printf (line, "# %s: GErrors by domain/code:", s->name);
  for (guint i = 0; i < n_keys; i++)
    g_string_append_printf (line, "%s %s x%u", i > 0 ? "," : "", (char *)keys[i],
                            GPOINTER_TO_UINT (g_hash_table_lookup (t->codes, keys[i])));
  g_print ("%s\n", line->str);
  g_print ("# %s: %u of %u GErrors name %s; %.1f s\n", s->name, t->named, t->gerrors,
           cudaGetErrorName (opt_error), elapsed_us / 1e6);
  return failures == 0;
}

static gboolean
sweep (guint number, const Scenario *s, FsCtx *ctx)
{
  g_autoptr (GError) error = NULL;
  gint64 start = g_get_monotonic_time ();
  Tally t = { 0 };
  gboolean ok;

  /* The first run makes what TrackGen makes once per process (its default
   * stream, the device count): the count covers what every run makes. */
  ok = s->run (ctx, &error);
  if (ok)
    {
      tg__fault_arm (0, (cudaError_t)opt_error);
      ok = s->run (ctx, &error);
    }
  if (!ok)
    {
      g_print ("not ok %u - %s: the run without injection failed: %s\n", number,
               s->name, error->message);
      return FALSE;
    }
  t.calls = tg__fault_count ();
  t.codes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_print ("# %s: %" G_GUINT64_FORMAT " CUDA calls per run\n", s->name, t.calls);
  for (guint64 k = 1; k <= t.calls; k += (guint64)opt_sample)
    inject (s, ctx, k, &t);
  ok = report (number, s, &t, g_get_monotonic_time () - start);
  g_hash_table_unref (t.codes);
  return ok;
}

static const Scenario *
find_scenario (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (scenarios); i++)
    if (g_str_equal (scenarios[i].name, name))
      return &scenarios[i];
  return NULL;
}

/* The scenarios named by --scenario, else all; NULL (and a message) for an
 * unknown name. */
static GPtrArray *
chosen_scenarios (void)
{
  GPtrArray *chosen = g_ptr_array_new ();

  if (opt_scenarios == NULL)
    for (guint i = 0; i < G_N_ELEMENTS (scenarios); i++)
      g_ptr_array_add (chosen, (gpointer)&scenarios[i]);
  for (guint i = 0; opt_scenarios != NULL && opt_scenarios[i] != NULL; i++)
    {
      const Scenario *s = find_scenario (opt_scenarios[i]);

      if (s == NULL)
        {
          g_printerr ("faultsweep: no scenario '%s'; see --help\n", opt_scenarios[i]);
          g_ptr_array_unref (chosen);
          return NULL;
        }
      g_ptr_array_add (chosen, (gpointer)s);
    }
  return chosen;
}

int
main (int argc, char **argv)
{
  g_autoptr (GOptionContext) context
      = g_option_context_new ("- make each CUDA call of TrackGen fail in turn");
  g_autoptr (GPtrArray) chosen = NULL;
  g_autoptr (GError) error = NULL;
  FsCtx ctx = { 0 };
  guint failed = 0;

  /* Line by line, so that the log of a run that crashed ends at its cause. */
  setvbuf (stdout, NULL, _IOLBF, 0);
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("faultsweep: %s\n", error->message);
      return 2;
    }
  if (opt_error <= 0 || opt_sample < 1)
    {
      g_printerr ("faultsweep: --error must be a cudaError_t above 0 and --sample at "
                  "least 1\n");
      return 2;
    }
  if ((chosen = chosen_scenarios ()) == NULL)
    return 2;
  if (!tg_test_have_gpu ())
    {
      g_print ("1..0 # SKIP no CUDA device\n");
      return 0;
    }
  /* Failed releases log warnings on purpose: never fatal here, whatever
   * G_DEBUG says.  Criticals (misuse) still abort. */
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL);
  g_log_set_handler ("TrackGen", G_LOG_LEVEL_WARNING, count_warning, NULL);
  ctx.stream = tg_test_stream_new ();

  g_print ("1..%u\n", chosen->len);
  g_print ("# injecting %s (%d) into every CUDA call TrackGen checks%s\n",
           cudaGetErrorName (opt_error), opt_error, opt_sample > 1 ? ", sampled" : "");
  for (guint i = 0; i < chosen->len; i++)
    failed += !sweep (i + 1, chosen->pdata[i], &ctx);
  TG_TEST_CUDA (cudaStreamDestroy (ctx.stream));
  return failed > 0;
}
