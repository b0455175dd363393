/* SPDX-License-Identifier: Apache-2.0 */
/* run.c: one call of a producer: stream resolution, policy, and the EAGER
 * path (RECORD is record.c, REPLAY runner.c, the stage walker stages.c). */
#include "config.h"
#include "nvtx-private.h"
#include "policy-private.h"
#include "record-private.h"
#include "resource-private.h"
#include "runner-private.h"
#include "scope-private.h"
#include "stages-private.h"
#include "stream-private.h"

typedef struct
{
  cudaStream_t stream;
  TgCaptureInfo capture;
  TgPolicy policy;
  /* The registered capture this call records into, or NULL; or
   * @ambient_scope, for the ambient stream's capture that none registered. */
  TgScope *scope;
  TgScope ambient_scope;
} Resolution;

static GError *
stage_refusal (const TgProducer *p, const TgStage *stage, const char *into)
{
  GError *e;

  if (stage->flags & TG_STAGE_LEGACY_STREAM)
    e = g_error_new (TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_LEGACY_PLUGIN_STREAM,
                     "producer '%s', stage '%s' launches on the legacy default "
                     "stream, so its work would escape %s: port it to launch on "
                     "tg_launch_get_stream(), or run the producer eagerly on "
                     "cudaStreamLegacy outside any capture",
                     p->name, stage->name, into);
  else
    e = g_error_new (TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                     "producer '%s', stage '%s' is not capture-safe, so it cannot "
                     "be captured into %s: run the producer outside a capture "
                     "(TG_POLICY_AUTO picks EAGER), or declare the stage "
                     "TG_STAGE_CAPTURE_SAFE if it only enqueues work",
                     p->name, stage->name, into);
  tg_error_set_fields (e, p->name, stage->name, NULL);
  return e;
}

/* Fixes the stages and derives, once, what the policy needs from them.  A
 * failure to ask the driver what it supports fails the call and leaves the
 * producer unsealed, so the next call asks again. */
static G_GNUC_NO_INLINE gboolean
seal_stages (TgProducer *p, GError **error)
{
  gboolean uses_conditions = FALSE, uses_else_switch = FALSE;
  GError *missing = NULL;

  for (guint i = 0; i < p->stages->len; i++)
    {
      const TgStage *stage = tg__producer_stage (p, i);

      uses_conditions |= stage->condition != NULL || stage->kind == TG_STAGE_KIND_LOOP;
      uses_else_switch
          |= stage->otherwise != NULL || stage->kind == TG_STAGE_KIND_SWITCH;
    }
  /* What every conditional call needs; what the stages need on top. */
  if ((!tg__capture_conditionals_supported (TG_CONDITIONAL_IF_WHILE, &missing)
       || (uses_else_switch
           && !tg__capture_conditionals_supported (TG_CONDITIONAL_ELSE_SWITCH,
                                                   &missing)))
      && missing->domain == TG_CUDA_ERROR)
    {
      g_propagate_error (error, missing);
      return FALSE;
    }
  p->no_conditionals = missing;
  p->sealed = TRUE;
  for (guint i = 0; i < p->stages->len; i++)
    {
      const TgStage *stage = tg__producer_stage (p, i);
      gboolean safe = (stage->flags & TG_STAGE_CAPTURE_SAFE)
                      && !(stage->flags & TG_STAGE_LEGACY_STREAM);

      if (stage->kind == TG_STAGE_KIND_HOST && p->first_host == NULL)
        p->first_host = stage;
      if ((stage->flags & TG_STAGE_LEGACY_STREAM) && p->legacy == NULL)
        p->legacy = stage;
      if (!safe && stage->kind != TG_STAGE_KIND_HOST && p->replay_refusal == NULL)
        p->replay_refusal = stage_refusal (p, stage, "a graph");
      if (!safe && p->record_refusal == NULL)
        p->record_refusal = stage_refusal (p, stage, "the caller's capture");
    }
  if (p->no_conditionals != NULL && (uses_conditions || uses_else_switch))
    {
      if (p->replay_refusal == NULL)
        p->replay_refusal = g_error_copy (p->no_conditionals);
      if (p->record_refusal == NULL)
        p->record_refusal = g_error_copy (p->no_conditionals);
    }
  p->refused
      = p->legacy != NULL || p->record_refusal != NULL || p->replay_refusal != NULL;
  return TRUE;
}

static gboolean
seal (TgProducer *p, GError **error)
{
  return G_LIKELY (p->sealed) || seal_stages (p, error);
}

static gboolean
check_legacy (const TgProducer *p, const Resolution *r, GError **error)
{
  const TgStage *legacy = p->legacy;

  if (legacy == NULL)
    return TRUE;
  if (r->stream != cudaStreamLegacy)
    {
      g_autofree char *into = g_strdup_printf (r->capture.state == TG_CAPTURE_NONE
                                                   ? "stream %p"
                                                   : "the capture on stream %p",
                                               (void *)r->stream);
      g_propagate_error (error, stage_refusal (p, legacy, into));
      return FALSE;
    }
  if (r->capture.state == TG_CAPTURE_IMPLICIT)
    {
      g_propagate_error (
          error, stage_refusal (p, legacy,
                                "into the capture in progress on a blocking stream, "
                                "invalidating it"));
      return FALSE;
    }
  return TRUE;
}

/* The capture RECORD goes into: its registered scope, else, on the ambient
 * stream, one made for the call, so that its graph retains the producer as
 * a registered capture's would. */
static TgScope *
record_scope (Resolution *r, gboolean ambient)
{
  TgScope *scope = tg__scope_find (r->capture.id, r->capture.graph, r->stream);

  if (scope != NULL)
    r->capture.id = scope->capture_id; /* a pause and resume gave it another */
  if (scope != NULL || !ambient)
    return scope;
  r->ambient_scope = (TgScope){ .stream = r->stream,
                                .mode = cudaStreamCaptureModeGlobal,
                                .capture_id = r->capture.id,
                                .thread = g_thread_self (),
                                .recorded = tg__scope_retain };
  return &r->ambient_scope;
}

static gboolean
resolve (TgProducer *p, const TgCallStream *call, TgPolicy requested,
         TgCondition condition, Resolution *r, GError **error)
{
  /* Read only when seal() found one, so that a plain producer's call reads
   * nothing past the producer's first cache line. */
  const GError *record_refusal = p->refused ? p->record_refusal : NULL;
  const GError *replay_refusal = p->refused ? p->replay_refusal : NULL;
  g_autoptr (GError) host_in_condition = NULL;
  TgStreamRule rule = { call, p->bound,
                        requested == TG_POLICY_EAGER    ? TG_STREAM_USE_EAGER
                        : requested == TG_POLICY_REPLAY ? TG_STREAM_USE_REPLAY
                                                        : TG_STREAM_USE_RECORD,
                        p->name };
  gboolean ambient;

  if ((r->stream = tg__stream_resolve (&rule, p->device, &r->capture, &ambient, error))
          == NULL
      || (p->refused && !check_legacy (p, r, error)))
    return FALSE;
  if (condition.flag != NULL && record_refusal == NULL)
    {
      if (p->first_host != NULL && r->capture.state == TG_CAPTURE_ACTIVE)
        {
          record_refusal = host_in_condition = g_error_new (
              TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
              "a conditional call of producer '%s' cannot be recorded: its HOST stage "
              "'%s' would sit inside the condition's body, which cannot hold host "
              "work",
              p->name, p->first_host->name);
          tg_error_set_fields (host_in_condition, p->name, p->first_host->name, NULL);
        }
      else if (p->first_host == NULL)
        record_refusal = p->no_conditionals;
    }
  if (condition.flag != NULL && replay_refusal == NULL && p->first_host == NULL)
    replay_refusal = p->no_conditionals;

  if (!tg__policy_decide (requested, r->capture.state, record_refusal, replay_refusal,
                          &r->policy, error))
    return FALSE;
  r->scope = r->policy == TG_POLICY_RECORD ? record_scope (r, ambient) : NULL;
  return TRUE;
}

static gboolean
binding_bound (const TgProducer *p, const TgStage *stage, const TgUse *use,
               GError **error)
{
  gsize size = 0;

  if (tg__producer_binding (p, use->name, &size) != NULL && size >= use->min_size)
    return TRUE;
  tg__set_error_about (
      error, p->name, stage->name, use->name, TG_STATE_ERROR, TG_STATE_ERROR_UNBOUND,
      "producer '%s', stage '%s' uses binding '%s', which is %s: bind at "
      "least %" G_GSIZE_FORMAT " bytes of device memory to it with "
      "tg_producer_bind()",
      p->name, stage->name, use->name, size == 0 ? "not bound" : "too small",
      use->min_size);
  return FALSE;
}

/* A loop whose status write lands on its flag stops after one iteration. */
static gboolean
loop_bindings_apart (const TgProducer *p, const TgStage *stage, GError **error)
{
  gconstpointer flag, status;

  if (stage->loop_flag == NULL)
    return TRUE;
  flag = tg__producer_binding (p, stage->loop_flag, NULL);
  status = tg__producer_binding (p, stage->loop_status, NULL);
  if (!tg__ranges_overlap (flag, sizeof (gint32), status, sizeof (TgLoopStatus)))
    return TRUE;
  tg__set_error_about (
      error, p->name, stage->name, stage->loop_flag, TG_STATE_ERROR,
      TG_STATE_ERROR_OVERLAP,
      "producer '%s', loop stage '%s': its flag binding '%s' (%p) and its "
      "status binding '%s' (%p) overlap, so the status write would clear "
      "the flag after one iteration; bind separate buffers",
      p->name, stage->name, stage->loop_flag, flag, stage->loop_status, status);
  return FALSE;
}

/* Once per binding generation: walking every stage on each call costs a
 * cache miss per stage, as much as the rest of a REPLAY call. */
static G_GNUC_NO_INLINE gboolean
check_all_bindings (TgProducer *p, GError **error)
{
  for (guint i = 0; i < p->stages->len; i++)
    {
      const TgStage *s = tg__producer_stage (p, i);
      const TgUse implicit[] = {
        { s->condition, sizeof (gint32) },
        { s->loop_flag, sizeof (gint32) },
        { s->loop_status, sizeof (TgLoopStatus) },
        { s->index, sizeof (gint32) },
      };

      for (guint u = 0; u < G_N_ELEMENTS (implicit); u++)
        if (implicit[u].name != NULL && !binding_bound (p, s, &implicit[u], error))
          return FALSE;
      for (guint u = 0; u < s->uses->len; u++)
        if (!binding_bound (p, s, &g_array_index (s->uses, TgUse, u), error))
          return FALSE;
      if (s->kind == TG_STAGE_KIND_LOOP && !loop_bindings_apart (p, s, error))
        return FALSE;
    }
  p->bindings_checked = p->generation + 1;
  return TRUE;
}

static gboolean
check_bindings (TgProducer *p, GError **error)
{
  return G_LIKELY (p->bindings_checked == p->generation + 1)
         || check_all_bindings (p, error);
}

/* The call's condition flag is read on the device: device memory of the
 * producer's device.  Checked once per flag, not on every call. */
static G_GNUC_NO_INLINE gboolean
check_new_flag (TgProducer *p, const gint32 *flag, GError **error)
{
  if (!tg__check_device_buffer ("the call's condition flag", flag, sizeof (gint32),
                                p->device, error))
    return FALSE;
  p->flag_checked = flag;
  return TRUE;
}

static gboolean
check_condition (TgProducer *p, TgCondition condition, GError **error)
{
  return condition.flag == NULL || condition.flag == p->flag_checked
         || check_new_flag (p, condition.flag, error);
}

/* The whole producer under @condition. */
static gboolean
run_body (const TgLaunch *launch, TgCondition condition, GError **error)
{
  TgStagesCall call = { 0, launch->producer->stages->len, condition.flag };

  return tg__stages_call (launch, &call, error);
}

static void
launch_init (TgLaunch *launch, TgProducer *p, const Resolution *r, GPtrArray **kept)
{
  *launch = (TgLaunch){ 0 };
  launch->producer = p;
  launch->switch_case = -1;
  launch->kept = kept;
  launch->stream = r->stream;
  launch->policy = r->policy;
  launch->mode = r->scope != NULL && r->scope->mode == cudaStreamCaptureModeRelaxed
                     ? cudaStreamCaptureModeRelaxed
                     : cudaStreamCaptureModeThreadLocal;
  if (r->policy == TG_POLICY_RECORD)
    {
      launch->capturing = TRUE;
      launch->capture_id = r->capture.id;
      launch->capture_graph = r->capture.graph;
      launch->caller = r->stream;
    }
}

/* Enters @p for a call (its lock, its device) and resolves the call; on
 * failure nothing is left held. */
static gboolean
call_enter (TgProducer *p, const TgCallStream *call, TgPolicy requested,
            TgCondition condition, TgDeviceGuard *guard, Resolution *r, GError **error)
{
  if (!tg__producer_lock (p, error))
    return FALSE;
  if (seal (p, error) && tg__device_enter (guard, p->device, error))
    {
      if (resolve (p, call, requested, condition, r, error))
        return TRUE;
      tg__device_leave (guard);
    }
  tg__producer_unlock (p);
  return FALSE;
}

static void
call_leave (TgProducer *p, TgDeviceGuard *guard)
{
  tg__device_leave (guard);
  tg__producer_unlock (p);
}

/* @requested, a value the caller may compute: a GError naming it. */
static gboolean
check_policy (const TgProducer *p, const char *func, TgPolicy requested, GError **error)
{
  if ((guint)requested <= TG_POLICY_RECORD)
    return TRUE;
  return tg__refuse (error, func, p->name, NULL, NULL, TG_ARGUMENT_ERROR,
                     TG_ARGUMENT_ERROR_OUT_OF_RANGE,
                     "policy: %d is not a TgPolicy; pass TG_POLICY_AUTO, "
                     "TG_POLICY_EAGER, TG_POLICY_REPLAY or TG_POLICY_RECORD",
                     (int)requested);
}

gboolean
tg_producer_resolve_full (TgProducer *producer, const TgCallStream *call,
                          TgPolicy requested, TgCondition condition, TgPolicy *policy,
                          cudaStream_t *resolved, GError **error)
{
  TgDeviceGuard guard;
  Resolution r;

  g_return_val_if_fail (producer != NULL && call != NULL && policy != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!check_policy (producer, G_STRFUNC, requested, error))
    return FALSE;
  if (!call_enter (producer, call, requested, condition, &guard, &r, error))
    {
      tg__error_name_producer (error, producer->name);
      return FALSE;
    }
  call_leave (producer, &guard);
  *policy = r.policy;
  if (resolved != NULL)
    *resolved = r.stream;
  return TRUE;
}

gboolean
tg_producer_resolve (TgProducer *producer, cudaStream_t stream, TgPolicy requested,
                     TgCondition condition, TgPolicy *policy, cudaStream_t *resolved,
                     GError **error)
{
  return tg_producer_resolve_full (producer, &TG_CALL_STREAM (stream), requested,
                                   condition, policy, resolved, error);
}

gboolean
tg_producer_run_full (TgProducer *producer, const TgCallStream *call,
                      TgPolicy requested, TgCondition condition, GError **error)
{
  TgDeviceGuard guard;
  Resolution r;
  TgLaunch launch;
  GPtrArray *kept = NULL;
  gboolean ok = FALSE, ranged;

  g_return_val_if_fail (producer != NULL && call != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!check_policy (producer, G_STRFUNC, requested, error))
    return FALSE;
  if (!call_enter (producer, call, requested, condition, &guard, &r, error))
    {
      tg__error_name_producer (error, producer->name);
      return FALSE;
    }
  ranged = tg__nvtx_push (producer->name, NULL);
  /* The most common call only launches a current own graph: it needs no
   * launch context. */
  if (check_bindings (producer, error) && check_condition (producer, condition, error)
      && (r.policy != TG_POLICY_REPLAY
          || !tg__runner_launch_current (producer, r.stream, condition, &ok, error)))
    {
      /* The thread's registered captures are this call's caller's: a call a
       * stage makes goes where the stage's work goes (its launch context's
       * stream, which a binding passes as the ambient stream), never
       * straight into them. */
      TgScope *registered = tg__scope_hide ();

      launch_init (&launch, producer, &r, &kept);
      switch (r.policy)
        {
        case TG_POLICY_RECORD:
          ok = tg__record (producer, &launch, r.scope, condition, error);
          break;
        case TG_POLICY_REPLAY:
          ok = tg__runner_replay (producer, &launch, condition, error);
          break;
        default:
          ok = run_body (&launch, condition, error);
          break;
        }
      tg__scope_unhide (registered);
    }
  tg__nvtx_pop (ranged);
  call_leave (producer, &guard);
  /* What EAGER stages kept, or what a failed call kept: released once the
   * producer is left (a release is the caller's code). */
  if (kept != NULL)
    g_ptr_array_unref (kept);
  if (!ok)
    tg__error_name_producer (error, producer->name);
  return ok;
}

gboolean
tg_producer_run (TgProducer *producer, cudaStream_t stream, TgPolicy requested,
                 TgCondition condition, GError **error)
{
  return tg_producer_run_full (producer, &TG_CALL_STREAM (stream), requested, condition,
                               error);
}
