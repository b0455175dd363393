/* robust-test.c: hostile input and misuse on a GPU: waiting forever for
 * releases. */
#include "config.h"
#include "tg-test.h"

#include <stdlib.h>

#define N 256

typedef TgTestGpu Fixture;

/* ------------------------------------------------------------------------ */
/* tg_release_wait (G_MAXINT64) waits until the release happens.            */

static gboolean
mix_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (tgt_launch_mix (tg_launch_get_stream (launch), data, N, 3),
                           error);
}

typedef struct
{
  cudaGraph_t graph;
  cudaGraphExec_t exec;
} Retained;

static gpointer
destroy_later (gpointer data)
{
  Retained *r = data;

  g_usleep (200 * 1000);
  TG_TEST_CUDA (cudaGraphExecDestroy (r->exec));
  TG_TEST_CUDA (cudaGraphDestroy (r->graph));
  return NULL;
}

static void
test_release_wait_forever (Fixture *f, gconstpointer data)
{
  guint32 *buf;
  TgProducer *p;
  Retained r;
  GThread *thread;
  gint64 start;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  buf = tg_test_device_alloc (N * sizeof (guint32));
  p = tg_producer_new ("retained", 0);
  tg_producer_add_device_stage (p, "mix", TG_STAGE_CAPTURE_SAFE, mix_stage, buf, NULL);
  TG_TEST_CUDA (cudaStreamBeginCapture (f->stream, cudaStreamCaptureModeGlobal));
  g_assert_true (
      tg_producer_run (p, f->stream, TG_POLICY_RECORD, tg_unconditional (), &error));
  g_assert_true (tg_retain_capture (f->stream, p, &error));
  g_assert_no_error (error);
  TG_TEST_CUDA (cudaStreamEndCapture (f->stream, &r.graph));
  TG_TEST_CUDA (cudaGraphInstantiate (&r.exec, r.graph, 0));
  tg_producer_unref (p);

  /* Before: the deadline overflowed and the wait returned FALSE at once. */
  start = g_get_monotonic_time ();
  thread = g_thread_new ("trackgen-destroy", destroy_later, &r);
  g_assert_true (tg_release_wait (G_MAXINT64));
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 150 * 1000);
  g_thread_join (thread);
  tg_test_device_free (buf);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  TG_TEST_ADD_GPU ("/robust/release/wait-forever", test_release_wait_forever);
  return g_test_run ();
}
