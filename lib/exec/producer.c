/* SPDX-License-Identifier: Apache-2.0 */
/* producer.c: the producer object, its lock, stream and private resources.
 * Its stages and bindings are set up in producer-stages.c. */
#include "config.h"
#include "producer-private.h"
#include "resource-private.h"
#include "stream-private.h"
#include "tsan-private.h"

#include <stdlib.h>
#include <string.h>

void
tg__stage_free (gpointer data)
{
  TgStage *stage = data;

  if (stage->destroy != NULL)
    stage->destroy (stage->user_data);
  g_free (stage->name);
  g_array_unref (stage->uses);
  g_free (stage->condition);
  g_free (stage->loop_flag);
  g_free (stage->loop_status);
  g_free (stage->index);
  g_free (stage->cases);
  g_free (stage);
}

TgProducer *
tg_producer_new (const char *name, int device)
{
  TgProducer *p;

  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (device >= 0, NULL);

  /* Aligned, so that the fields every call reads share one cache line. */
  p = aligned_alloc (_Alignof(TgProducer), sizeof (TgProducer));
  if (p == NULL)
    g_error ("%s: failed to allocate %" G_GSIZE_FORMAT " bytes", G_STRLOC,
             sizeof (TgProducer));
  memset (p, 0, sizeof *p);
  g_atomic_ref_count_init (&p->ref);
  p->name = g_strdup (name);
  p->device = device;
  p->bound = TG_STREAM_AUTO;
  p->stages = g_ptr_array_new_with_free_func (tg__stage_free);
  p->bindings = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_mutex_init (&p->wait_lock);
  g_cond_init (&p->released);
  tg__live_add (TG_LIVE_PRODUCERS, 1);
  /* TG_CHECK=1 subscribes to CUPTI here, never inside a stage's capture. */
  (void)tg_get_checks ();
  return p;
}

TgProducer *
tg_producer_ref (TgProducer *producer)
{
  g_return_val_if_fail (producer != NULL, NULL);
  g_atomic_ref_count_inc (&producer->ref);
  return producer;
}

/* The thread-local record lives as long as the thread; at its exit,
 * holder_gone releases what a thread left inside a call (pthread_exit from a
 * stage) instead of leaving it locked for good or letting a later thread
 * inherit it.  The key is set at the thread's first call. */
_Thread_local TgHolder tg__holder;

static void holder_gone (gpointer data);
static GPrivate holder_key = G_PRIVATE_INIT (holder_gone);

static gboolean
held_here (TgProducer *p)
{
  return g_atomic_pointer_get (&p->owner) == (gpointer)&tg__holder;
}

static TgProducer *
held_at (const TgHolder *h, guint i)
{
  return i < TG_HOLDER_INLINE ? h->held[i] : h->more->pdata[i - TG_HOLDER_INLINE];
}

void
tg__producer_wake (TgProducer *p)
{
  tg__mutex_lock (&p->wait_lock);
  g_cond_signal (&p->released);
  tg__mutex_unlock (&p->wait_lock);
}

static void
holder_gone (gpointer data)
{
  TgHolder *h = data;

  while (h->n > 0)
    {
      TgProducer *p = held_at (h, --h->n);
      g_critical ("a thread exited inside a call of producer '%s'; the producer is "
                  "released, but that call's work is incomplete and a capture it "
                  "began may be left open",
                  p->name);
      tg__producer_release (p);
    }
  g_clear_pointer (&h->more, g_ptr_array_unref);
  h->fast = 0;
}

/* Takes @p for this thread: one compare-and-swap when it is free, else
 * waits for the thread inside it. */
static void
acquire (TgProducer *p)
{
  TgHolder *h = &tg__holder;

  if (G_UNLIKELY (h->fast == 0))
    {
      g_private_set (&holder_key, h);
      h->fast = TG_HOLDER_INLINE;
    }
  if (G_UNLIKELY (!g_atomic_pointer_compare_and_exchange (&p->owner, NULL, h)))
    {
      tg__mutex_lock (&p->wait_lock);
      g_atomic_int_inc (&p->n_waiting);
      /* Timed: a release may miss this waiter (tg__producer_release()). */
      while (!g_atomic_pointer_compare_and_exchange (&p->owner, NULL, h))
        (void)tg__cond_wait_until (&p->released, &p->wait_lock,
                                   g_get_monotonic_time () + 1000);
      g_atomic_int_add (&p->n_waiting, -1);
      tg__mutex_unlock (&p->wait_lock);
    }
  if (h->n < TG_HOLDER_INLINE)
    h->held[h->n] = p;
  else
    {
      if (h->more == NULL)
        h->more = g_ptr_array_new ();
      g_ptr_array_set_size (h->more, h->n + 1 - TG_HOLDER_INLINE);
      h->more->pdata[h->n - TG_HOLDER_INLINE] = p;
    }
  h->n++;
}

/* Fails when this thread is already inside @p (a stage calling back into
 * its own producer). */
gboolean
tg__producer_lock_slow (TgProducer *p, GError **error)
{
  if (held_here (p))
    {
      tg__set_error_about (error, p->name, NULL, NULL, TG_STATE_ERROR,
                           TG_STATE_ERROR_BUSY,
                           "producer '%s' is already running on this thread (a stage "
                           "called back into it); use a second producer",
                           p->name);
      return FALSE;
    }
  acquire (p);
  return TRUE;
}

/* Readers from outside a call take the producer; a stage, inside the call
 * on this thread, already holds it. */
gboolean
tg__producer_read_lock (TgProducer *p)
{
  if (held_here (p))
    return FALSE;
  acquire (p);
  return TRUE;
}

static void
producer_free (TgProducer *p)
{
  /* A producer is often released during someone's capture (a torch graph's
   * producer dropped in the next capture, the reaper): every call made here,
   * the stages' destroy notifies included, runs relaxed. */
  enum cudaStreamCaptureMode mode = tg__relaxed_begin ();
  gboolean owns_cuda = p->segments != NULL || p->private_stream != NULL
                       || p->unit_stream != NULL
                       || p->side_streams != NULL || p->decision_words != NULL;
  TgDeviceGuard guard;
  GError *error = NULL;
  gboolean entered = owns_cuda && tg__device_enter (&guard, p->device, &error);

  if (owns_cuda && !entered)
    tg__release_failed (error);
  if (p->segments != NULL)
    g_array_unref (p->segments);
  tg__stream_give_back (p->device, p->private_stream);
  tg__stream_give_back (p->device, p->unit_stream);
  for (guint i = 0; p->side_streams != NULL && i < p->side_streams->len; i++)
    tg__stream_give_back (p->device, p->side_streams->pdata[i]);
  if (p->side_streams != NULL)
    g_ptr_array_unref (p->side_streams);
  if (p->decision_words != NULL)
    g_ptr_array_unref (p->decision_words);
  if (entered)
    tg__device_leave (&guard);

  g_ptr_array_unref (p->stages);
  g_hash_table_unref (p->bindings);
  g_clear_error (&p->record_refusal);
  g_clear_error (&p->replay_refusal);
  g_clear_error (&p->no_conditionals);
  if (p->rebind_destroy != NULL)
    p->rebind_destroy (p->rebind_data);
  g_mutex_clear (&p->wait_lock);
  g_cond_clear (&p->released);
  g_free (p->name);
  free (p); /* aligned_alloc's */
  tg__live_add (TG_LIVE_PRODUCERS, -1);
  tg__relaxed_end (mode);
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
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (stream != TG_STREAM_AUTO)
    {
      TgCaptureInfo info;
      if (!tg__device_enter (&guard, producer->device, error))
        return FALSE;
      ok = tg__stream_check (stream == NULL ? cudaStreamLegacy : stream,
                             producer->device, &info, error)
           != NULL;
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
tg_producer_get_stream (TgProducer *producer)
{
  cudaStream_t stream;
  gboolean locked;

  g_return_val_if_fail (producer != NULL, NULL);
  locked = tg__producer_read_lock (producer);
  stream = producer->bound;
  if (locked)
    tg__producer_unlock (producer);
  return stream;
}

void
tg_producer_get_runner_stats (TgProducer *producer, TgRunnerStats *stats)
{
  gboolean locked;

  g_return_if_fail (producer != NULL && stats != NULL);
  locked = tg__producer_read_lock (producer);
  *stats = producer->stats;
  stats->n_replays = producer->n_replays;
  stats->n_segments = producer->segments != NULL ? producer->segments->len : 0;
  if (locked)
    tg__producer_unlock (producer);
}

cudaStream_t
tg__producer_private_stream (TgProducer *p, GError **error)
{
  if (p->private_stream == NULL)
    p->private_stream = tg__stream_lend (p->device, error);
  return p->private_stream;
}

cudaStream_t
tg__producer_unit_stream (TgProducer *p, GError **error)
{
  if (p->unit_stream == NULL)
    p->unit_stream = tg__stream_lend (p->device, error);
  return p->unit_stream;
}

cudaStream_t
tg__producer_side_stream (TgProducer *p, guint depth, GError **error)
{
  /* Given back one by one when the producer is freed. */
  if (p->side_streams == NULL)
    p->side_streams = g_ptr_array_new ();
  while (p->side_streams->len <= depth)
    {
      cudaStream_t s = tg__stream_lend (p->device, error);
      if (s == NULL)
        return NULL;
      g_ptr_array_add (p->side_streams, s);
    }
  return p->side_streams->pdata[depth];
}
