/* condition.c: conditions (IF, IF/ELSE), switches and bounded loops (WHILE).
 * Captured, the guarded work is the body graphs of a conditional node,
 * captured on a side stream of the producer (one per nesting depth) with
 * cudaStreamBeginCaptureToGraph, so conditions and loops nest.  Eagerly, the
 * flag, the index or the loop status is read back on the host. */
#include "config.h"
#include "condition-kernels-private.h"
#include "condition-private.h"
#include "resource-private.h"

typedef enum
{
  COND_IF,
  COND_SWITCH,
  COND_WHILE,
} CondKind;

/* A conditional node's kind, bodies, and what drives it. */
typedef struct
{
  CondKind kind;
  const char *what; /* for messages: "condition", "switch", "loop" */
  const gint32 *flag;
  guint n_bodies;
  const TgDeviceFunc *bodies;
  guint max_iters;      /* WHILE */
  TgLoopStatus *status; /* WHILE */
} Conditional;

/* The launch context body @i of @c runs in: one level deeper than
 * @launch's, and in a switch's case @i. */
static TgLaunch
body_launch (const TgLaunch *launch, const Conditional *c, guint i)
{
  TgLaunch inner = *launch;

  inner.depth++;
  if (c->kind == COND_SWITCH)
    inner.switch_case = (gint)i;
  return inner;
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

static cudaError_t
launch_setter (const TgLaunch *launch, const Conditional *c,
               cudaGraphConditionalHandle handle)
{
  switch (c->kind)
    {
    case COND_WHILE:
      return tg__launch_loop_entry (launch->stream, handle, TRUE, c->flag, c->status);
    case COND_SWITCH:
      return tg__launch_switch_set (launch->stream, handle, c->flag);
    case COND_IF:
    default:
      return tg__launch_if_set (launch->stream, handle, c->flag);
    }
}

static gboolean
capture_body (const TgLaunch *launch, const Conditional *c, cudaStream_t side,
              cudaGraph_t body_graph, guint i, cudaGraphConditionalHandle handle,
              gpointer data, GError **error)
{
  g_autofree char *where = c->n_bodies > 1
                               ? g_strdup_printf ("body %u of the %s", i, c->what)
                               : g_strdup_printf ("the %s's body", c->what);
  TgCaptureInfo info;
  TgLaunch inner;
  gboolean ok, ended;

  if (!tg__capture_begin_body (side, body_graph, launch->mode, error))
    return FALSE;
  inner = body_launch (launch, c, i);
  inner.stream = side;
  ok = tg__capture_query (side, &info, error);
  inner.capture_id = info.id;
  inner.capture_graph = body_graph;
  ok = ok && c->bodies[i](&inner, data, error);
  if (ok && c->kind == COND_WHILE)
    ok = TG_CUDA_OK (
        tg__launch_loop_tail (side, handle, TRUE, c->flag, c->status, c->max_iters),
        error);
  /* End the body capture whatever happened: no stream is left capturing.  A
   * refusal raised by the capture itself becomes NOT_CAPTURABLE in
   * tg__stages_capture(), which every captured body runs under first. */
  ended = tg__capture_end_body (side, ok ? error : NULL);
  return ok && ended && tg__capture_finish_body (body_graph, where, error);
}

static gboolean
captured (const TgLaunch *launch, const Conditional *c, gpointer data, GError **error)
{
  TgConditionalKind needs = c->kind == COND_SWITCH || c->n_bodies > 1
                                ? TG_CONDITIONAL_ELSE_SWITCH
                                : TG_CONDITIONAL_IF_WHILE;
  /* A SWITCH node takes any number of bodies. */
  g_autofree cudaGraph_t *bodies = g_new (cudaGraph_t, c->n_bodies);
  cudaGraphConditionalHandle handle;
  cudaStream_t side;

  if (!tg__capture_conditionals_supported (needs, error)
      || (side = tg__producer_side_stream (launch->producer, launch->depth, error))
             == NULL
      || !tg__capture_new_handle (launch->stream, &handle, error)
      || !TG_CUDA_OK (launch_setter (launch, c, handle), error)
      || !tg__capture_add_conditional (launch->stream, handle, node_type (c->kind),
                                       c->n_bodies, bodies, error))
    return FALSE;
  for (guint i = 0; i < c->n_bodies; i++)
    if (!capture_body (launch, c, side, bodies[i], i, handle, data, error))
      return FALSE;
  return TRUE;
}

/* Eagerly: reads the flag or index back and runs the body it selects. */
static gboolean
eager (const TgLaunch *launch, const Conditional *c, gpointer data, GError **error)
{
  gint32 value = 0;
  TgLaunch inner;
  guint i;

  if (!tg__producer_readback (launch->producer, launch->stream, c->flag, sizeof value,
                              &value, error))
    return FALSE;
  if (c->kind == COND_IF)
    i = value != 0 ? 0 : 1;
  else
    i = value >= 0 ? (guint)value : G_MAXUINT;
  if (i >= c->n_bodies)
    return TRUE;
  inner = body_launch (launch, c, i);
  return c->bodies[i](&inner, data, error);
}

gboolean
tg__condition_if (const TgLaunch *launch, const gint32 *flag, TgDeviceFunc body,
                  TgDeviceFunc otherwise, gpointer data, GError **error)
{
  const TgDeviceFunc bodies[2] = { body, otherwise };
  Conditional c
      = { COND_IF, "condition", flag, otherwise != NULL ? 2 : 1, bodies, 0, NULL };

  return launch->capturing ? captured (launch, &c, data, error)
                           : eager (launch, &c, data, error);
}

gboolean
tg__condition_switch (const TgLaunch *launch, const gint32 *index, guint n_cases,
                      const TgDeviceFunc *cases, gpointer data, GError **error)
{
  Conditional c = { COND_SWITCH, "switch", index, n_cases, cases, 0, NULL };

  return launch->capturing ? captured (launch, &c, data, error)
                           : eager (launch, &c, data, error);
}

gboolean
tg__condition_while (const TgLaunch *launch, const gint32 *flag, guint max_iters,
                     TgLoopStatus *status, TgDeviceFunc body, gpointer data,
                     GError **error)
{
  TgProducer *p = launch->producer;
  TgLoopStatus now = { 0, TG_LOOP_END_NONE };
  TgLaunch inner;

  Conditional c = { COND_WHILE, "loop", flag, 1, &body, max_iters, status };

  if (launch->capturing)
    return captured (launch, &c, data, error);
  inner = body_launch (launch, &c, 0);
  if (!TG_CUDA_OK (tg__launch_loop_entry (launch->stream, 0, FALSE, flag, status),
                   error)
      || !tg__producer_readback (p, launch->stream, status, sizeof now, &now, error))
    return FALSE;
  while (now.end == TG_LOOP_END_NONE)
    {
      if (!body (&inner, data, error)
          || !TG_CUDA_OK (
              tg__launch_loop_tail (launch->stream, 0, FALSE, flag, status, max_iters),
              error)
          || !tg__producer_readback (p, launch->stream, status, sizeof now, &now,
                                     error))
        return FALSE;
    }
  return TRUE;
}
