/* exec-test.c: the execution layer on a GPU: concurrent calls. */
#include "config.h"
#include "tg-test.h"

typedef TgTestGpu Fixture;

typedef struct
{
  TgProducer *producer;
  cudaStream_t stream;
  guint n_calls;
  gulong stage_us;
  gint in_stage;
  gint max_in_stage;
  guint n_runs; /* not atomic: the producer's exclusion protects it */
} Concurrent;

static gboolean
exclusive_host_stage (TgHostOps *ops, gpointer data, GError **error)
{
  Concurrent *c = data;
  gint now = g_atomic_int_add (&c->in_stage, 1) + 1;

  if (now > c->max_in_stage)
    c->max_in_stage = now;
  c->n_runs++;
  if (c->stage_us > 0)
    g_usleep (c->stage_us);
  g_atomic_int_add (&c->in_stage, -1);
  return TRUE;
}

static gpointer
concurrent_caller (gpointer data)
{
  Concurrent *c = data;
  GError *error = NULL;

  for (guint i = 0; i < c->n_calls; i++)
    if (!tg_producer_run (c->producer, c->stream, TG_POLICY_EAGER, tg_unconditional (),
                          &error))
      return error;
  return NULL;
}

/* Four threads call one producer: slow calls (each waits for the others) and
 * then many short ones (the uncontended path and the waiting one interleave). */
static void
test_concurrent_call_waits (Fixture *f, gconstpointer data)
{
  const struct
  {
    guint n_calls;
    gulong stage_us;
  } phases[] = { { 5, 20 * 1000 }, { 5000, 0 } };
  GThread *threads[4];

  TG_TEST_REQUIRE_GPU ();
  for (guint ph = 0; ph < G_N_ELEMENTS (phases); ph++)
    {
      Concurrent c = { 0 };

      c.producer = tg_producer_new ("shared", 0);
      c.stream = f->stream;
      c.n_calls = phases[ph].n_calls;
      c.stage_us = phases[ph].stage_us;
      tg_producer_add_host_stage (c.producer, "exclusive", TG_STAGE_NONE,
                                  exclusive_host_stage, &c, NULL);
      for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
        threads[i] = g_thread_new ("caller", concurrent_caller, &c);
      for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
        {
          GError *error = g_thread_join (threads[i]);
          g_assert_no_error (error);
        }
      /* Calls from several threads waited for each other. */
      g_assert_cmpint (c.max_in_stage, ==, 1);
      g_assert_cmpuint (c.n_runs, ==, G_N_ELEMENTS (threads) * c.n_calls);
      tg_producer_unref (c.producer);
    }
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  TG_TEST_ADD_GPU ("/exec/threads/concurrent-calls-wait", test_concurrent_call_waits);
  return g_test_run ();
}
