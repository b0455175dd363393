/* SPDX-License-Identifier: Apache-2.0 */
/* launch.c: what a stage sees during a call, and the host operations of
 * HOST stages, which refuse under RECORD what a capture cannot hold. */
#include "config.h"
#include "body-private.h"
#include "condition-private.h"
#include "record-plan-private.h"
#include "resource-private.h"

TgProducer *
tg_launch_get_producer (const TgLaunch *launch)
{
  g_return_val_if_fail (launch != NULL, NULL);
  return launch->producer;
}

const char *
tg_launch_get_stage_name (const TgLaunch *launch)
{
  g_return_val_if_fail (launch != NULL, NULL);
  return launch->stage != NULL ? launch->stage->name : NULL;
}

int
tg_launch_get_device (const TgLaunch *launch)
{
  g_return_val_if_fail (launch != NULL, -1);
  return launch->producer->device;
}

cudaStream_t
tg_launch_get_stream (const TgLaunch *launch)
{
  g_return_val_if_fail (launch != NULL, NULL);
  return launch->stream;
}

TgPolicy
tg_launch_get_policy (const TgLaunch *launch)
{
  g_return_val_if_fail (launch != NULL, TG_POLICY_EAGER);
  return launch->policy;
}

gboolean
tg_launch_is_capturing (const TgLaunch *launch)
{
  g_return_val_if_fail (launch != NULL, FALSE);
  return launch->capturing;
}

unsigned long long
tg_launch_get_capture_id (const TgLaunch *launch)
{
  g_return_val_if_fail (launch != NULL, 0);
  return tg__launch_capture_id (launch);
}

cudaGraph_t
tg_launch_get_capture_graph (const TgLaunch *launch)
{
  g_return_val_if_fail (launch != NULL, NULL);
  if (!launch->capturing)
    return NULL;
  if (launch->body != NULL && launch->body->segment != NULL)
    return launch->body->segment;
  return launch->capture_graph;
}

guint
tg_launch_get_depth (const TgLaunch *launch)
{
  g_return_val_if_fail (launch != NULL, 0);
  return launch->depth;
}

guint
tg_launch_get_record_pass (const TgLaunch *launch)
{
  g_return_val_if_fail (launch != NULL, 0);
  return tg__record_pass (launch);
}

gint
tg_launch_get_case (const TgLaunch *launch)
{
  g_return_val_if_fail (launch != NULL, -1);
  return launch->switch_case;
}

static gboolean
declared (const TgStage *stage, const char *name)
{
  const char *implicit[]
      = { stage->condition, stage->loop_flag, stage->loop_status, stage->index };

  for (guint i = 0; i < G_N_ELEMENTS (implicit); i++)
    if (implicit[i] != NULL && g_str_equal (implicit[i], name))
      return TRUE;
  for (guint u = 0; u < stage->uses->len; u++)
    if (g_str_equal (g_array_index (stage->uses, TgUse, u).name, name))
      return TRUE;
  return FALSE;
}

typedef struct
{
  gpointer data;
  GDestroyNotify release;
} Kept;

/* Releases run when a graph dies, maybe during someone's capture. */
static void
kept_free (gpointer item)
{
  Kept *k = item;
  enum cudaStreamCaptureMode mode = tg__relaxed_begin ();

  k->release (k->data);
  tg__relaxed_end (mode);
  g_free (k);
}

GPtrArray *
tg__kept_new (void)
{
  return g_ptr_array_new_with_free_func (kept_free);
}

void
tg_launch_keep (const TgLaunch *launch, gpointer data, GDestroyNotify release)
{
  Kept *k;

  g_return_if_fail (launch != NULL && release != NULL);
  k = g_new (Kept, 1);
  k->data = data;
  k->release = release;
  if (*launch->kept == NULL)
    *launch->kept = tg__kept_new ();
  g_ptr_array_add (*launch->kept, k);
}

gpointer
tg_launch_get_binding (const TgLaunch *launch, const char *name)
{
  g_return_val_if_fail (launch != NULL && name != NULL, NULL);
  /* A typo must not become a NULL that a kernel takes for "all envs". */
  if (launch->stage == NULL || !declared (launch->stage, name))
    {
      g_critical ("%s: stage '%s' of producer '%s' looked up binding '%s', which it "
                  "did not declare; declare it with tg_producer_declare_binding()",
                  G_STRFUNC, launch->stage != NULL ? launch->stage->name : "(none)",
                  launch->producer->name, name);
      return NULL;
    }
  return tg__producer_binding (launch->producer, name, NULL);
}

gsize
tg_launch_get_binding_size (const TgLaunch *launch, const char *name)
{
  gsize size = 0;

  g_return_val_if_fail (launch != NULL && name != NULL, 0);
  /* Undeclared: 0 and no warning, so that a caller may ask whether the stage
   * declared @name (a declared binding is bound with at least a byte). */
  if (launch->stage != NULL && declared (launch->stage, name))
    (void)tg__producer_binding (launch->producer, name, &size);
  return size;
}

/* A flag, index or status a stage passes: read on the device, so it must be
 * device memory of the producer's device, large enough. */
static gboolean
check_device_word (const TgLaunch *launch, const char *what, gconstpointer ptr,
                   gsize size, GError **error)
{
  return tg__check_device_buffer (what, ptr, size, launch->producer->device, error);
}

TgDeviceCondition
tg_launch_get_condition (const TgLaunch *launch)
{
  const TgDeviceCondition none = { .how = TG_DEVICE_CONDITION_NONE };

  g_return_val_if_fail (launch != NULL, none);
  if (launch->condition == NULL)
    {
      g_critical ("%s: stage '%s' of producer '%s' asked for a condition outside "
                  "the decide function of tg_launch_if_by() or tg_launch_switch_by(): "
                  "there is none to set",
                  G_STRFUNC, launch->stage != NULL ? launch->stage->name : "(none)",
                  launch->producer->name);
      return none;
    }
  return *launch->condition;
}

TgDeviceLoop
tg_launch_get_loop (const TgLaunch *launch)
{
  const TgDeviceLoop none = { { .how = TG_DEVICE_CONDITION_NONE }, NULL, 0 };

  g_return_val_if_fail (launch != NULL, none);
  if (launch->loop == NULL)
    {
      g_critical ("%s: stage '%s' of producer '%s' asked for a loop outside the body "
                  "of a loop its body decides (tg_launch_while_by(), a loop stage "
                  "with set_by_body): there is none to continue",
                  G_STRFUNC, launch->stage != NULL ? launch->stage->name : "(none)",
                  launch->producer->name);
      return none;
    }
  return *launch->loop;
}

gboolean
tg_launch_if (const TgLaunch *launch, TgCondition condition, TgDeviceFunc body,
              gpointer user_data, GError **error)
{
  g_return_val_if_fail (launch != NULL && body != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (condition.flag == NULL)
    return body (launch, user_data, error);
  return check_device_word (launch, "the condition's flag", condition.flag,
                            sizeof (gint32), error)
         && tg__condition_if (launch, condition.flag, NULL, body, NULL, user_data,
                              error);
}

gboolean
tg_launch_if_by (const TgLaunch *launch, TgDeviceFunc decide, TgDeviceFunc then_body,
                 TgDeviceFunc else_body, gpointer user_data, GError **error)
{
  g_return_val_if_fail (launch != NULL && decide != NULL && then_body != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  return tg__condition_if (launch, NULL, decide, then_body, else_body, user_data,
                           error);
}

gboolean
tg_launch_if_else (const TgLaunch *launch, TgCondition condition,
                   TgDeviceFunc then_body, TgDeviceFunc else_body, gpointer user_data,
                   GError **error)
{
  g_return_val_if_fail (launch != NULL, FALSE);
  g_return_val_if_fail (then_body != NULL && else_body != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (condition.flag == NULL)
    return then_body (launch, user_data, error);
  return check_device_word (launch, "the condition's flag", condition.flag,
                            sizeof (gint32), error)
         && tg__condition_if (launch, condition.flag, NULL, then_body, else_body,
                              user_data, error);
}

/* A switch of no case, a count a stage computes: a GError naming it.  The
 * stage's call prefixes the producer and the stage, and sets those fields,
 * as for every error of a stage. */
static gboolean
check_n_cases (const char *func, guint n_cases, GError **error)
{
  if (n_cases >= 1)
    return TRUE;
  return tg__refuse (error, func, NULL, NULL, NULL, TG_ARGUMENT_ERROR,
                     TG_ARGUMENT_ERROR_EMPTY, "n_cases: 0; pass at least one case");
}

gboolean
tg_launch_switch (const TgLaunch *launch, const gint32 *index, guint n_cases,
                  const TgDeviceFunc *cases, gpointer user_data, GError **error)
{
  g_return_val_if_fail (launch != NULL && index != NULL, FALSE);
  g_return_val_if_fail (cases != NULL || n_cases == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  for (guint i = 0; i < n_cases; i++)
    g_return_val_if_fail (cases[i] != NULL, FALSE);
  if (!check_n_cases (G_STRFUNC, n_cases, error))
    return FALSE;
  return check_device_word (launch, "the switch's index", index, sizeof (gint32), error)
         && tg__condition_switch (launch, index, NULL, n_cases, cases, user_data,
                                  error);
}

gboolean
tg_launch_switch_by (const TgLaunch *launch, TgDeviceFunc decide, guint n_cases,
                     const TgDeviceFunc *cases, gpointer user_data, GError **error)
{
  g_return_val_if_fail (launch != NULL && decide != NULL, FALSE);
  g_return_val_if_fail (cases != NULL || n_cases == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  for (guint i = 0; i < n_cases; i++)
    g_return_val_if_fail (cases[i] != NULL, FALSE);
  if (!check_n_cases (G_STRFUNC, n_cases, error))
    return FALSE;
  return tg__condition_switch (launch, NULL, decide, n_cases, cases, user_data, error);
}

/* A loop's flag (may be NULL when its body decides) and status. */
static gboolean
check_loop_words (const TgLaunch *launch, const gint32 *flag,
                  const TgLoopStatus *status, GError **error)
{
  if (flag != NULL && tg__ranges_overlap (flag, sizeof *flag, status, sizeof *status))
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                     "the loop's flag %p and status %p overlap: the status write would "
                     "clear the flag and stop the loop after one iteration; pass "
                     "separate memory",
                     (gconstpointer)flag, (gconstpointer)status);
      return FALSE;
    }
  return (flag == NULL
          || check_device_word (launch, "the loop's flag", flag, sizeof *flag, error))
         && check_device_word (launch, "the loop's status", status, sizeof *status,
                               error);
}

/* The arguments of a loop a caller can get wrong at run time (the cap, the
 * device words): a GError naming the argument, as the builders report
 * theirs (a critical too when the caller passed no @error); the stage's
 * call names the producer and the stage, as check_n_cases() says. */
static gboolean
check_loop_args (const TgLaunch *launch, const char *func, const gint32 *flag,
                 gboolean flag_needed, guint max_iters, const TgLoopStatus *status,
                 GError **error)
{
  const char *missing = flag_needed && flag == NULL ? "flag"
                        : status == NULL            ? "status"
                                                    : NULL;

  if (missing != NULL)
    return tg__refuse (error, func, NULL, NULL, NULL, TG_ARGUMENT_ERROR,
                       TG_ARGUMENT_ERROR_INVALID,
                       "%s: NULL; pass the loop's %s in device memory", missing,
                       missing);
  if (max_iters < 1 || max_iters > G_MAXINT32)
    return tg__refuse (error, func, NULL, NULL, NULL, TG_ARGUMENT_ERROR,
                       TG_ARGUMENT_ERROR_OUT_OF_RANGE,
                       "max_iters: %u is out of range; pass 1 to %d", max_iters,
                       G_MAXINT32);
  return check_loop_words (launch, flag, status, error);
}

gboolean
tg_launch_while (const TgLaunch *launch, const gint32 *flag, guint max_iters,
                 TgLoopStatus *status, TgDeviceFunc body, gpointer user_data,
                 GError **error)
{
  g_return_val_if_fail (launch != NULL && body != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  return check_loop_args (launch, G_STRFUNC, flag, TRUE, max_iters, status, error)
         && tg__condition_while (launch, flag, FALSE, max_iters, status, body,
                                 user_data, error);
}

gboolean
tg_launch_while_by (const TgLaunch *launch, const gint32 *entry_flag, guint max_iters,
                    TgLoopStatus *status, TgDeviceFunc body, gpointer user_data,
                    GError **error)
{
  g_return_val_if_fail (launch != NULL && body != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  return check_loop_args (launch, G_STRFUNC, entry_flag, FALSE, max_iters, status,
                          error)
         && tg__condition_while (launch, entry_flag, TRUE, max_iters, status, body,
                                 user_data, error);
}

const TgLaunch *
tg_host_ops_get_launch (TgHostOps *ops)
{
  g_return_val_if_fail (ops != NULL, NULL);
  return ops->launch;
}

static gboolean
refuse_under_record (TgHostOps *ops, const char *op, GError **error)
{
  if (!ops->launch->capturing)
    return FALSE;
  tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                 "host operation %s needs a host synchronization, which a capture "
                 "cannot hold: do it in a producer run outside the capture, or use "
                 "tg_host_ops_enqueue()",
                 op);
  return TRUE;
}

gboolean
tg_host_ops_copy_to_host (TgHostOps *ops, gpointer host_dst, gconstpointer device_src,
                          gsize size, GError **error)
{
  g_return_val_if_fail (ops != NULL, FALSE);
  g_return_val_if_fail (size == 0 || (host_dst != NULL && device_src != NULL), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (refuse_under_record (ops, "copy_to_host", error))
    return FALSE;
  return TG_CUDA_OK (cudaMemcpyAsync (host_dst, device_src, size,
                                      cudaMemcpyDeviceToHost, ops->launch->stream),
                     error)
         && tg__stream_synchronize (ops->launch->stream, error);
}

gboolean
tg_host_ops_copy_to_device (TgHostOps *ops, gpointer device_dst, gconstpointer host_src,
                            gsize size, GError **error)
{
  g_return_val_if_fail (ops != NULL, FALSE);
  g_return_val_if_fail (size == 0 || (device_dst != NULL && host_src != NULL), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (ops->launch->capturing)
    {
      struct cudaPointerAttributes attr;
      if (!tg__pointer_attributes (host_src, &attr, error))
        return FALSE;
      if (attr.type != cudaMemoryTypeHost)
        {
          tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                         "host operation copy_to_device from pageable memory %p "
                         "cannot be recorded: every replay reads the source again, "
                         "which needs pinned memory (cudaMallocHost)",
                         host_src);
          return FALSE;
        }
    }
  return TG_CUDA_OK (cudaMemcpyAsync (device_dst, host_src, size,
                                      cudaMemcpyHostToDevice, ops->launch->stream),
                     error);
}

gboolean
tg_host_ops_synchronize (TgHostOps *ops, GError **error)
{
  g_return_val_if_fail (ops != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (refuse_under_record (ops, "synchronize", error))
    return FALSE;
  return tg__stream_synchronize (ops->launch->stream, error);
}

gboolean
tg_host_ops_enqueue (TgHostOps *ops, TgHostCallback func, gpointer user_data,
                     GError **error)
{
  g_return_val_if_fail (ops != NULL && func != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  return TG_CUDA_OK (cudaLaunchHostFunc (ops->launch->stream, func, user_data), error);
}
