/* SPDX-License-Identifier: Apache-2.0 */
/* stages.c: the stage walker and the trial capture of stages into a graph
 * of the producer's own.  See stages-private.h. */
#include "config.h"
#include "check-private.h"
#include "condition-private.h"
#include "nvtx-private.h"
#include "record-plan-private.h"
#include "resource-private.h"
#include "stages-private.h"

/* The stage functions of stage @data, each called as a unit of RECORD
 * (record-plan-private.h). */
static gboolean
host_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  const TgStage *stage = data;
  TgHostOps ops = { launch };

  return stage->host (&ops, stage->user_data, error);
}

static gboolean
host_unit (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg__record_unit (launch, host_stage, data, error);
}

static gboolean
device_unit (const TgLaunch *launch, gpointer data, GError **error)
{
  const TgStage *stage = data;

  return tg__record_unit (launch, stage->device, stage->user_data, error);
}

static gboolean
else_unit (const TgLaunch *launch, gpointer data, GError **error)
{
  const TgStage *stage = data;

  return tg__record_unit (launch, stage->otherwise, stage->user_data, error);
}

/* A switch stage's case: the body launch says which. */
static gboolean
case_unit (const TgLaunch *launch, gpointer data, GError **error)
{
  const TgStage *stage = data;

  return tg__record_unit (launch, stage->cases[launch->switch_case], stage->user_data,
                          error);
}

static gboolean
run_switch (const TgLaunch *launch, const TgStage *stage, GError **error)
{
  const gint32 *index = tg__producer_binding (launch->producer, stage->index, NULL);
  g_autofree TgDeviceFunc *cases = NULL;

  /* Only RECORD makes units of the cases: the other policies' calls take
   * the cases themselves, with no allocation. */
  if (launch->plan == NULL)
    return tg__condition_switch (launch, index, NULL, stage->n_cases, stage->cases,
                                 stage->user_data, error);
  cases = g_new (TgDeviceFunc, stage->n_cases);
  for (guint i = 0; i < stage->n_cases; i++)
    cases[i] = case_unit;
  return tg__condition_switch (launch, index, NULL, stage->n_cases, cases,
                               (gpointer)stage, error);
}

/* One stage (@data), as a TgDeviceFunc so that a stage's own condition can
 * run it as its body.  @launch names the stage already. */
static gboolean
run_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  const TgStage *stage = data;

  switch (stage->kind)
    {
    case TG_STAGE_KIND_HOST:
      if (launch->capturing && launch->depth > 0)
        {
          tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                         "a HOST stage cannot sit inside a captured condition or loop "
                         "(the driver rejects host nodes in conditional bodies): move "
                         "it out of the condition, or run the producer eagerly");
          return FALSE;
        }
      return host_unit (launch, data, error);
    case TG_STAGE_KIND_LOOP:
      /* A body that decides its loop is no unit: its kernels hold the
       * handle of the node they were captured for. */
      return tg__condition_while (
          launch,
          stage->loop_flag != NULL
              ? tg__producer_binding (launch->producer, stage->loop_flag, NULL)
              : NULL,
          stage->loop_by_body, stage->max_iters,
          tg__producer_binding (launch->producer, stage->loop_status, NULL),
          stage->loop_by_body ? stage->device : device_unit,
          stage->loop_by_body ? stage->user_data : data, error);
    case TG_STAGE_KIND_SWITCH:
      return run_switch (launch, stage, error);
    case TG_STAGE_KIND_DEVICE:
    default:
      return device_unit (launch, data, error);
    }
}

/* RECORD: a stage that made a call the caller's capture forbids has already
 * invalidated it, and CUDA says so only through that capture.  Checked after
 * every stage so the error can name the stage. */
static gboolean
caller_intact (const TgLaunch *launch, GError **error)
{
  TgCaptureInfo info;

  if (launch->caller == NULL || !tg__capture_query (launch->caller, &info, error))
    return launch->caller == NULL;
  if (info.state == TG_CAPTURE_ACTIVE)
    return TRUE;
  tg__set_error (
      error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED,
      "the stage broke the caller's capture on stream %p: it made a call that a "
      "capture forbids (cudaMalloc, cudaFree, cudaFreeHost, cudaEventQuery, a "
      "synchronous cudaMemcpy, a synchronization) or launched work on the legacy "
      "default stream; end that capture with cudaStreamEndCapture and capture again, "
      "and make the stage only enqueue work on tg_launch_get_stream()",
      (void *)launch->caller);
  return FALSE;
}

/* Under a capture of TrackGen's (REPLAY's own graph, RECORD's trial, a
 * body's segment), a stage that broke the capture of its work and said
 * nothing (a synchronize whose error it ignored) is named here, after it
 * ran: the driver says so only when that capture ends, after the stage. */
static gboolean
work_intact (const TgLaunch *launch, GError **error)
{
  TgCaptureInfo info;

  if (!launch->capturing || launch->stream == launch->caller)
    return TRUE;
  if (!tg__capture_query (launch->stream, &info, error))
    return FALSE;
  if (info.state == TG_CAPTURE_ACTIVE)
    return TRUE;
  tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                 "the stage broke the capture of its own work: it made a call that a "
                 "capture forbids (a synchronization, cudaMalloc, cudaFree, a "
                 "synchronous cudaMemcpy) or launched work on the legacy default "
                 "stream; make it only enqueue work on tg_launch_get_stream()");
  return FALSE;
}

static gboolean
run_range (const TgLaunch *base, gpointer data, GError **error)
{
  const TgStagesCall *call = data;
  const TgProducer *p = base->producer;
  TgLaunch launch = *base;

  for (guint i = call->first; i < call->first + call->n; i++)
    {
      const TgStage *stage = tg__producer_stage (p, i);
      GError *local = NULL, *broken = NULL;
      gboolean ok, checked, ranged = tg__nvtx_push (p->name, stage->name);

      launch.stage = stage;
      checked = tg__check_enter (&launch);
      if (stage->condition != NULL)
        ok = tg__condition_if (
            &launch, tg__producer_binding (p, stage->condition, NULL), NULL, run_stage,
            stage->otherwise != NULL ? else_unit : NULL, (gpointer)stage, &local);
      else
        ok = run_stage (&launch, (gpointer)stage, &local);
      ok = tg__check_leave (checked, &launch, ok, &local);
      tg__nvtx_pop (ranged);
      if (!caller_intact (&launch, &broken))
        {
          /* What broke the caller's capture matters more than what the stage
           * saw after it (its own launches fail once a capture is broken). */
          if (local != NULL)
            {
              GError *both = g_error_new (broken->domain, broken->code,
                                          "%s (the stage itself reported: %s)",
                                          broken->message, local->message);
              g_error_free (broken);
              broken = both;
            }
          g_clear_error (&local);
          local = g_steal_pointer (&broken);
          ok = FALSE;
        }
      else if (ok && !work_intact (&launch, &local))
        ok = FALSE;
      if (!ok)
        {
          if (local == NULL)
            {
              /* A stage's contract: FALSE comes with an error. */
              g_critical ("producer '%s', stage '%s' failed without setting an error",
                          p->name, stage->name);
              local = g_error_new_literal (TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                                           "the stage failed without setting an error");
            }
          /* A binding named by a nested producer's error is not this one's. */
          tg_error_set_fields (local, p->name, stage->name,
                               g_strcmp0 (tg_error_get_producer (local), p->name) == 0
                                   ? tg_error_get_binding (local)
                                   : NULL);
          g_propagate_prefixed_error (
              error, local, "producer '%s', stage '%s': ", p->name, stage->name);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
tg__stages_call (const TgLaunch *launch, gpointer data, GError **error)
{
  const TgStagesCall *call = data;

  if (call->flag != NULL)
    return tg__condition_if (launch, call->flag, NULL, run_range, NULL, data, error);
  return run_range (launch, data, error);
}

gboolean
tg__stages_capture (TgProducer *p, const TgLaunch *base,
                    enum cudaStreamCaptureMode mode, TgDeviceFunc body, gpointer data,
                    cudaGraph_t *graph, GError **error)
{
  cudaStream_t stream = tg__producer_private_stream (p, error);
  g_autoptr (GError) trial = NULL;
  g_autoptr (GError) broke = NULL;
  TgLaunch launch = *base;
  TgCaptureInfo info;
  gboolean ok, ended, caller_broken;

  *graph = NULL;
  if (stream == NULL || !tg__capture_begin (stream, mode, error))
    return FALSE;
  ok = tg__capture_query (stream, &info, &trial);
  launch.stream = stream;
  launch.capturing = TRUE;
  launch.capture_id = info.id;
  launch.capture_graph = info.graph;
  launch.body = NULL;
  launch.mode = mode;
  ok = ok && body (&launch, data, &trial);
  ended = tg__capture_end (stream, graph, &broke);
  caller_broken = g_error_matches (trial, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED);
  if (!caller_broken && (!ended || tg__capture_is_refusal (trial)))
    {
      /* A stage's error names the producer already. */
      g_autofree char *why = trial != NULL ? g_strdup (trial->message)
                                           : g_strdup_printf ("producer '%s': %s",
                                                              p->name, broke->message);
      tg__set_error_about (error,
                           trial != NULL ? tg_error_get_producer (trial) : p->name,
                           trial != NULL ? tg_error_get_stage (trial) : NULL,
                           trial != NULL ? tg_error_get_binding (trial) : NULL,
                           TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                           "%s; it cannot be captured, and nothing was recorded", why);
      ok = FALSE;
    }
  else if (!ok)
    g_propagate_error (error, g_steal_pointer (&trial));
  if (!ok)
    g_clear_pointer (graph, tg__graph_free);
  return ok;
}
