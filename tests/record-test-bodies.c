/* SPDX-License-Identifier: Apache-2.0 */
/* record-test-bodies.c: RECORD inside a conditional node of the caller's
 * (issue 20 item 4).  The caller builds an outer IF or an outer WHILE by
 * hand, as PyTorch's and cuda.core's conditional builders do: the node added
 * to its capture with cudaGraphAddNode, its body captured on another stream
 * with cudaStreamBeginCaptureToGraph, and a producer with an IF and a WHILE
 * of its own recorded into that body.  Every replay, the outer flag set and
 * clear, the outer loop run 0 to 3 times, is compared with the same work run
 * eagerly as often as the outer node ran its body.  A producer without
 * conditions joins the body as one child graph node.  In a capture scope
 * that says it fills a body (tg_capture_scope_begin_body()), work a body
 * cannot hold is refused before anything is recorded and the body graph
 * keeps exactly its nodes; without it, the caller's instantiation fails (a
 * CUDA fact, kept as a test).  What stages keep lives as long as the
 * caller's executable graph. */
#include "config.h"
#include "record-test.h"

#include <string.h>
#include <trackgen/interop.h>

#define N 256
#define MAX_ITERS 5
#define PATTERN 0xB5A3C6E1u
#define REPLAYS 12

/* What the producer touches. */
typedef struct
{
  guint32 out[N];
  gint32 inner_flag; /* the producer's guarded stage's condition */
  guint32 pattern_at;
  gint32 value, loop_flag, target;
  guint32 setup_at;
  TgLoopStatus status;
} Work;

/* The caller's outer IF and WHILE, and the producer's work. */
typedef struct
{
  gint32 outer_flag;  /* the outer IF runs its body when set */
  gint32 outer_iters; /* the outer WHILE runs its body this many times */
  gint32 outer_it;
  gint32 call_flag; /* the producer call's own condition, when it has one */
  Work work;
} Dev;

/* dev[0] is recorded into the caller's body, dev[1] run eagerly. */
TG_TEST_DEFINE_GPU_FIXTURE (Dev, dev, 2)

typedef enum
{
  OUTER_IF,
  OUTER_WHILE,
} Outer;

/* ------------------------------------------------------------------------ */
/* The producer: mix; [pattern; guarded mix; loop set-up; WHILE relax+mix]   */

static gboolean
mix_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (tgt_launch_mix (tg_launch_get_stream (launch),
                                           tg_launch_get_binding (launch, "out"), N,
                                           GPOINTER_TO_UINT (data)),
                           error);
}

static gboolean
pattern_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (
      tgt_launch_flag_pattern (tg_launch_get_stream (launch),
                               tg_launch_get_binding (launch, "inner_flag"),
                               tg_launch_get_binding (launch, "pattern_at"), PATTERN),
      error);
}

/* Each iteration also mixes the output: it tells how often the loop ran. */
static gboolean
relax_body (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_relax_stage (launch, NULL, error)
         && mix_stage (launch, GUINT_TO_POINTER (3), error);
}

#define DECLARE(p, stage, field)                                                       \
  tg_producer_declare_binding (p, stage, #field, sizeof (((Work *)NULL)->field), NULL)
#define BIND(p, w, field)                                                              \
  g_assert_true (tg_producer_bind (p, #field, &(w)->field, sizeof ((w)->field), NULL))

/* The producer over @w: with @conditions, an IF (a guarded stage whose flag
 * follows a pattern on the device) and a WHILE (run 0 to MAX_ITERS times,
 * capped in one call of four) of its own. */
static TgProducer *
body_producer (Work *w, gboolean conditions)
{
  TgProducer *p = tg_producer_new (conditions ? "if-and-while" : "plain", 0);
  TgLoopSpec loop = { .flag_binding = "loop_flag",
                      .status_binding = "status",
                      .max_iters = MAX_ITERS };
  guint s;

  s = tg_producer_add_device_stage (p, "mix", TG_STAGE_CAPTURE_SAFE, mix_stage,
                                    GUINT_TO_POINTER (5), NULL, NULL);
  DECLARE (p, s, out);
  BIND (p, w, out);
  if (!conditions)
    return p;
  s = tg_producer_add_device_stage (p, "pattern", TG_STAGE_CAPTURE_SAFE, pattern_stage,
                                    NULL, NULL, NULL);
  DECLARE (p, s, inner_flag);
  DECLARE (p, s, pattern_at);
  s = tg_producer_add_device_stage (p, "guarded", TG_STAGE_CAPTURE_SAFE, mix_stage,
                                    GUINT_TO_POINTER (9), NULL, NULL);
  tg_producer_set_stage_condition (p, s, "inner_flag", NULL);
  DECLARE (p, s, out);
  s = tg_producer_add_device_stage (p, "setup", TG_STAGE_CAPTURE_SAFE,
                                    tg_test_loop_setup_stage,
                                    GINT_TO_POINTER (MAX_ITERS), NULL, NULL);
  DECLARE (p, s, value);
  DECLARE (p, s, loop_flag);
  DECLARE (p, s, target);
  DECLARE (p, s, setup_at);
  s = tg_producer_add_loop_stage (p, "relax", TG_STAGE_CAPTURE_SAFE, &loop, relax_body,
                                  NULL, NULL, NULL);
  DECLARE (p, s, value);
  DECLARE (p, s, target);
  DECLARE (p, s, out);
  BIND (p, w, inner_flag);
  BIND (p, w, pattern_at);
  BIND (p, w, value);
  BIND (p, w, loop_flag);
  BIND (p, w, target);
  BIND (p, w, setup_at);
  BIND (p, w, status);
  return p;
}

/* ------------------------------------------------------------------------ */
/* The caller's conditional node, by hand                                    */

/* In the capture on @s, the set kernel and the conditional node @outer,
 * whose handle is made on the capture's graph, reading @d; then a capture
 * into the node's body begun on @side.  Returns the body graph. */
static cudaGraph_t
begin_outer (cudaStream_t s, cudaStream_t side, Outer outer, Dev *d,
             cudaGraphConditionalHandle *h)
{
  struct cudaGraphNodeParams params = { 0 };
  enum cudaStreamCaptureStatus status;
  const cudaGraphNode_t *deps = NULL;
  const cudaGraphEdgeData *edges = NULL;
  cudaGraph_t graph = NULL;
  cudaGraphNode_t node = NULL;
  size_t n = 0;

  TG_TEST_CUDA (cudaStreamGetCaptureInfo (s, &status, NULL, &graph, NULL, NULL, NULL));
  TG_TEST_CUDA (cudaGraphConditionalHandleCreate (h, graph, 0, 0));
  TG_TEST_CUDA (outer == OUTER_IF
                    ? tgr_launch_if_set (s, *h, &d->outer_flag)
                    : tgr_launch_while_entry (s, *h, &d->outer_it, &d->outer_iters));
  TG_TEST_CUDA (cudaStreamGetCaptureInfo (s, &status, NULL, &graph, &deps, &edges, &n));
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = *h;
  params.conditional.type
      = outer == OUTER_IF ? cudaGraphCondTypeIf : cudaGraphCondTypeWhile;
  params.conditional.size = 1;
  TG_TEST_CUDA (cudaGraphAddNode (&node, graph, deps, edges, n, &params));
  TG_TEST_CUDA (cudaStreamUpdateCaptureDependencies (s, &node, NULL, 1,
                                                     cudaStreamSetCaptureDependencies));
  TG_TEST_CUDA (cudaStreamBeginCaptureToGraph (side, params.conditional.phGraph_out[0],
                                               NULL, NULL, 0,
                                               cudaStreamCaptureModeGlobal));
  return params.conditional.phGraph_out[0];
}

/* Ends the body: a WHILE's ends with its set kernel. */
static void
end_outer (cudaStream_t side, Outer outer, Dev *d, cudaGraphConditionalHandle h)
{
  cudaGraph_t body = NULL;

  if (outer == OUTER_WHILE)
    TG_TEST_CUDA (tgr_launch_while_tail (side, h, &d->outer_it, &d->outer_iters));
  TG_TEST_CUDA (cudaStreamEndCapture (side, &body));
}

/* Replays @exec REPLAYS times, the outer node's input changing each time,
 * and runs the eager producer as often as the outer node runs its body:
 * both sides must agree after every replay. */
static void
replay_against_eager (Fixture *f, Outer outer, cudaGraphExec_t exec, TgProducer *eager,
                      TgCondition condition)
{
  cudaStream_t s = f->gpu.stream;
  g_autoptr (GError) error = NULL;
  Dev host[2];
  guint total = 0;

  for (guint r = 0; r < REPLAYS; r++)
    {
      gint32 flag = r % 3 != 1, iters = (gint32)(r % 4), call = (r / 2) % 2;
      guint runs = outer == OUTER_IF ? (guint)flag : (guint)iters;

      for (guint d = 0; d < 2; d++)
        {
          TG_TEST_CUDA (tgt_launch_set (s, &f->dev[d].outer_flag, flag));
          TG_TEST_CUDA (tgt_launch_set (s, &f->dev[d].outer_iters, iters));
          TG_TEST_CUDA (tgt_launch_set (s, &f->dev[d].call_flag, call));
        }
      TG_TEST_CUDA (cudaGraphLaunch (exec, s));
      for (guint k = 0; k < runs; k++)
        g_assert_true (tg_producer_run (eager, s, TG_POLICY_EAGER, condition, &error));
      g_assert_no_error (error);
      TG_TEST_CUDA (cudaStreamSynchronize (s));
      tg_test_download (host, f->dev, sizeof host);
      g_assert_cmpmem (&host[0].work, sizeof (Work), &host[1].work, sizeof (Work));
      total += runs;
    }
  /* The bodies ran, now and then. */
  g_assert_cmpuint (total, >, 0);
  g_assert_cmpuint (host[1].work.out[1], !=, 0);
}

/* Records the producer into the body of the caller's @outer, checks what the
 * body holds, and replays the caller's graph against the eager producer.
 * @conditions: the producer has its own IF and WHILE; @call_flag: the call
 * itself is conditional too, on a flag of its own. */
static void
record_in_body (Fixture *f, Outer outer, gboolean conditions, gboolean call_flag)
{
  cudaStream_t s = f->gpu.stream, side = tg_test_stream_new ();
  TgProducer *recorded = body_producer (&f->dev[0].work, conditions);
  TgProducer *eager = body_producer (&f->dev[1].work, conditions);
  TgCondition cond0
      = call_flag ? tg_conditional (&f->dev[0].call_flag) : tg_unconditional ();
  TgCondition cond1
      = call_flag ? tg_conditional (&f->dev[1].call_flag) : tg_unconditional ();
  cudaGraphConditionalHandle h;
  cudaGraph_t graph = NULL, body;
  cudaGraphExec_t exec = NULL;
  g_autoptr (GError) error = NULL;

  TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeGlobal));
  body = begin_outer (s, side, outer, &f->dev[0], &h);
  g_assert_true (tg_producer_run (recorded, side, TG_POLICY_RECORD, cond0, &error));
  g_assert_no_error (error);
  if (!conditions && !call_flag)
    {
      /* Unconditional work joins the body as one child graph node. */
      g_assert_cmpuint (tg_test_graph_n_nodes (body), ==, 1);
      g_assert_cmpuint (tg_test_graph_count_nodes (body, cudaGraphNodeTypeGraph), ==,
                        1);
    }
  else
    /* The producer's conditional nodes sit in the caller's body: the
     * call's IF, which holds the rest, or the guarded stage's IF and the
     * loop's WHILE. */
    g_assert_cmpuint (tg_test_graph_count_nodes (body, cudaGraphNodeTypeConditional),
                      ==, call_flag ? 1 : 2);
  end_outer (side, outer, &f->dev[0], h);
  TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  replay_against_eager (f, outer, exec, eager, cond1);

  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_producer_unref (recorded);
  tg_producer_unref (eager);
  tg_test_assert_not_capturing (side);
  TG_TEST_CUDA (cudaStreamDestroy (side));
}

typedef struct
{
  const char *path;
  Outer outer;
  gboolean conditions, call_flag;
} BodyCase;

static const BodyCase body_cases[] = {
  { "/record/in-caller-body/if/producer-with-if-and-while", OUTER_IF, TRUE, FALSE },
  { "/record/in-caller-body/while/producer-with-if-and-while", OUTER_WHILE, TRUE,
    FALSE },
  { "/record/in-caller-body/if/plain-producer-as-child-graph", OUTER_IF, FALSE, FALSE },
  { "/record/in-caller-body/while/plain-producer-as-child-graph", OUTER_WHILE, FALSE,
    FALSE },
  { "/record/in-caller-body/if/conditional-call", OUTER_IF, FALSE, TRUE },
  { "/record/in-caller-body/while/conditional-call-with-if-and-while", OUTER_WHILE,
    TRUE, TRUE },
};

static void
test_record_in_body (Fixture *f, gconstpointer data)
{
  const BodyCase *c = data;

  TG_TEST_REQUIRE_GPU ();
  record_in_body (f, c->outer, c->conditions, c->call_flag);
}

/* ------------------------------------------------------------------------ */
/* What a body cannot hold                                                   */

static void
count_on_host (gpointer data)
{
  g_atomic_int_inc ((gint *)data);
}

static gboolean
enqueue_stage (TgHostOps *ops, gpointer data, GError **error)
{
  return tg_host_ops_enqueue (ops, count_on_host, data, error);
}

static gboolean
allocating_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  cudaStream_t s = tg_launch_get_stream (launch);
  void *tmp = NULL;

  return tg_test_launched (cudaMallocAsync (&tmp, 256, s), error)
         && tg_test_launched (cudaFreeAsync (tmp, s), error);
}

/* A producer whose work puts a host node (@host) or an allocation in the
 * body. */
static TgProducer *
unholdable_producer (gboolean host, gint *host_runs)
{
  TgProducer *p = tg_producer_new (host ? "host-node" : "allocation", 0);

  if (host)
    tg_producer_add_host_stage (p, "enqueue", TG_STAGE_CAPTURE_SAFE, enqueue_stage,
                                host_runs, NULL, NULL);
  else
    tg_producer_add_device_stage (p, "allocate", TG_STAGE_CAPTURE_SAFE,
                                  allocating_stage, NULL, NULL, NULL);
  return p;
}

/* Declared a body: refused before recording, the body keeps its nodes and
 * its capture, and the same body then records a producer it can hold, which
 * replays right. */
static void
test_body_scope_refuses (Fixture *f, gconstpointer data)
{
  cudaStream_t s, side;
  TgProducer *good, *eager;
  gint host_runs = 0;
  cudaGraphConditionalHandle h;
  cudaGraph_t graph = NULL, body;
  cudaGraphExec_t exec = NULL;
  TgCaptureScope *scope;
  TgCaptureState state;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  s = f->gpu.stream;
  side = tg_test_stream_new ();
  good = body_producer (&f->dev[0].work, TRUE);
  eager = body_producer (&f->dev[1].work, TRUE);
  TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeGlobal));
  body = begin_outer (s, side, OUTER_IF, &f->dev[0], &h);
  scope = tg_capture_scope_begin_body (side, cudaStreamCaptureModeGlobal, &error);
  g_assert_no_error (error);
  for (guint host = 0; host <= 1; host++)
    {
      TgProducer *bad = unholdable_producer (host, &host_runs);
      gsize before = tg_test_graph_n_nodes (body);

      g_assert_false (tg_producer_run (bad, TG_STREAM_AUTO, TG_POLICY_AUTO,
                                       tg_unconditional (), &error));
      g_test_message ("%s", error->message);
      g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
      g_assert_nonnull (strstr (error->message, tg_producer_get_name (bad)));
      g_assert_nonnull (strstr (error->message, host ? "host" : "allocation"));
      g_clear_error (&error);
      g_assert_cmpuint (tg_test_graph_n_nodes (body), ==, before);
      g_assert_true (tg_stream_get_capture_state (side, &state, NULL, NULL));
      g_assert_cmpint (state, ==, TG_CAPTURE_ACTIVE);
      tg_producer_unref (bad);
    }
  g_assert_true (tg_producer_run (good, TG_STREAM_AUTO, TG_POLICY_AUTO,
                                  tg_unconditional (), &error));
  g_assert_no_error (error);
  g_assert_true (tg_capture_scope_end (scope, &error));
  tg_capture_scope_free (scope);
  end_outer (side, OUTER_IF, &f->dev[0], h);
  TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
  TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
  replay_against_eager (f, OUTER_IF, exec, eager, tg_unconditional ());
  /* The refused host function was never recorded, so it never ran. */
  g_assert_cmpint (host_runs, ==, 0);
  TG_TEST_CUDA (cudaGraphExecDestroy (exec));
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  /* The scope retained the good producer with the graph: dropping ours
   * leaves the graph's, released now that the graph is gone. */
  tg_producer_unref (good);
  tg_producer_unref (eager);
  tg_test_assert_not_capturing (side);
  TG_TEST_CUDA (cudaStreamDestroy (side));
}

/* Why the scope: without it a host node recorded into a body is accepted,
 * and the caller's instantiation fails (the H200, driver 580: a host node
 * in a conditional body fails cudaGraphInstantiate). */
static void
test_undeclared_body_fails_instantiation (Fixture *f, gconstpointer data)
{
  cudaStream_t s, side;
  TgProducer *bad;
  gint host_runs = 0;
  cudaGraphConditionalHandle h;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  cudaError_t status;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  s = f->gpu.stream;
  side = tg_test_stream_new ();
  bad = unholdable_producer (TRUE, &host_runs);
  TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeGlobal));
  (void)begin_outer (s, side, OUTER_IF, &f->dev[0], &h);
  g_assert_true (
      tg_producer_run (bad, side, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_no_error (error);
  end_outer (side, OUTER_IF, &f->dev[0], h);
  TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
  status = cudaGraphInstantiate (&exec, graph, 0);
  g_test_message ("cudaGraphInstantiate with a host node in a body: %s",
                  cudaGetErrorName (status));
  g_assert_cmpint (status, !=, cudaSuccess);
  (void)cudaGetLastError ();
  TG_TEST_CUDA (cudaGraphDestroy (graph));
  tg_producer_unref (bad);
  g_assert_true (tg_release_wait (10 * G_USEC_PER_SEC));
  TG_TEST_CUDA (cudaStreamDestroy (side));
}

/* A body capture the caller's own call invalidated: a body scope refuses
 * it, and its message says what the driver does next (until 0.5 it said
 * "end it and capture again", and a caller who then destroyed the outer
 * graph crashed in the driver: H200, driver 580, cuGraphDestroy).  Run in
 * a subprocess, which does what the message says: ends both captures and
 * keeps the outer graph; a crash anywhere in it fails the test. */
static void
test_body_scope_invalidated (Fixture *f, gconstpointer data)
{
  cudaStream_t s, side;
  cudaGraphConditionalHandle h;
  cudaGraph_t graph = NULL, body = NULL;
  cudaError_t status;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
      g_test_trap_assert_passed ();
      return;
    }
  s = f->gpu.stream;
  side = tg_test_stream_new ();
  TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeGlobal));
  (void)begin_outer (s, side, OUTER_IF, &f->dev[0], &h);
  g_assert_cmpint (cudaStreamSynchronize (side), !=, cudaSuccess);
  (void)cudaGetLastError ();
  g_test_message ("body capture invalidated");
  g_assert_null (
      tg_capture_scope_begin_body (side, cudaStreamCaptureModeGlobal, &error));
  g_test_message ("refused: %s", error->message);
  g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "is invalidated"));
  g_assert_nonnull (strstr (error->message, "keep that graph"));
  g_assert_false (tg_capture_is_registered (side));
  status = cudaStreamEndCapture (side, &body);
  g_test_message ("body capture ended: %s", cudaGetErrorName (status));
  g_assert_cmpint (status, !=, cudaSuccess);
  (void)cudaGetLastError ();
  status = cudaStreamEndCapture (s, &graph);
  g_test_message ("outer capture ended: %s; the outer graph %p is kept",
                  cudaGetErrorName (status), (void *)graph);
  (void)cudaGetLastError ();
  tg_test_assert_not_capturing (side);
  tg_test_assert_not_capturing (s);
  TG_TEST_CUDA (cudaStreamDestroy (side));
}

/* ------------------------------------------------------------------------ */
/* What stages keep lives with the caller's executable graph                 */

static gboolean
keeping_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  tg_test_keep_token (launch);
  return mix_stage (launch, GUINT_TO_POINTER (5), error);
}

static void
test_keep_in_body (Fixture *f, gconstpointer data)
{
  TG_TEST_REQUIRE_GPU ();
  for (guint conditional = 0; conditional <= 1; conditional++)
    {
      cudaStream_t s = f->gpu.stream, side = tg_test_stream_new ();
      TgProducer *p = tg_producer_new ("keeping", 0);
      guint stage = tg_producer_add_device_stage (p, "keep", TG_STAGE_CAPTURE_SAFE,
                                                  keeping_stage, NULL, NULL, NULL);
      TgCondition cond
          = conditional ? tg_conditional (&f->dev[0].outer_flag) : tg_unconditional ();
      cudaGraphConditionalHandle h;
      cudaGraph_t graph = NULL;
      cudaGraphExec_t exec = NULL;
      g_autoptr (GError) error = NULL;

      tg_producer_declare_binding (p, stage, "out", sizeof (guint32) * N, NULL);
      g_assert_true (tg_producer_bind (p, "out", f->dev[0].work.out,
                                       sizeof f->dev[0].work.out, &error));
      tg_test_kept_reset ();
      TG_TEST_CUDA (cudaStreamBeginCapture (s, cudaStreamCaptureModeGlobal));
      (void)begin_outer (s, side, OUTER_IF, &f->dev[0], &h);
      g_assert_true (tg_producer_run (p, side, TG_POLICY_RECORD, cond, &error));
      g_assert_no_error (error);
      end_outer (side, OUTER_IF, &f->dev[0], h);
      TG_TEST_CUDA (cudaStreamEndCapture (s, &graph));
      tg_producer_unref (p);
      /* Kept once: the stage is called once, conditional work too. */
      g_assert_cmpint (tg_test_kept_alive (), ==, 1);
      TG_TEST_CUDA (cudaGraphInstantiate (&exec, graph, 0));
      TG_TEST_CUDA (cudaGraphDestroy (graph));
      TG_TEST_CUDA (tgt_launch_set (s, &f->dev[0].outer_flag, 1));
      TG_TEST_CUDA (cudaGraphLaunch (exec, s));
      TG_TEST_CUDA (cudaStreamSynchronize (s));
      /* The executable graph holds it, though the graph that held the body
       * is gone. */
      g_usleep (50 * 1000);
      g_assert_cmpint (tg_test_kept_alive (), ==, 1);
      TG_TEST_CUDA (cudaGraphExecDestroy (exec));
      g_assert_true (tg_release_wait (10 * G_USEC_PER_SEC));
      g_assert_cmpint (tg_test_kept_alive (), ==, 0);
      TG_TEST_CUDA (cudaStreamDestroy (side));
    }
}

void
tgr_add_body_tests (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (body_cases); i++)
    TG_TEST_ADD_FIXTURE (body_cases[i].path, &body_cases[i], test_record_in_body);
  TG_TEST_ADD_FIXTURE ("/record/in-caller-body/scope/refuses-what-a-body-cannot-hold",
                       NULL, test_body_scope_refuses);
  TG_TEST_ADD_FIXTURE ("/record/facts/host-node-in-undeclared-body-fails-instantiation",
                       NULL, test_undeclared_body_fails_instantiation);
  TG_TEST_ADD_FIXTURE ("/record/in-caller-body/keep/lives-with-the-caller-exec", NULL,
                       test_keep_in_body);
  TG_TEST_ADD_FIXTURE ("/record/in-caller-body/scope/invalidated-body-refused", NULL,
                       test_body_scope_invalidated);
}
