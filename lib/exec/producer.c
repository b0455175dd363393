/* producer.c: the producer object, its stages, bindings and private resources. */
#include "config.h"
#include "producer-private.h"

#include <string.h>

static void
stage_free (gpointer data)
{
  TgStage *stage = data;

  if (stage->destroy != NULL)
    stage->destroy (stage->user_data);
  g_free (stage->name);
  g_free (stage->condition);
  g_free (stage->loop_flag);
  g_free (stage->loop_status);
  g_free (stage);
}

TgProducer *
tg_producer_new (const char *name, int device)
{
  TgProducer *p;

  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (device >= 0, NULL);

  p = g_new0 (TgProducer, 1);
  g_atomic_ref_count_init (&p->ref);
  p->name = g_strdup (name);
  p->device = device;
  p->stages = g_ptr_array_new_with_free_func (stage_free);
  p->bindings = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_mutex_init (&p->wait_lock);
  g_cond_init (&p->released);
  tg__live_add (TG_LIVE_PRODUCERS, 1);
  return p;
}

TgProducer *
tg_producer_ref (TgProducer *producer)
{
  g_return_val_if_fail (producer != NULL, NULL);
  g_atomic_ref_count_inc (&producer->ref);
  return producer;
}

static void
producer_free (TgProducer *p)
{
  TgDeviceGuard guard;
  gboolean entered = tg__device_enter (&guard, p->device, NULL);

  tg__runner_free (p);
  tg__stream_free (p->private_stream);
  if (p->side_streams != NULL)
    g_ptr_array_unref (p->side_streams);
  tg__host_free (p->readback);
  if (entered)
    tg__device_leave (&guard);

  g_ptr_array_unref (p->stages);
  g_hash_table_unref (p->bindings);
  g_clear_error (&p->record_refusal);
  g_clear_error (&p->replay_refusal);
  g_clear_error (&p->no_conditionals);
  g_mutex_clear (&p->wait_lock);
  g_cond_clear (&p->released);
  g_free (p->name);
  g_free (p);
  tg__live_add (TG_LIVE_PRODUCERS, -1);
}

void
tg_producer_unref (TgProducer *producer)
{
  g_return_if_fail (producer != NULL);
  if (g_atomic_ref_count_dec (&producer->ref))
    producer_free (producer);
}

const char *
tg_producer_get_name (const TgProducer *producer)
{
  g_return_val_if_fail (producer != NULL, NULL);
  return producer->name;
}

int
tg_producer_get_device (const TgProducer *producer)
{
  g_return_val_if_fail (producer != NULL, -1);
  return producer->device;
}

gboolean
tg_producer_set_stream (TgProducer *producer, cudaStream_t stream, GError **error)
{
  TgDeviceGuard guard;
  gboolean ok;

  g_return_val_if_fail (producer != NULL, FALSE);
  if (stream != NULL)
    {
      TgCaptureInfo info;
      if (!tg__device_enter (&guard, producer->device, error))
        return FALSE;
      ok = tg__stream_resolve (stream, NULL, producer->device, &info, error) != NULL;
      tg__device_leave (&guard);
      if (!ok)
        return FALSE;
    }
  if (!tg__producer_lock (producer, error))
    return FALSE;
  producer->bound = stream;
  tg__producer_unlock (producer);
  return TRUE;
}

cudaStream_t
tg_producer_get_stream (const TgProducer *producer)
{
  g_return_val_if_fail (producer != NULL, NULL);
  return producer->bound;
}

static gboolean
stage_name_free (const TgProducer *p, const char *name)
{
  for (guint i = 0; i < p->stages->len; i++)
    if (g_str_equal (((TgStage *)p->stages->pdata[i])->name, name))
      return FALSE;
  return TRUE;
}

static guint
add_stage (TgProducer *p, TgStage *stage)
{
  g_ptr_array_add (p->stages, stage);
  return p->stages->len - 1;
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
  return stage;
}

#define STAGE_ADD_PRECONDITIONS(p, name, func)                                         \
  g_return_val_if_fail (p != NULL, G_MAXUINT);                                         \
  g_return_val_if_fail (name != NULL && func != NULL, G_MAXUINT);                      \
  g_return_val_if_fail (!p->sealed, G_MAXUINT);                                        \
  g_return_val_if_fail (stage_name_free (p, name), G_MAXUINT)

guint
tg_producer_add_device_stage (TgProducer *producer, const char *name,
                              TgStageFlags flags, TgDeviceFunc func, gpointer user_data,
                              GDestroyNotify destroy)
{
  TgStage *stage;

  STAGE_ADD_PRECONDITIONS (producer, name, func);
  stage = stage_new (name, TG_STAGE_KIND_DEVICE, flags, user_data, destroy);
  stage->device = func;
  return add_stage (producer, stage);
}

guint
tg_producer_add_host_stage (TgProducer *producer, const char *name, TgStageFlags flags,
                            TgHostFunc func, gpointer user_data, GDestroyNotify destroy)
{
  TgStage *stage;

  STAGE_ADD_PRECONDITIONS (producer, name, func);
  g_return_val_if_fail (!(flags & TG_STAGE_LEGACY_STREAM), G_MAXUINT);
  stage = stage_new (name, TG_STAGE_KIND_HOST, flags, user_data, destroy);
  stage->host = func;
  return add_stage (producer, stage);
}

guint
tg_producer_add_loop_stage (TgProducer *producer, const char *name, TgStageFlags flags,
                            const char *flag_binding, const char *status_binding,
                            guint max_iters, TgDeviceFunc body, gpointer user_data,
                            GDestroyNotify destroy)
{
  TgStage *stage;

  STAGE_ADD_PRECONDITIONS (producer, name, body);
  g_return_val_if_fail (flag_binding != NULL && status_binding != NULL, G_MAXUINT);
  g_return_val_if_fail (max_iters >= 1, G_MAXUINT);
  stage = stage_new (name, TG_STAGE_KIND_LOOP, flags, user_data, destroy);
  stage->device = body;
  stage->loop_flag = g_strdup (flag_binding);
  stage->loop_status = g_strdup (status_binding);
  stage->max_iters = max_iters;
  return add_stage (producer, stage);
}

void
tg_producer_set_stage_condition (TgProducer *producer, guint stage,
                                 const char *flag_binding)
{
  TgStage *s;

  g_return_if_fail (producer != NULL);
  g_return_if_fail (stage < producer->stages->len);
  g_return_if_fail (!producer->sealed);
  s = producer->stages->pdata[stage];
  g_free (s->condition);
  s->condition = g_strdup (flag_binding);
}

guint
tg_producer_get_n_stages (const TgProducer *producer)
{
  g_return_val_if_fail (producer != NULL, 0);
  return producer->stages->len;
}

static gboolean
check_device_pointer (const TgProducer *p, const char *name, gpointer ptr,
                      GError **error)
{
  struct cudaPointerAttributes attr;

  if (!TG_CUDA_OK (cudaPointerGetAttributes (&attr, ptr), error))
    return FALSE;
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                     "binding '%s' of producer '%s': %p is not device memory; bind "
                     "memory from cudaMalloc on device %d",
                     name, p->name, ptr, p->device);
      return FALSE;
    }
  if (attr.type == cudaMemoryTypeDevice && attr.device != p->device)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_DEVICE_MISMATCH,
                     "binding '%s' of producer '%s': %p is memory of device %d, but "
                     "the producer runs on device %d",
                     name, p->name, ptr, attr.device, p->device);
      return FALSE;
    }
  return TRUE;
}

/* Who holds a producer: the address of a thread-local byte identifies the
 * thread for a fraction of what g_thread_self () costs on the hot path. */
static _Thread_local char thread_token;

static gboolean
held_here (TgProducer *p)
{
  return g_atomic_pointer_get (&p->owner) == (gpointer)&thread_token;
}

/* Takes @p for this thread: one compare-and-swap when it is free, else
 * waits for the thread inside it. */
static void
acquire (TgProducer *p)
{
  if (G_LIKELY (g_atomic_pointer_compare_and_exchange (&p->owner, NULL, &thread_token)))
    return;
  g_mutex_lock (&p->wait_lock);
  g_atomic_int_inc (&p->n_waiting);
  while (!g_atomic_pointer_compare_and_exchange (&p->owner, NULL, &thread_token))
    g_cond_wait (&p->released, &p->wait_lock);
  g_atomic_int_add (&p->n_waiting, -1);
  g_mutex_unlock (&p->wait_lock);
}

/* Enters the producer for a call or a change; fails when this thread is
 * already inside it (a stage calling back into its own producer). */
gboolean
tg__producer_lock (TgProducer *p, GError **error)
{
  if (held_here (p))
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_BUSY,
                     "producer '%s' is already running on this thread (a stage "
                     "called back into it); use a second producer",
                     p->name);
      return FALSE;
    }
  acquire (p);
  return TRUE;
}

void
tg__producer_unlock (TgProducer *p)
{
  /* Both sequentially consistent: a waiter that this load misses counted
   * itself after the store, so its own compare-and-swap sees NULL. */
  g_atomic_pointer_set (&p->owner, NULL);
  if (g_atomic_int_get (&p->n_waiting) > 0)
    {
      g_mutex_lock (&p->wait_lock);
      g_cond_signal (&p->released);
      g_mutex_unlock (&p->wait_lock);
    }
}

gboolean
tg_producer_bind (TgProducer *producer, const char *name, gpointer device_ptr,
                  gsize size, GError **error)
{
  TgBinding *old;
  TgDeviceGuard guard;
  gboolean ok;

  g_return_val_if_fail (producer != NULL && name != NULL, FALSE);
  if (device_ptr != NULL)
    {
      if (!tg__device_enter (&guard, producer->device, error))
        return FALSE;
      ok = check_device_pointer (producer, name, device_ptr, error);
      tg__device_leave (&guard);
      if (!ok)
        return FALSE;
    }
  if (!tg__producer_lock (producer, error))
    return FALSE;
  old = g_hash_table_lookup (producer->bindings, name);
  if (old == NULL ? device_ptr != NULL : old->ptr != device_ptr || old->size != size)
    {
      if (producer->captured)
        g_warning ("RebindAfterCaptureWarning: binding '%s' of producer '%s' "
                   "changed from %p to %p after the producer was captured; its own "
                   "graphs are updated at the next call, and every graph of yours "
                   "that recorded it still uses the old buffer and must be "
                   "re-captured",
                   name, producer->name, old != NULL ? old->ptr : NULL, device_ptr);
      producer->generation++;
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
  tg__producer_unlock (producer);
  return TRUE;
}

gpointer
tg__producer_binding (const TgProducer *producer, const char *name, gsize *size)
{
  TgBinding *b = g_hash_table_lookup (producer->bindings, name);

  if (size != NULL)
    *size = b != NULL ? b->size : 0;
  return b != NULL ? b->ptr : NULL;
}

/* Readers from outside a call take the producer; a stage, inside the call
 * on this thread, already holds it. */
static gboolean
read_lock (TgProducer *p)
{
  if (held_here (p))
    return FALSE;
  acquire (p);
  return TRUE;
}

gpointer
tg_producer_get_binding (const TgProducer *producer, const char *name, gsize *size)
{
  TgProducer *p = (TgProducer *)producer;
  gboolean locked;
  gpointer ptr;

  g_return_val_if_fail (producer != NULL && name != NULL, NULL);
  locked = read_lock (p);
  ptr = tg__producer_binding (p, name, size);
  if (locked)
    tg__producer_unlock (p);
  return ptr;
}

void
tg_producer_get_runner_stats (TgProducer *producer, TgRunnerStats *stats)
{
  gboolean locked;

  g_return_if_fail (producer != NULL && stats != NULL);
  locked = read_lock (producer);
  *stats = producer->stats;
  stats->n_segments = producer->segments != NULL ? producer->segments->len : 0;
  if (locked)
    tg__producer_unlock (producer);
}

cudaStream_t
tg__producer_private_stream (TgProducer *p, GError **error)
{
  if (p->private_stream == NULL)
    p->private_stream = tg__stream_new (error);
  return p->private_stream;
}

cudaStream_t
tg__producer_side_stream (TgProducer *p, guint depth, GError **error)
{
  if (p->side_streams == NULL)
    p->side_streams = g_ptr_array_new_with_free_func ((GDestroyNotify)tg__stream_free);
  while (p->side_streams->len <= depth)
    {
      cudaStream_t s = tg__stream_new (error);
      if (s == NULL)
        return NULL;
      g_ptr_array_add (p->side_streams, s);
    }
  return p->side_streams->pdata[depth];
}

gboolean
tg__producer_readback (TgProducer *p, cudaStream_t stream, gconstpointer device_src,
                       gsize size, gpointer out, GError **error)
{
  g_assert (size <= sizeof *p->readback);
  if (p->readback == NULL
      && (p->readback = tg__host_alloc (sizeof *p->readback, error)) == NULL)
    return FALSE;
  if (!TG_CUDA_OK (cudaMemcpyAsync (p->readback, device_src, size,
                                    cudaMemcpyDeviceToHost, stream),
                   error)
      || !TG_CUDA_OK (cudaStreamSynchronize (stream), error))
    return FALSE;
  memcpy (out, p->readback, size);
  return TRUE;
}
