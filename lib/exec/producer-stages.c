/* SPDX-License-Identifier: Apache-2.0 */
/* producer-stages.c: what a producer is set up with before its first run:
 * its stages (the builders and their checks), their conditions and
 * declared bindings; and the bindings themselves, which may change later. */
#include "config.h"
#include "producer-private.h"
#include "resource-private.h"

#include <string.h>

static void
use_clear (gpointer data)
{
  g_free (((TgUse *)data)->name);
}

static gboolean
stage_name_free (const TgProducer *p, const char *name)
{
  for (guint i = 0; i < p->stages->len; i++)
    if (g_str_equal (((TgStage *)p->stages->pdata[i])->name, name))
      return FALSE;
  return TRUE;
}

/* Stages change under the producer's lock, which a first run takes to seal
 * them: setup and the first run never overlap, and a stage added after it
 * is refused, never run unvetted. */
static gboolean
setup_enter (TgProducer *p, const char *func, const char *stage, GError **error)
{
  if (!tg__producer_lock (p, NULL))
    return tg__refuse (error, func, p->name, stage, NULL, TG_STATE_ERROR,
                       TG_STATE_ERROR_BUSY,
                       "the producer is running on this thread; set its stages up "
                       "before its first run");
  if (p->sealed)
    {
      tg__producer_unlock (p);
      return tg__refuse (error, func, p->name, stage, NULL, TG_STATE_ERROR,
                         TG_STATE_ERROR_SEALED,
                         "the producer already ran, so its stages are fixed; set them "
                         "up before its first run");
    }
  return TRUE;
}

static guint
add_stage (TgProducer *p, TgStage *stage, const char *func, GError **error)
{
  guint index = G_MAXUINT;

  if (setup_enter (p, func, stage->name, error))
    {
      if (stage_name_free (p, stage->name))
        {
          g_ptr_array_add (p->stages, stage);
          index = p->stages->len - 1;
        }
      else
        tg__refuse (error, func, p->name, stage->name, NULL, TG_ARGUMENT_ERROR,
                    TG_ARGUMENT_ERROR_DUPLICATE,
                    "an earlier stage has this name; name each stage once");
      tg__producer_unlock (p);
    }
  if (index == G_MAXUINT)
    {
      /* Refused: the caller keeps its data. */
      stage->destroy = NULL;
      tg__stage_free (stage);
    }
  return index;
}

static TgStage *
stage_new (const char *name, TgStageKind kind, TgStageFlags flags, gpointer user_data,
           GDestroyNotify destroy)
{
  TgStage *stage = g_new0 (TgStage, 1);

  stage->name = g_strdup (name);
  stage->kind = kind;
  stage->flags = flags;
  stage->user_data = user_data;
  stage->destroy = destroy;
  stage->uses = g_array_new (FALSE, FALSE, sizeof (TgUse));
  g_array_set_clear_func (stage->uses, use_clear);
  return stage;
}

#define STAGE_FLAGS_ALL (TG_STAGE_CAPTURE_SAFE | TG_STAGE_LEGACY_STREAM)

/* Binding and stage names appear in every message about them: "" would read
 * as a missing word. */
static gboolean
binding_name_valid (const char *name)
{
  return name != NULL && name[0] != '\0';
}

/* What every stage builder checks of its own arguments: @what names the
 * function argument (func, body, cases). */
static gboolean
stage_args_valid (const TgProducer *p, const char *func, const char *name,
                  TgStageFlags flags, TgStageFlags allowed, gconstpointer fn,
                  const char *what, GError **error)
{
  if (!binding_name_valid (name))
    return tg__refuse (error, func, p->name, NULL, NULL, TG_ARGUMENT_ERROR,
                       TG_ARGUMENT_ERROR_INVALID,
                       "a stage name must be a non-empty string");
  if ((flags & ~allowed) != 0)
    return tg__refuse (error, func, p->name, name, NULL, TG_ARGUMENT_ERROR,
                       TG_ARGUMENT_ERROR_INVALID,
                       "flags 0x%x are not valid for this kind of stage (allowed: "
                       "0x%x)",
                       (guint)flags, (guint)allowed);
  if (fn == NULL)
    return tg__refuse (error, func, p->name, name, NULL, TG_ARGUMENT_ERROR,
                       TG_ARGUMENT_ERROR_INVALID, "%s is missing", what);
  return TRUE;
}

guint
tg_producer_add_device_stage (TgProducer *producer, const char *name,
                              TgStageFlags flags, TgDeviceFunc func, gpointer user_data,
                              GDestroyNotify destroy, GError **error)
{
  TgStage *stage;

  g_return_val_if_fail (producer != NULL, G_MAXUINT);
  g_return_val_if_fail (error == NULL || *error == NULL, G_MAXUINT);
  if (!stage_args_valid (producer, G_STRFUNC, name, flags, STAGE_FLAGS_ALL, func,
                         "the stage function", error))
    return G_MAXUINT;
  stage = stage_new (name, TG_STAGE_KIND_DEVICE, flags, user_data, destroy);
  stage->device = func;
  return add_stage (producer, stage, G_STRFUNC, error);
}

guint
tg_producer_add_host_stage (TgProducer *producer, const char *name, TgStageFlags flags,
                            TgHostFunc func, gpointer user_data, GDestroyNotify destroy,
                            GError **error)
{
  TgStage *stage;

  g_return_val_if_fail (producer != NULL, G_MAXUINT);
  g_return_val_if_fail (error == NULL || *error == NULL, G_MAXUINT);
  /* A HOST stage launches nothing itself, so no legacy stream. */
  if (!stage_args_valid (producer, G_STRFUNC, name, flags, TG_STAGE_CAPTURE_SAFE, func,
                         "the host function", error))
    return G_MAXUINT;
  stage = stage_new (name, TG_STAGE_KIND_HOST, flags, user_data, destroy);
  stage->host = func;
  return add_stage (producer, stage, G_STRFUNC, error);
}

static gboolean
loop_valid (const TgProducer *p, const char *name, const TgLoopSpec *loop,
            GError **error)
{
  if (loop == NULL)
    return tg__refuse (error, "tg_producer_add_loop_stage", p->name, name, NULL,
                       TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                       "the loop spec is missing");
  /* A body that decides needs no flag: without one the loop always enters. */
  if (!(loop->set_by_body && loop->flag_binding == NULL)
      && !binding_name_valid (loop->flag_binding))
    return tg__refuse (error, "tg_producer_add_loop_stage", p->name, name, NULL,
                       TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                       "the flag binding must be a non-empty name (it may be missing "
                       "only when the body decides)");
  if (!binding_name_valid (loop->status_binding))
    return tg__refuse (error, "tg_producer_add_loop_stage", p->name, name, NULL,
                       TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                       "the status binding must be a non-empty name");
  /* The status write would overwrite the flag: the loop would stop after one
   * iteration. */
  if (loop->flag_binding != NULL
      && g_str_equal (loop->flag_binding, loop->status_binding))
    return tg__refuse (error, "tg_producer_add_loop_stage", p->name, name,
                       loop->flag_binding, TG_ARGUMENT_ERROR,
                       TG_ARGUMENT_ERROR_DUPLICATE,
                       "the flag binding and the status binding are both '%s': the "
                       "status write would clear the flag; name two bindings",
                       loop->flag_binding);
  /* The iteration counter on the device is a gint32. */
  if (loop->max_iters < 1 || loop->max_iters > G_MAXINT32)
    return tg__refuse (error, "tg_producer_add_loop_stage", p->name, name, NULL,
                       TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE,
                       "max_iters %u is not between 1 and %d", loop->max_iters,
                       G_MAXINT32);
  return TRUE;
}

guint
tg_producer_add_loop_stage (TgProducer *producer, const char *name, TgStageFlags flags,
                            const TgLoopSpec *loop, TgDeviceFunc body,
                            gpointer user_data, GDestroyNotify destroy, GError **error)
{
  TgStage *stage;

  g_return_val_if_fail (producer != NULL, G_MAXUINT);
  g_return_val_if_fail (error == NULL || *error == NULL, G_MAXUINT);
  if (!stage_args_valid (producer, G_STRFUNC, name, flags, STAGE_FLAGS_ALL, body,
                         "the loop body", error)
      || !loop_valid (producer, name, loop, error))
    return G_MAXUINT;
  stage = stage_new (name, TG_STAGE_KIND_LOOP, flags, user_data, destroy);
  stage->device = body;
  stage->loop_flag = g_strdup (loop->flag_binding);
  stage->loop_status = g_strdup (loop->status_binding);
  stage->max_iters = loop->max_iters;
  stage->loop_by_body = loop->set_by_body;
  return add_stage (producer, stage, G_STRFUNC, error);
}

static gboolean
switch_valid (const TgProducer *p, const char *name, const TgSwitchSpec *sw,
              GError **error)
{
  if (!binding_name_valid (sw->index_binding))
    return tg__refuse (error, "tg_producer_add_switch_stage", p->name, name, NULL,
                       TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                       "the index binding must be a non-empty name");
  if (sw->n_cases == 0)
    return tg__refuse (error, "tg_producer_add_switch_stage", p->name, name, NULL,
                       TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_EMPTY,
                       "a switch needs at least one case");
  if (sw->cases == NULL)
    return tg__refuse (error, "tg_producer_add_switch_stage", p->name, name, NULL,
                       TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                       "the array of cases is missing");
  for (guint i = 0; i < sw->n_cases; i++)
    if (sw->cases[i] == NULL)
      return tg__refuse (error, "tg_producer_add_switch_stage", p->name, name, NULL,
                         TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                         "case %u is missing", i);
  return TRUE;
}

guint
tg_producer_add_switch_stage (TgProducer *producer, const char *name,
                              TgStageFlags flags, const TgSwitchSpec *sw,
                              gpointer user_data, GDestroyNotify destroy,
                              GError **error)
{
  TgStage *stage;

  g_return_val_if_fail (producer != NULL, G_MAXUINT);
  g_return_val_if_fail (error == NULL || *error == NULL, G_MAXUINT);
  if (!stage_args_valid (producer, G_STRFUNC, name, flags, STAGE_FLAGS_ALL, sw,
                         "the switch spec", error)
      || !switch_valid (producer, name, sw, error))
    return G_MAXUINT;
  stage = stage_new (name, TG_STAGE_KIND_SWITCH, flags, user_data, destroy);
  stage->index = g_strdup (sw->index_binding);
  stage->cases = g_memdup2 (sw->cases, sw->n_cases * sizeof *sw->cases);
  stage->n_cases = sw->n_cases;
  return add_stage (producer, stage, G_STRFUNC, error);
}

/* Enters setup of stage @index of @p: the stage, or NULL with @error set
 * (and the producer not held). */
static TgStage *
setup_stage (TgProducer *p, guint index, const char *func, GError **error)
{
  if (!setup_enter (p, func, NULL, error))
    return NULL;
  if (index < p->stages->len)
    return p->stages->pdata[index];
  tg__producer_unlock (p);
  tg__refuse (error, func, p->name, NULL, NULL, TG_ARGUMENT_ERROR,
              TG_ARGUMENT_ERROR_OUT_OF_RANGE,
              "stage %u does not exist (the producer has %u stages)", index,
              p->stages->len);
  return NULL;
}

gboolean
tg_producer_declare_binding (TgProducer *producer, guint stage, const char *name,
                             gsize min_size, GError **error)
{
  TgStage *s;
  TgUse use;
  guint u;

  g_return_val_if_fail (producer != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if ((s = setup_stage (producer, stage, G_STRFUNC, error)) == NULL)
    return FALSE;
  if (!binding_name_valid (name))
    {
      tg__producer_unlock (producer);
      return tg__refuse (error, G_STRFUNC, producer->name, s->name, NULL,
                         TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                         "a binding name must be a non-empty string");
    }
  if (min_size == 0)
    {
      tg__producer_unlock (producer);
      return tg__refuse (error, G_STRFUNC, producer->name, s->name, name,
                         TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_EMPTY,
                         "binding '%s': min_size must be at least 1 byte", name);
    }
  for (u = 0; u < s->uses->len; u++)
    if (g_str_equal (g_array_index (s->uses, TgUse, u).name, name))
      break;
  if (u < s->uses->len)
    {
      TgUse *old = &g_array_index (s->uses, TgUse, u);
      old->min_size = MAX (old->min_size, min_size);
    }
  else
    {
      use = (TgUse){ g_strdup (name), min_size };
      g_array_append_val (s->uses, use);
    }
  tg__producer_unlock (producer);
  return TRUE;
}

gboolean
tg_producer_set_stage_condition (TgProducer *producer, guint stage,
                                 const char *flag_binding, GError **error)
{
  TgStage *s;

  g_return_val_if_fail (producer != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if ((s = setup_stage (producer, stage, G_STRFUNC, error)) == NULL)
    return FALSE;
  if (flag_binding != NULL && flag_binding[0] == '\0')
    {
      tg__producer_unlock (producer);
      return tg__refuse (error, G_STRFUNC, producer->name, s->name, NULL,
                         TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                         "the flag's binding name must be non-empty (NULL removes "
                         "the condition)");
    }
  g_free (s->condition);
  s->condition = g_strdup (flag_binding);
  if (flag_binding == NULL)
    s->otherwise = NULL;
  tg__producer_unlock (producer);
  return TRUE;
}

gboolean
tg_producer_set_stage_else (TgProducer *producer, guint stage, TgDeviceFunc else_func,
                            GError **error)
{
  TgStage *s;

  g_return_val_if_fail (producer != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if ((s = setup_stage (producer, stage, G_STRFUNC, error)) == NULL)
    return FALSE;
  if (else_func != NULL && (s->kind != TG_STAGE_KIND_DEVICE || s->condition == NULL))
    {
      tg__producer_unlock (producer);
      return tg__refuse (error, G_STRFUNC, producer->name, s->name, NULL,
                         TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                         "not a DEVICE stage with a condition; set its condition "
                         "first");
    }
  s->otherwise = else_func;
  tg__producer_unlock (producer);
  return TRUE;
}

guint
tg_producer_get_n_stages (TgProducer *producer)
{
  gboolean locked;
  guint n;

  g_return_val_if_fail (producer != NULL, 0);
  locked = tg__producer_read_lock (producer);
  n = producer->stages->len;
  if (locked)
    tg__producer_unlock (producer);
  return n;
}

gboolean
tg_producer_bind (TgProducer *producer, const char *name, gpointer device_ptr,
                  gsize size, GError **error)
{
  TgBinding *old;
  TgDeviceGuard guard;
  gpointer old_ptr;
  gboolean ok, rebind = FALSE, handled = FALSE;

  g_return_val_if_fail (producer != NULL && binding_name_valid (name), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (device_ptr != NULL)
    {
      g_autofree char *what
          = g_strdup_printf ("binding '%s' of producer '%s'", name, producer->name);

      if (size == 0)
        {
          tg__set_error_about (error, producer->name, NULL, name, TG_ARGUMENT_ERROR,
                               TG_ARGUMENT_ERROR_EMPTY,
                               "%s: a size of 0 bytes; pass the buffer's size", what);
          return FALSE;
        }
      if (!tg__device_enter (&guard, producer->device, error))
        return FALSE;
      ok = tg__check_device_buffer (what, device_ptr, size, producer->device, error);
      tg__device_leave (&guard);
      if (!ok)
        {
          if (error != NULL)
            tg_error_set_fields (*error, producer->name, NULL, name);
          return FALSE;
        }
    }
  if (!tg__producer_lock (producer, error))
    return FALSE;
  old = g_hash_table_lookup (producer->bindings, name);
  old_ptr = old != NULL ? old->ptr : NULL;
  if (old == NULL ? device_ptr != NULL : old->ptr != device_ptr || old->size != size)
    {
      rebind = producer->captured;
      producer->generation++;
      producer->replay_exec = NULL; /* no longer current */
      if (device_ptr == NULL)
        g_hash_table_remove (producer->bindings, name);
      else
        {
          TgBinding *b = g_new (TgBinding, 1);
          b->ptr = device_ptr;
          b->size = size;
          g_hash_table_replace (producer->bindings, g_strdup (name), b);
        }
    }
  if (rebind)
    {
      producer->stats.n_rebinds++;
      /* Called with the producer held, so that no thread replaces the handler
       * (and frees its data) while it runs. */
      handled = producer->rebind_handler != NULL
                && producer->rebind_handler (producer, name, old_ptr, device_ptr,
                                             producer->rebind_data);
    }
  tg__producer_unlock (producer);
  if (rebind && !handled)
    g_warning ("RebindAfterCaptureWarning: binding '%s' of producer '%s' changed from "
               "%p to %p after the producer was captured; its own graphs are updated "
               "at the next call, and every graph of yours that recorded it still "
               "uses the old buffer and must be re-captured",
               name, producer->name, old_ptr, device_ptr);
  return TRUE;
}

void
tg_producer_set_rebind_handler (TgProducer *producer, TgRebindFunc handler,
                                gpointer user_data, GDestroyNotify destroy)
{
  gpointer old_data;
  GDestroyNotify old_destroy;

  g_return_if_fail (producer != NULL);
  if (!tg__producer_lock (producer, NULL))
    {
      g_critical ("%s: producer '%s' is running on this thread", G_STRFUNC,
                  producer->name);
      return;
    }
  old_data = producer->rebind_data;
  old_destroy = producer->rebind_destroy;
  producer->rebind_handler = handler;
  producer->rebind_data = user_data;
  producer->rebind_destroy = destroy;
  tg__producer_unlock (producer);
  /* No bind runs the old handler any more: it ran under the lock. */
  if (old_destroy != NULL)
    old_destroy (old_data);
}

gpointer
tg__producer_binding (const TgProducer *producer, const char *name, gsize *size)
{
  TgBinding *b = g_hash_table_lookup (producer->bindings, name);

  if (size != NULL)
    *size = b != NULL ? b->size : 0;
  return b != NULL ? b->ptr : NULL;
}

gpointer
tg_producer_get_binding (TgProducer *producer, const char *name, gsize *size)
{
  TgProducer *p = producer;
  gboolean locked;
  gpointer ptr;

  g_return_val_if_fail (producer != NULL && binding_name_valid (name), NULL);
  locked = tg__producer_read_lock (p);
  ptr = tg__producer_binding (p, name, size);
  if (locked)
    tg__producer_unlock (p);
  return ptr;
}
