/* SPDX-License-Identifier: Apache-2.0 */
/* record.c: RECORD.  Every stage is first captured into a graph of the
 * producer's own, the trial, so that a refused call leaves the caller's
 * capture with the nodes it had; the trial then joins the caller's capture
 * as one child graph node.  A graph that holds a conditional node cannot be
 * a child, so a call with a condition, an else branch, a switch or a loop
 * takes a second pass that builds those nodes in the caller's capture.
 *
 * The second pass calls no stage function whose work it already has: in a
 * producer with such conditions, each stage function (a stage, its else
 * branch, a switch case, a loop body) is a unit, captured in the trial on
 * its own stream into a graph of its own, which the second pass places
 * where the function ran, as a child graph node.  A function is called
 * again only when its work cannot be a child (it holds a conditional node
 * or an allocation), or when its kernels decide a node of TrackGen's (a
 * loop whose body calls tg_loop_next()): their handles belong to the graph
 * they were made in.  The units live in record-plan.c, below the stage
 * walker that calls them. */
#include "config.h"
#include "keep-private.h"
#include "record-plan-private.h"
#include "record-private.h"
#include "resource-private.h"
#include "stages-private.h"

/* Whether a call of @p under @condition records conditional nodes of
 * TrackGen's, and so takes the second pass whatever its stages do. */
static gboolean
conditional_call (const TgProducer *p, TgCondition condition)
{
  if (condition.flag != NULL)
    return TRUE;
  for (guint i = 0; i < p->stages->len; i++)
    {
      const TgStage *stage = tg__producer_stage (p, i);

      if (stage->condition != NULL || stage->kind == TG_STAGE_KIND_LOOP
          || stage->kind == TG_STAGE_KIND_SWITCH)
        return TRUE;
    }
  return FALSE;
}

/* What the stages kept (tg_launch_keep) lives as long as the caller's
 * graph, which holds their work.  Tied to it only once something was kept,
 * into the one hold of the caller's capture (tg__keep_retain); *@retained
 * says the list is tied already: what stages keep in the second pass goes
 * to the same list. */
static gboolean
retain_kept (const TgLaunch *base, gboolean *retained, GError **error)
{
  if (*base->kept == NULL || *retained)
    return TRUE;
  *retained = TRUE;
  return tg__keep_retain (base->capture_graph, base->capture_id,
                          g_ptr_array_ref (*base->kept),
                          (GDestroyNotify)g_ptr_array_unref, error);
}

/* The second pass, into the caller's capture itself: CUDA forbids removing
 * nodes from a graph under capture, so a failure half-way could not be
 * undone.  The trial proved every stage records; what only this pass kept
 * is tied to the graph after it. */
static gboolean
record_into_caller (TgProducer *p, const TgLaunch *base, TgStagesCall *call,
                    gboolean *retained, GError **error)
{
  GError *local = NULL;

  base->plan->pass = 2;
  if (tg__stages_call (base, call, &local) && retain_kept (base, retained, &local))
    return TRUE;
  if (g_error_matches (local, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED))
    g_propagate_error (error, local);
  else
    {
      /* The cause's stage, as the stage walker set it (a cause of a domain
       * without fields names it in its message alone). */
      tg__set_error_about (
          error, p->name, tg_error_get_stage (local),
          g_strcmp0 (tg_error_get_producer (local), p->name) == 0
              ? tg_error_get_binding (local)
              : NULL,
          TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED,
          "recording producer '%s' failed after its trial capture succeeded, so "
          "the caller's capture holds part of the call and must be "
          "discarded: %s",
          p->name, local->message);
      g_error_free (local);
    }
  return FALSE;
}

/* RECORD into a capture that its scope says fills a conditional body: the
 * trial capture's work must be what a body can hold, which the driver would
 * say only when the caller's graph is instantiated. */
static gboolean
record_into_body_checked (cudaGraph_t graph, GError **error)
{
  return tg__capture_check_body (graph,
                                 "the call, recorded into a conditional node's body "
                                 "(its capture scope says so, "
                                 "tg_capture_scope_begin_body()),",
                                 error);
}

gboolean
tg__record (TgProducer *p, TgLaunch *base, TgScope *scope, TgCondition condition,
            GError **error)
{
  TgStagesCall call = { 0, p->stages->len, condition.flag };
  TgRecordPlan plan;
  cudaGraph_t graph = NULL;
  gboolean embeddable = FALSE, retained = FALSE, ok;

  tg__record_plan_init (&plan, conditional_call (p, condition),
                        scope != NULL && scope->body);
  base->plan = &plan;
  ok = tg__stages_capture (p, base, base->mode, tg__stages_call, &call, &graph, error)
       && (!plan.into_body || record_into_body_checked (graph, error))
       && tg__capture_embeddable (graph, &embeddable, error)
       && (scope == NULL || scope->recorded (scope, p, base->capture_graph, error));
  ok = ok && retain_kept (base, &retained, error)
       && (embeddable ? tg__capture_embed (base->stream, &graph, error)
                      : record_into_caller (p, base, &call, &retained, error));
  tg__graph_free (graph);
  tg__record_plan_clear (&plan);
  base->plan = NULL;
  if (ok)
    p->captured = TRUE;
  return ok;
}
