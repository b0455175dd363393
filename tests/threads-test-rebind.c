/* SPDX-License-Identifier: Apache-2.0 */
/* threads-test-rebind.c: the rebind handler against a thread replacing it.
 * One thread rebinds a captured producer's bindings, each rebind calling
 * the handler; another sets a new handler again and again, each time
 * destroying the old one's data.  The handler reads its data: without the
 * producer held around the call, the data it reads may be freed under it
 * (ThreadSanitizer and AddressSanitizer report it, and the magic check
 * fails).  Runs without a GPU: the producer is made "captured" and given
 * bindings through its private structure, and the rebinds unbind, which
 * needs no device. */
#include "config.h"
#include "threads-test.h"
#include "../lib/exec/producer-private.h"

#define N_BINDINGS 4000
#define N_HANDLERS 400
#define MAGIC 0x7261636Bu

typedef struct
{
  guint magic;
  gint *calls;
} HandlerData;

static gboolean
counting_handler (TgProducer *p, const char *binding, gpointer old_ptr,
                  gpointer new_ptr, gpointer data)
{
  HandlerData *d = data;

  g_assert_cmpuint (d->magic, ==, MAGIC);
  g_atomic_int_inc (d->calls);
  return TRUE; /* handled: no warning */
}

static void
handler_data_free (gpointer data)
{
  HandlerData *d = data;

  d->magic = 0;
  g_free (d);
}

static void
set_handler (TgProducer *p, gint *calls)
{
  HandlerData *d = g_new (HandlerData, 1);

  d->magic = MAGIC;
  d->calls = calls;
  tg_producer_set_rebind_handler (p, counting_handler, d, handler_data_free);
}

typedef struct
{
  TgProducer *producer;
  gint calls;
  gint waiting;
} Race;

static void
start_line (gint *waiting)
{
  g_atomic_int_add (waiting, -1);
  while (g_atomic_int_get (waiting) > 0)
    g_thread_yield ();
}

static gpointer
rebinder_main (gpointer data)
{
  Race *race = data;

  start_line (&race->waiting);
  for (guint i = 0; i < N_BINDINGS; i++)
    {
      char name[16];
      GError *error = NULL;

      g_snprintf (name, sizeof name, "b%u", i);
      g_assert_true (tg_producer_bind (race->producer, name, NULL, 0, &error));
      g_assert_no_error (error);
    }
  return NULL;
}

static gpointer
replacer_main (gpointer data)
{
  Race *race = data;

  start_line (&race->waiting);
  for (guint i = 0; i < N_HANDLERS; i++)
    {
      set_handler (race->producer, &race->calls);
      g_thread_yield ();
    }
  return NULL;
}

static void
test_handler_vs_bind (void)
{
  Race race = { tg_producer_new ("rebind-race", 0), 0, 2 };
  TgProducer *p = race.producer;
  GThread *threads[2];
  TgRunnerStats stats;

  /* A captured producer with bindings, made without a device. */
  tg__producer_lock (p, NULL);
  p->captured = TRUE;
  for (guint i = 0; i < N_BINDINGS; i++)
    {
      TgBinding *b = g_new (TgBinding, 1);

      b->ptr = GUINT_TO_POINTER (0x1000 + 16 * i);
      b->size = 4;
      g_hash_table_replace (p->bindings, g_strdup_printf ("b%u", i), b);
    }
  tg__producer_unlock (p);
  set_handler (p, &race.calls);

  threads[0] = g_thread_new ("rebinder", rebinder_main, &race);
  threads[1] = g_thread_new ("replacer", replacer_main, &race);
  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    g_thread_join (threads[t]);

  /* Every rebind reached a live handler, and none was lost. */
  g_assert_cmpint (g_atomic_int_get (&race.calls), ==, N_BINDINGS);
  tg_producer_get_runner_stats (p, &stats);
  g_assert_cmpuint (stats.n_rebinds, ==, N_BINDINGS);
  tg_producer_unref (p);
}

void
threads_test_add_rebind (void)
{
  g_test_add_func ("/threads/rebind/handler-vs-bind", test_handler_vs_bind);
}
