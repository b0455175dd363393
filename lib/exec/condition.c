/* SPDX-License-Identifier: Apache-2.0 */
/* condition.c: conditions (IF, IF/ELSE), switches and bounded loops (WHILE).
 * Captured, the guarded work is the body graphs of a conditional node,
 * captured on a side stream of the producer (one per nesting depth) with
 * cudaStreamBeginCaptureToGraph, so conditions and loops nest.
 *
 * Whatever drives a node decides through a TgDeviceCondition: TrackGen's
 * set, entry and tail kernels reading a flag or an index, or the user's own
 * kernels (tg_launch_if_by() and kin), through the same device functions.
 * Captured, it carries the node's handle; eagerly, a mapped host word that
 * the host waits for (decision.c), and the host runs the body it selects.
 * So one decide() serves both paths, and a kernel that decides works under
 * every policy. */
#include "config.h"
#include "condition-kernels-private.h"
#include "condition-private.h"
#include "body-private.h"
#include "decision-private.h"
#include "record-plan-private.h"
#include "resource-private.h"

typedef enum
{
  COND_IF,
  COND_SWITCH,
  COND_WHILE,
} CondKind;

/* A conditional node's kind, bodies, and what decides it. */
typedef struct
{
  CondKind kind;
  const char *what; /* for messages: "condition", "switch", "loop" */
  /* The flag or index a set kernel reads; a loop's entry flag (NULL: a loop
   * whose body decides always enters).  NULL when @decide decides. */
  const gint32 *flag;
  TgDeviceFunc decide; /* IF, SWITCH: the user's decide function, or NULL */
  gboolean by_body;    /* WHILE: the body calls tg_loop_next(), no tail kernel */
  guint n_bodies;
  const TgDeviceFunc *bodies;
  guint max_iters;      /* WHILE */
  TgLoopStatus *status; /* WHILE */
} Conditional;

static const TgDeviceCondition no_condition = { .how = TG_DEVICE_CONDITION_NONE };

/* The launch context body @i of @c runs in: one level deeper than
 * @launch's, in a switch's case @i, and with nothing to decide but its own
 * conditions (a loop body that decides gets its loop from the caller). */
static TgLaunch
body_launch (const TgLaunch *launch, const Conditional *c, guint i)
{
  TgLaunch inner = *launch;

  inner.depth++;
  inner.condition = NULL;
  inner.loop = NULL;
  if (c->kind == COND_SWITCH)
    inner.switch_case = (gint)i;
  return inner;
}

static TgDeviceLoop
loop_of (const Conditional *c, const TgDeviceCondition *next)
{
  TgDeviceLoop loop = { *next, c->status, c->max_iters };

  return loop;
}

/* What must write a decision of @c, for the message when nothing did. */
static const char *
writer_of (const Conditional *c, gboolean entry)
{
  if (c->kind == COND_WHILE && c->by_body && !entry)
    return "the loop's body";
  if (c->decide != NULL)
    return c->kind == COND_SWITCH ? "the switch's decide function"
                                  : "the condition's decide function";
  return "TrackGen's set kernel";
}

static enum cudaGraphConditionalNodeType
node_type (CondKind kind)
{
  switch (kind)
    {
    case COND_WHILE:
      return cudaGraphCondTypeWhile;
#if CUDART_VERSION >= 12080
    case COND_SWITCH:
      return cudaGraphCondTypeSwitch;
#endif
    default:
      /* A SWITCH in an older build is refused before a node is made. */
      return cudaGraphCondTypeIf;
    }
}

/* Enqueues on @launch's stream what decides @c through @d, before its node
 * (or, eagerly, before its body): the loop's entry kernel, TrackGen's set
 * kernel on the flag or index, or the user's decide function. */
static gboolean
decide (const TgLaunch *launch, const Conditional *c, const TgDeviceCondition *d,
        gpointer data, GError **error)
{
  TgLaunch deciding;

  if (c->kind == COND_WHILE)
    return TG_CUDA_OK (tg__launch_loop_entry (launch->stream, loop_of (c, d), c->flag),
                       error);
  if (c->decide == NULL)
    return TG_CUDA_OK (c->kind == COND_SWITCH
                           ? tg__launch_switch_set (launch->stream, *d, c->flag)
                           : tg__launch_if_set (launch->stream, *d, c->flag),
                       error);
  deciding = *launch;
  deciding.condition = d;
  return c->decide (&deciding, data, error);
}

/* Captures body @i of @c into @body_graph: in segments (body.c), so that a
 * body whose capture breaks is refused and its node stays whole; straight
 * into it, again, where a segment held a conditional node another made (a
 * Warp stage's capture_while): the body's stage functions then run again,
 * and RECORD's units with them. */
static gboolean
capture_body (const TgLaunch *launch, const Conditional *c, cudaStream_t side,
              cudaGraph_t body_graph, guint i, const TgDeviceCondition *d,
              gpointer data, GError **error)
{
  g_autofree char *where = c->n_bodies > 1
                               ? g_strdup_printf ("body %u of the %s", i, c->what)
                               : g_strdup_printf ("the %s's body", c->what);
  gboolean direct = FALSE;
  TgDeviceLoop loop = loop_of (c, d);
  const guint mark = tg__record_plan_mark (launch);
  g_autoptr (GArray) handles = g_array_new (FALSE, FALSE, sizeof (cudaGraphConditionalHandle));

  for (;;)
    {
      g_autoptr (GError) local = NULL;
      TgLaunch inner = body_launch (launch, c, i);
      TgBody body;
      gboolean ok, ended;

      if (!tg__body_begin (&body, side, body_graph, where, launch->mode, direct, handles,
                           error))
        {
          tg__body_end (&body, FALSE, NULL);
          return FALSE;
        }
      inner.stream = side;
      inner.capture_graph = body_graph;
      inner.body = &body;
      if (c->kind == COND_WHILE && c->by_body)
        inner.loop = &loop;
      ok = c->bodies[i](&inner, data, &local);
      if (ok && c->kind == COND_WHILE && !c->by_body)
        ok = TG_CUDA_OK (tg__launch_loop_tail (side, loop, c->flag), &local);
      /* End the body capture whatever happened: no stream is left capturing.  A
       * refusal raised by the capture itself becomes NOT_CAPTURABLE in
       * tg__stages_capture(), which every captured body runs under first. */
      ended = tg__body_end (&body, ok, ok ? &local : NULL);
      if (ok && ended)
        return tg__capture_finish_body (body_graph, where, error);
      if (body.foreign && !direct)
        {
          if (!tg__body_clear (&body, error))
            return FALSE;
          tg__record_plan_rewind (launch, mark);
          direct = TRUE;
          continue;
        }
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
}

static gboolean
captured (const TgLaunch *launch, const Conditional *c, gpointer data, GError **error)
{
  TgConditionalKind needs = c->kind == COND_SWITCH || c->n_bodies > 1
                                ? TG_CONDITIONAL_ELSE_SWITCH
                                : TG_CONDITIONAL_IF_WHILE;
  /* A SWITCH node takes any number of bodies. */
  g_autofree cudaGraph_t *bodies = g_new (cudaGraph_t, c->n_bodies);
  TgDeviceCondition d = { .how = TG_DEVICE_CONDITION_GRAPH };
  const gboolean in_segments = launch->body != NULL && !launch->body->direct;
  cudaGraphConditionalHandle handle;
  cudaStream_t side;

  if (!tg__capture_conditionals_supported (needs, error)
      || (side = tg__producer_side_stream (launch->producer, launch->depth, error))
             == NULL)
    return FALSE;
  /* Inside a body of ours captured in segments, the node goes into the body
   * between two segments, its handle made on the body (body.c).  One handle
   * per node: the driver refuses a handle a second node uses. */
  if (!tg__body_new_handle (launch->body, launch->stream, &handle, error))
    return FALSE;
  d.handle = handle;
  if (!decide (launch, c, &d, data, error)
      || !(in_segments ? tg__body_add_conditional (launch->body, handle,
                                                   node_type (c->kind), c->n_bodies,
                                                   bodies, error)
                       : tg__capture_add_conditional (launch->stream, handle,
                                                      node_type (c->kind), c->n_bodies,
                                                      bodies, error)))
    return FALSE;
  for (guint i = 0; i < c->n_bodies; i++)
    if (!capture_body (launch, c, side, bodies[i], i, &d, data, error))
      return FALSE;
  return TRUE;
}

/* Eagerly: decides @c (its entry, for a loop) and waits for the value. */
static gboolean
decided (const TgLaunch *launch, const Conditional *c, gpointer data, guint32 *value,
         GError **error)
{
  TgProducer *p = launch->producer;
  TgDeviceCondition d;

  if (!tg__decision_open (p, &d, error))
    return FALSE;
  if (!decide (launch, c, &d, data, error))
    {
      tg__decision_abandon (p, launch->stream);
      return FALSE;
    }
  return tg__decision_wait (p, launch->stream, &d, writer_of (c, TRUE), value, error);
}

/* Eagerly: runs the body the decision selects, if any. */
static gboolean
eager (const TgLaunch *launch, const Conditional *c, gpointer data, GError **error)
{
  guint32 value = 0;
  TgLaunch inner;
  guint i;

  if (!decided (launch, c, data, &value, error))
    return FALSE;
  /* As the node reads it: an IF runs body 0 on non-zero, else body 1; a
   * SWITCH runs body @value. */
  i = c->kind == COND_IF ? (value != 0 ? 0 : 1) : value;
  if (i >= c->n_bodies)
    return TRUE;
  inner = body_launch (launch, c, i);
  return c->bodies[i](&inner, data, error);
}

/* Eagerly: the entry, then one iteration at a time while the device says
 * so.  The entry kernel and tg_loop_next() keep the status on the device as
 * the WHILE node's do; the host only learns whether to go on. */
static gboolean
eager_loop (const TgLaunch *launch, const Conditional *c, gpointer data, GError **error)
{
  TgProducer *p = launch->producer;
  TgLaunch inner = body_launch (launch, c, 0);
  TgDeviceLoop loop;
  guint32 go = 1;

  /* An entry without a flag always goes on: nothing to wait for. */
  if (c->flag == NULL ? !decide (launch, c, &no_condition, data, error)
                      : !decided (launch, c, data, &go, error))
    return FALSE;
  while (go != 0)
    {
      TgDeviceCondition next;

      if (!tg__decision_open (p, &next, error))
        return FALSE;
      loop = loop_of (c, &next);
      inner.loop = c->by_body ? &loop : NULL;
      if (!c->bodies[0](&inner, data, error)
          || (!c->by_body
              && !TG_CUDA_OK (tg__launch_loop_tail (launch->stream, loop, c->flag),
                              error)))
        {
          tg__decision_abandon (p, launch->stream);
          return FALSE;
        }
      if (!tg__decision_wait (p, launch->stream, &next, writer_of (c, FALSE), &go,
                              error))
        return FALSE;
    }
  return TRUE;
}

gboolean
tg__condition_if (const TgLaunch *launch, const gint32 *flag, TgDeviceFunc decide,
                  TgDeviceFunc body, TgDeviceFunc otherwise, gpointer data,
                  GError **error)
{
  const TgDeviceFunc bodies[2] = { body, otherwise };
  Conditional c = { .kind = COND_IF,
                    .what = "condition",
                    .flag = flag,
                    .decide = decide,
                    .n_bodies = otherwise != NULL ? 2 : 1,
                    .bodies = bodies };

  return launch->capturing ? captured (launch, &c, data, error)
                           : eager (launch, &c, data, error);
}

gboolean
tg__condition_switch (const TgLaunch *launch, const gint32 *index, TgDeviceFunc decide,
                      guint n_cases, const TgDeviceFunc *cases, gpointer data,
                      GError **error)
{
  Conditional c = { .kind = COND_SWITCH,
                    .what = "switch",
                    .flag = index,
                    .decide = decide,
                    .n_bodies = n_cases,
                    .bodies = cases };

  return launch->capturing ? captured (launch, &c, data, error)
                           : eager (launch, &c, data, error);
}

gboolean
tg__condition_while (const TgLaunch *launch, const gint32 *flag, gboolean by_body,
                     guint max_iters, TgLoopStatus *status, TgDeviceFunc body,
                     gpointer data, GError **error)
{
  Conditional c = { .kind = COND_WHILE,
                    .what = "loop",
                    .flag = flag,
                    .by_body = by_body,
                    .n_bodies = 1,
                    .bodies = &body,
                    .max_iters = max_iters,
                    .status = status };

  return launch->capturing ? captured (launch, &c, data, error)
                           : eager_loop (launch, &c, data, error);
}
