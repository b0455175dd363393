/* SPDX-License-Identifier: Apache-2.0 */
/* condition-test-user.c: conditions, switches and loops that the user's own
 * kernels decide (tg_launch_if_by(), tg_launch_switch_by(),
 * tg_launch_while_by(), loop stages with set_by_body).  Each step's whole
 * device state is compared byte for byte with one host model under EAGER,
 * REPLAY and RECORD: the branches taken, and every loop's iterations and
 * exit reason before, at and after its cap and when skipped, nested in
 * other conditions.  Refusals leave the caller's capture as it was.  The
 * eager decisions themselves are condition-test-eager.c's. */
#include "config.h"
#include "condition-test.h"

#include <string.h>

#define N 256 /* elements of the buffer the bodies mix */
#define N_STEPS 12
#define N_CALLS 16
#define MAX_ITERS 5
#define THEN_K 3u
#define ELSE_K 5u
#define LOOP_K 11u
static const guint32 case_k[] = { 7u, 9u, 13u };
#define N_CASES G_N_ELEMENTS (case_k)

/* The decisions the kernels make, in turn: any non-zero runs an IF's then
 * body; -1, 3 and 7 select no case of a switch. */
static const gint32 if_steps[N_STEPS] = { 1, 0, 0, 1, 7, 0, 1, 1, 0, -1, 0, 1 };
static const gint32 switch_steps[N_STEPS] = { 0, 1, 2, -1, 3, 2, 0, 7, 1, 2, 0, 1 };
static const gint32 inner_steps[N_STEPS] = { 1, 0, 2, 0, 1, -1, 2, 1, 0, 0, 2, 1 };

/* Every device value a test producer touches, in one allocation. */
typedef struct
{
  gint32 steps[N_STEPS], inner_steps[N_STEPS];
  guint32 at, inner_at;    /* positions in the steps */
  gint32 seen, inner_seen; /* the last decisions made */
  gint32 value, entry, target;
  guint32 setup_at; /* position in the loop targets (tgt_launch_loop_setup) */
  TgLoopStatus status;
  guint32 buf[N];
} Dev;

TG_TEST_DEFINE_GPU_FIXTURE (Dev, dev, 1)

static const TgPolicy policies[]
    = { TG_POLICY_EAGER, TG_POLICY_REPLAY, TG_POLICY_RECORD };

/* ------------------------------------------------------------------------ */
/* Stages and bodies                                                         */

#define DEV(launch) ((Dev *)tg_launch_get_binding (launch, "dev"))

static gboolean
mix (const TgLaunch *launch, guint32 k, GError **error)
{
  return tg_test_launched (
      tgt_launch_mix (tg_launch_get_stream (launch), DEV (launch)->buf, N, k), error);
}

static gboolean
mix_then (const TgLaunch *launch, gpointer data, GError **error)
{
  return mix (launch, THEN_K, error);
}

static gboolean
mix_else (const TgLaunch *launch, gpointer data, GError **error)
{
  return mix (launch, ELSE_K, error);
}

static gboolean
mix_case (const TgLaunch *launch, gpointer data, GError **error)
{
  return mix (launch, case_k[tg_launch_get_case (launch)], error);
}

static const TgDeviceFunc cases[N_CASES] = { mix_case, mix_case, mix_case };

/* The decide functions: their kernel decides from the steps. */
static gboolean
decide (const TgLaunch *launch, gpointer data, GError **error)
{
  Dev *d = DEV (launch);

  return tg_test_launched (tgc_launch_decide (tg_launch_get_stream (launch),
                                              tg_launch_get_condition (launch),
                                              d->steps, N_STEPS, &d->at, &d->seen),
                           error);
}

static gboolean
decide_inner (const TgLaunch *launch, gpointer data, GError **error)
{
  Dev *d = DEV (launch);

  return tg_test_launched (tgc_launch_decide (tg_launch_get_stream (launch),
                                              tg_launch_get_condition (launch),
                                              d->inner_steps, N_STEPS, &d->inner_at,
                                              &d->inner_seen),
                           error);
}

static gboolean
setup (const TgLaunch *launch, gpointer data, GError **error)
{
  Dev *d = DEV (launch);

  return tg_test_launched (tgt_launch_loop_setup (tg_launch_get_stream (launch),
                                                  &d->value, &d->entry, &d->target,
                                                  &d->setup_at, MAX_ITERS),
                           error);
}

/* The end of an iteration that decides its loop. */
static gboolean
relax_next (const TgLaunch *launch, GError **error)
{
  Dev *d = DEV (launch);

  return tg_test_launched (tgc_launch_relax_next (tg_launch_get_stream (launch),
                                                  tg_launch_get_loop (launch),
                                                  &d->value, &d->target),
                           error);
}

static gboolean
loop_body (const TgLaunch *launch, gpointer data, GError **error)
{
  return mix (launch, LOOP_K, error) && relax_next (launch, error);
}

/* An iteration holding a decided switch before its own decision. */
static gboolean
switching_body (const TgLaunch *launch, gpointer data, GError **error)
{
  return mix (launch, LOOP_K, error)
         && tg_launch_switch_by (launch, decide_inner, N_CASES, cases, data, error)
         && relax_next (launch, error);
}

/* An iteration of a loop driven by its flag ("entry"), holding a decided IF. */
static gboolean
flag_body (const TgLaunch *launch, gpointer data, GError **error)
{
  Dev *d = DEV (launch);

  return tg_test_launched (tgt_launch_relax (tg_launch_get_stream (launch), &d->value,
                                             &d->entry, &d->target),
                           error)
         && tg_launch_if_by (launch, decide_inner, mix_then, NULL, data, error);
}

static gboolean
while_entry (const TgLaunch *launch, gpointer body, GError **error)
{
  Dev *d = DEV (launch);

  return tg_launch_while_by (launch, &d->entry, MAX_ITERS, &d->status, body, NULL,
                             error);
}

typedef enum
{
  KIND_IF,           /* if_by, no else */
  KIND_IF_ELSE,      /* if_by with an else body */
  KIND_SWITCH,       /* switch_by */
  KIND_WHILE,        /* setup; while_by on the entry flag */
  KIND_WHILE_ALWAYS, /* setup; while_by without an entry flag */
  KIND_WHILE_STAGE,  /* setup stage; loop stage with set_by_body */
  KIND_NESTED,       /* setup; if_by > while_by > switch_by, else mix */
  KIND_IN_FLAG_LOOP, /* setup; while on the flag > if_by */
} Kind;

static gboolean
kind_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  Dev *d = DEV (launch);

  switch ((Kind)GPOINTER_TO_INT (data))
    {
    case KIND_IF:
      return tg_launch_if_by (launch, decide, mix_then, NULL, NULL, error);
    case KIND_IF_ELSE:
      return tg_launch_if_by (launch, decide, mix_then, mix_else, NULL, error);
    case KIND_SWITCH:
      return tg_launch_switch_by (launch, decide, N_CASES, cases, NULL, error);
    case KIND_WHILE:
      return setup (launch, NULL, error) && while_entry (launch, loop_body, error);
    case KIND_WHILE_ALWAYS:
      return setup (launch, NULL, error)
             && tg_launch_while_by (launch, NULL, MAX_ITERS, &d->status, loop_body,
                                    NULL, error);
    case KIND_NESTED:
      return setup (launch, NULL, error)
             && tg_launch_if_by (launch, decide, while_entry, mix_else,
                                 (gpointer)switching_body, error);
    case KIND_IN_FLAG_LOOP:
    default:
      return setup (launch, NULL, error)
             && tg_launch_while (launch, &d->entry, MAX_ITERS, &d->status, flag_body,
                                 NULL, error);
    }
}

static TgProducer *
kind_producer (Fixture *f, Kind kind)
{
  TgProducer *p = tg_producer_new ("decided", 0);
  g_autoptr (GError) error = NULL;
  guint stage;

  if (kind == KIND_WHILE_STAGE)
    {
      const TgLoopSpec loop = { .flag_binding = "entry",
                                .status_binding = "status",
                                .max_iters = MAX_ITERS,
                                .set_by_body = TRUE };

      stage = tg_producer_add_device_stage (p, "setup", TG_STAGE_CAPTURE_SAFE, setup,
                                            NULL, NULL, NULL);
      tg_producer_declare_binding (p, stage, "dev", sizeof (Dev), NULL);
      stage = tg_producer_add_loop_stage (p, "loop", TG_STAGE_CAPTURE_SAFE, &loop,
                                          loop_body, NULL, NULL, NULL);
      g_assert_true (
          tg_producer_bind (p, "entry", &f->dev->entry, sizeof (gint32), &error));
      g_assert_true (tg_producer_bind (p, "status", &f->dev->status,
                                       sizeof (TgLoopStatus), &error));
    }
  else
    stage
        = tg_producer_add_device_stage (p, "decided", TG_STAGE_CAPTURE_SAFE, kind_stage,
                                        GINT_TO_POINTER (kind), NULL, NULL);
  tg_producer_declare_binding (p, stage, "dev", sizeof (Dev), NULL);
  g_assert_true (tg_producer_bind (p, "dev", f->dev, sizeof (Dev), &error));
  g_assert_no_error (error);
  return p;
}

/* ------------------------------------------------------------------------ */
/* The host model                                                            */

static void
host_mix (Dev *e, guint32 k)
{
  for (guint32 i = 0; i < N; i++)
    e->buf[i] = e->buf[i] * k + ((e->buf[i] >> 7) ^ i);
}

static gint32
host_decide (const gint32 *steps, guint32 *at, gint32 *seen)
{
  *seen = steps[*at % N_STEPS];
  *at += 1;
  return *seen;
}

static void
host_case (Dev *e, gint32 v)
{
  if ((guint32)v < N_CASES)
    host_mix (e, case_k[v]);
}

static void
host_setup (Dev *e)
{
  const gint32 targets[4] = { MAX_ITERS - 2, MAX_ITERS, MAX_ITERS + 3, 0 };

  e->target = targets[e->setup_at % 4];
  e->value = 0;
  e->entry = e->target > 0;
  e->setup_at++;
}

/* The end of an iteration, as tg_loop_next() and TrackGen's tail kernel. */
static void
host_next (Dev *e, gboolean converged)
{
  e->status.iterations++;
  e->status.end = converged                           ? TG_LOOP_END_CONVERGED
                  : e->status.iterations >= MAX_ITERS ? TG_LOOP_END_CAPPED
                                                      : TG_LOOP_END_NONE;
}

static void
host_loop (Dev *e, Kind kind, gboolean has_entry)
{
  e->status.iterations = 0;
  e->status.end = !has_entry || e->entry != 0 ? TG_LOOP_END_NONE : TG_LOOP_END_SKIPPED;
  while (e->status.end == TG_LOOP_END_NONE)
    if (kind == KIND_IN_FLAG_LOOP)
      {
        e->value += 1;
        e->entry = e->value < e->target;
        if (host_decide (e->inner_steps, &e->inner_at, &e->inner_seen) != 0)
          host_mix (e, THEN_K);
        host_next (e, e->entry == 0);
      }
    else
      {
        host_mix (e, LOOP_K);
        if (kind == KIND_NESTED)
          host_case (e, host_decide (e->inner_steps, &e->inner_at, &e->inner_seen));
        e->value += 1;
        host_next (e, e->value >= e->target);
      }
}

static void
host_call (Dev *e, Kind kind)
{
  gint32 v;

  switch (kind)
    {
    case KIND_IF:
    case KIND_IF_ELSE:
      v = host_decide (e->steps, &e->at, &e->seen);
      if (v != 0 || kind == KIND_IF_ELSE)
        host_mix (e, v != 0 ? THEN_K : ELSE_K);
      break;
    case KIND_SWITCH:
      host_case (e, host_decide (e->steps, &e->at, &e->seen));
      break;
    case KIND_NESTED:
      host_setup (e);
      if (host_decide (e->steps, &e->at, &e->seen) != 0)
        host_loop (e, kind, TRUE);
      else
        host_mix (e, ELSE_K);
      break;
    default:
      host_setup (e);
      host_loop (e, kind, kind != KIND_WHILE_ALWAYS);
      break;
    }
}

/* ------------------------------------------------------------------------ */
/* Every shape under the three policies                                      */

typedef struct
{
  const char *path;
  Kind kind;
} Shape;

static const Shape shapes[] = {
  { "/condition/by/if/policies-agree", KIND_IF },
  { "/condition/by/if-else/policies-agree", KIND_IF_ELSE },
  { "/condition/by/switch/policies-agree", KIND_SWITCH },
  { "/condition/by/while/cap-and-exit-exact", KIND_WHILE },
  { "/condition/by/while/no-entry-flag-always-enters", KIND_WHILE_ALWAYS },
  { "/condition/by/while/loop-stage-set-by-body", KIND_WHILE_STAGE },
  { "/condition/by/nesting/if-while-switch", KIND_NESTED },
  { "/condition/by/nesting/if-in-flag-loop", KIND_IN_FLAG_LOOP },
};

static void
model_init (Dev *e, Kind kind)
{
  *e = (Dev){ 0 };
  memcpy (e->steps, kind == KIND_SWITCH ? switch_steps : if_steps, sizeof e->steps);
  memcpy (e->inner_steps, inner_steps, sizeof e->inner_steps);
  for (guint32 i = 0; i < N; i++)
    e->buf[i] = tgt_hash (i, 0x5EED);
}

/* Runs N_CALLS calls under @policy (RECORD: replays of one recording) and
 * checks the whole device state against the model after each; counts the
 * loop's exit reasons in @ends. */
static void
run_calls (Fixture *f, Kind kind, TgPolicy policy, guint ends[4], Dev *last)
{
  g_autoptr (TgProducer) p = kind_producer (f, kind);
  g_autoptr (GError) error = NULL;
  cudaStream_t s = f->gpu.stream;
  cudaGraphExec_t exec = NULL;
  Dev e;

  model_init (&e, kind);
  tg_test_upload (f->dev, &e, sizeof e);
  if (policy == TG_POLICY_RECORD)
    {
      cudaGraph_t graph = NULL;

      TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeGlobal));
      g_assert_true (tg_producer_run (p, s, policy, tg_unconditional (), &error));
      g_assert_no_error (error);
      TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
      TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
      TG_TEST_CUDA (cudaGraphDestroy (graph));
    }
  for (guint i = 0; i < N_CALLS; i++)
    {
      if (exec != NULL)
        TG_TEST_CUDA (cudaGraphLaunch (exec, s));
      else
        g_assert_true (tg_producer_run (p, s, policy, tg_unconditional (), &error));
      g_assert_no_error (error);
      TG_TEST_CUDA (cudaStreamSynchronize (s));
      tg_test_download (last, f->dev, sizeof *last);
      host_call (&e, kind);
      g_assert_cmpmem (last, sizeof *last, &e, sizeof e);
      ends[last->status.end]++;
    }
  if (policy == TG_POLICY_REPLAY)
    {
      TgRunnerStats stats;

      /* One graph, decided on the device at every launch. */
      tg_producer_get_runner_stats (p, &stats);
      g_assert_cmpuint (stats.n_captures, ==, 1);
    }
  if (exec != NULL)
    TG_TEST_CUDA (cudaGraphExecDestroy (exec));
}

static void
test_shape (Fixture *f, gconstpointer data)
{
  const Shape *shape = data;
  Dev last[G_N_ELEMENTS (policies)];
  guint ends[G_N_ELEMENTS (policies)][4] = { { 0 } };

  TG_TEST_REQUIRE_GPU ();
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    run_calls (f, shape->kind, policies[i], ends[i], &last[i]);
  for (guint i = 1; i < G_N_ELEMENTS (policies); i++)
    g_assert_cmpmem (&last[i], sizeof (Dev), &last[0], sizeof (Dev));
  if (shape->kind >= KIND_WHILE && shape->kind != KIND_NESTED)
    {
      /* The targets cycle before, at and after the cap, and 0: every exit
       * reason occurs (0 always enters without an entry flag). */
      g_assert_cmpuint (ends[0][TG_LOOP_END_CONVERGED], >, 0);
      g_assert_cmpuint (ends[0][TG_LOOP_END_CAPPED], >, 0);
      if (shape->kind != KIND_WHILE_ALWAYS)
        g_assert_cmpuint (ends[0][TG_LOOP_END_SKIPPED], >, 0);
    }
  g_test_message ("%s: %u calls alike under the three policies", shape->path, N_CALLS);
}

/* ------------------------------------------------------------------------ */
/* Refusals                                                                  */

static void
host_noop (gpointer data)
{
}

static gboolean
host_function_body (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (
      cudaLaunchHostFunc (tg_launch_get_stream (launch), host_noop, NULL), error);
}

static gboolean
failing_decide (const TgLaunch *launch, gpointer data, GError **error)
{
  g_set_error_literal (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_FAILED,
                       "the decide function refuses");
  return FALSE;
}

static gboolean
refused_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  switch (GPOINTER_TO_INT (data))
    {
    case 0:
      return tg_launch_if_by (launch, decide, host_function_body, NULL, NULL, error);
    case 1:
      return tg_launch_while_by (launch, NULL, MAX_ITERS, &DEV (launch)->status,
                                 host_function_body, NULL, error);
    default:
      return tg_launch_if_by (launch, failing_decide, mix_then, NULL, NULL, error);
    }
}

static void
test_refusals (Fixture *f, gconstpointer data)
{
  const struct
  {
    GQuark domain;
    gint code;
  } expected[] = {
    { TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE },
    { TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE },
    { TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_FAILED },
  };

  TG_TEST_REQUIRE_GPU ();
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_autoptr (TgProducer) p = tg_producer_new ("refused", 0);
      guint stage = tg_producer_add_device_stage (p, "refused", TG_STAGE_CAPTURE_SAFE,
                                                  refused_stage, GINT_TO_POINTER (i),
                                                  NULL, NULL);

      tg_producer_declare_binding (p, stage, "dev", sizeof (Dev), NULL);
      g_assert_true (tg_producer_bind (p, "dev", f->dev, sizeof (Dev), NULL));
      /* The caller's capture keeps exactly its nodes, still active. */
      tg_test_expect_refusal (p, f->gpu.stream, TG_POLICY_AUTO, tg_unconditional (),
                              expected[i].domain, expected[i].code);
    }
}

void
tgc_add_user_tests (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (shapes); i++)
    TG_TEST_ADD_FIXTURE (shapes[i].path, &shapes[i], test_shape);
  TG_TEST_ADD_FIXTURE ("/condition/by/refusals/leave-caller-capture", NULL,
                       test_refusals);
}
