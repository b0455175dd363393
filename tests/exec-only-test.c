/* SPDX-License-Identifier: Apache-2.0 */
/* exec-only-test.c: a program that uses exec.h alone links with
 * libtrackgen-exec.a alone (no interop, no seeds) and runs a producer. */
#include "config.h"
#include <trackgen/exec.h>

#include <string.h>

static gboolean
memset_stage (const TgLaunch *launch, gpointer user_data, GError **error)
{
  gpointer buf = tg_launch_get_binding (launch, "buf");

  return cudaMemsetAsync (buf, GPOINTER_TO_INT (user_data), 1024,
                          tg_launch_get_stream (launch))
         == cudaSuccess;
}

static void
test_producer (void)
{
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  guint8 host[1024];
  gpointer buf = NULL;
  int count = 0;

  if (cudaGetDeviceCount (&count) != cudaSuccess || count == 0)
    {
      g_test_skip ("no CUDA device");
      return;
    }
  g_assert_cmpint (cudaMalloc (&buf, sizeof host), ==, cudaSuccess);
  p = tg_producer_new ("exec-only", 0);
  tg_producer_add_device_stage (p, "memset", TG_STAGE_CAPTURE_SAFE, memset_stage,
                                GINT_TO_POINTER (0x5A), NULL, NULL);
  tg_producer_declare_binding (p, 0, "buf", sizeof host, NULL);
  g_assert_true (tg_producer_bind (p, "buf", buf, sizeof host, &error));
  for (int policy = TG_POLICY_AUTO; policy <= TG_POLICY_REPLAY; policy++)
    {
      memset (host, 0, sizeof host);
      g_assert_cmpint (cudaMemset (buf, 0, sizeof host), ==, cudaSuccess);
      /* TG_STREAM_AUTO: TrackGen's non-blocking default stream, which the
       * legacy stream of cudaMemset and cudaMemcpy does not wait for. */
      g_assert_cmpint (cudaDeviceSynchronize (), ==, cudaSuccess);
      g_assert_true (
          tg_producer_run (p, TG_STREAM_AUTO, policy, tg_unconditional (), &error));
      g_assert_no_error (error);
      g_assert_cmpint (cudaDeviceSynchronize (), ==, cudaSuccess);
      g_assert_cmpint (cudaMemcpy (host, buf, sizeof host, cudaMemcpyDeviceToHost), ==,
                       cudaSuccess);
      for (gsize i = 0; i < sizeof host; i++)
        g_assert_cmpuint (host[i], ==, 0x5A);
    }
  g_assert_cmpint (cudaFree (buf), ==, cudaSuccess);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/exec-only/producer", test_producer);
  return g_test_run ();
}
