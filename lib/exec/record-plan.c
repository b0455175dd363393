/* SPDX-License-Identifier: Apache-2.0 */
/* record-plan.c: RECORD's units.  In a call that records conditional nodes
 * of TrackGen's, each stage function (a stage, its else branch, a switch
 * case, a loop body) is a unit: the trial (pass 1) captures its work on its
 * own stream into a graph of its own; the second pass places that graph
 * where the function ran, as a child graph node, or calls the function
 * again when its work cannot be a child.  See record.c for the passes. */
#include "config.h"
#include "record-plan-private.h"
#include "resource-private.h"

/* What the trial learnt of one unit, in the order the trial met them. */
typedef struct
{
  /* The unit's work, owned until the second pass places it; NULL when the
   * unit enqueued nothing, or must be called again. */
  cudaGraph_t graph;
  gboolean again; /* the second pass calls the function again */
  gboolean moved; /* the second pass moved the graph into a capture */
} Unit;

static void
unit_clear (gpointer data)
{
  tg__graph_free (((Unit *)data)->graph);
}

void
tg__record_plan_init (TgRecordPlan *plan, gboolean units, gboolean into_body)
{
  *plan = (TgRecordPlan){ .pass = 1, .into_body = into_body };
  if (units)
    {
      plan->units = g_array_new (FALSE, FALSE, sizeof (Unit));
      g_array_set_clear_func (plan->units, unit_clear);
    }
}

void
tg__record_plan_clear (TgRecordPlan *plan)
{
  g_clear_pointer (&plan->units, g_array_unref);
}

/* The trial: @func's work captured on its own and checked; it stays out of
 * the trial graph, which is never placed in the caller's capture. */
static gboolean
unit_trial (const TgLaunch *launch, TgDeviceFunc func, gpointer data, GError **error)
{
  TgRecordPlan *plan = launch->plan;
  cudaStream_t stream = tg__producer_unit_stream (launch->producer, error);
  g_autoptr (GError) broke = NULL;
  Unit unit = { NULL, FALSE, FALSE };
  TgLaunch inner = *launch;
  TgCaptureInfo info;
  gboolean ok, ended, child = FALSE;
  size_t n = 0;

  if (stream == NULL || !tg__capture_begin (stream, launch->mode, error))
    return FALSE;
  ok = tg__capture_query (stream, &info, error);
  inner.stream = stream;
  inner.capture_id = info.id;
  inner.capture_graph = info.graph;
  inner.body = NULL;
  ok = ok && func (&inner, data, error);
  /* A refusal the function saw is its error; one only the capture saw is
   * said here. */
  ended = tg__capture_end (stream, &unit.graph, ok ? &broke : NULL);
  if (ok && !ended)
    {
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                     "%s; it cannot be captured, and nothing was recorded",
                     broke->message);
      ok = FALSE;
    }
  ok = ok
       && ((launch->depth == 0 && !plan->into_body)
           || tg__capture_check_body (unit.graph, "the stage's work", error))
       && tg__capture_embeddable (unit.graph, &child, error)
       && TG_CUDA_OK (cudaGraphGetNodes (unit.graph, NULL, &n), error);
  if (!ok || !child || n == 0)
    {
      unit.again = ok && !child;
      g_clear_pointer (&unit.graph, tg__graph_free);
    }
  if (ok)
    g_array_append_val (plan->units, unit);
  return ok;
}

/* The second pass: the unit's work from the trial, or the function again. */
static gboolean
unit_recorded (const TgLaunch *launch, TgDeviceFunc func, gpointer data, GError **error)
{
  TgRecordPlan *plan = launch->plan;
  Unit *unit;

  if (plan->next >= plan->units->len)
    {
      /* The stages are fixed, so both passes meet the same units. */
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED,
                     "the second pass of RECORD met more stage functions than the "
                     "trial did");
      return FALSE;
    }
  unit = &g_array_index (plan->units, Unit, plan->next++);
  if (unit->again)
    return func (launch, data, error);
  if (unit->graph == NULL)
    return TRUE;
  if (!tg__capture_embed (launch->stream, &unit->graph, error))
    return FALSE;
  unit->moved = unit->graph == NULL;
  return TRUE;
}

guint
tg__record_plan_mark (const TgLaunch *launch)
{
  const TgRecordPlan *plan = launch->plan;

  if (plan == NULL || plan->units == NULL)
    return 0;
  return plan->pass == 1 ? plan->units->len : plan->next;
}

void
tg__record_plan_rewind (const TgLaunch *launch, guint mark)
{
  TgRecordPlan *plan = launch->plan;

  if (plan == NULL || plan->units == NULL)
    return;
  if (plan->pass == 1)
    {
      /* The trial learns them anew. */
      g_array_set_size (plan->units, mark);
      return;
    }
  /* A graph moved into the discarded capture is gone with it: its function
   * records its work again. */
  for (guint i = mark; i < plan->next; i++)
    {
      Unit *unit = &g_array_index (plan->units, Unit, i);

      unit->again = unit->again || unit->moved;
    }
  plan->next = mark;
}

gboolean
tg__record_unit (const TgLaunch *launch, TgDeviceFunc func, gpointer data,
                 GError **error)
{
  if (launch->plan == NULL || launch->plan->units == NULL)
    return func (launch, data, error);
  return launch->plan->pass == 1 ? unit_trial (launch, func, data, error)
                                 : unit_recorded (launch, func, data, error);
}
