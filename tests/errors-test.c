/* errors-test.c: errors leave nothing behind, and take nothing that is not
 * theirs.  A caller's pending CUDA error is neither taken nor reported by a
 * call that succeeds, under every policy; a call refused for a device out
 * of range leaves the thread's current device as it was. */
#include "config.h"
#include "tg-test.h"

typedef TgTestGpu Fixture;

static void
test_pending_error_kept (Fixture *fx, gconstpointer data)
{
  const TgPolicy policies[] = { TG_POLICY_EAGER, TG_POLICY_REPLAY, TG_POLICY_RECORD };
  TgTestCounted c;
  TgProducer *p;
  g_autoptr (GError) error = NULL;

  TG_TEST_REQUIRE_GPU ();
  tg_test_counted_init (&c, 9);
  p = tg_test_counted_new (&c, TG_STAGE_CAPTURE_SAFE);
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      cudaGraph_t graph = NULL;

      if (policies[i] == TG_POLICY_RECORD)
        TG_TEST_CUDA (cudaStreamBeginCapture (fx->stream, cudaStreamCaptureModeGlobal));
      /* The caller's own failed call leaves its error pending. */
      g_assert_cmpint (cudaSetDevice (1 << 20), !=, cudaSuccess);
      g_assert_true (
          tg_producer_run (p, fx->stream, policies[i], tg_unconditional (), &error));
      g_assert_no_error (error);
      g_assert_cmpint (cudaGetLastError (), ==, cudaErrorInvalidDevice);
      if (policies[i] == TG_POLICY_RECORD)
        {
          TG_TEST_CUDA (cudaStreamEndCapture (fx->stream, &graph));
          TG_TEST_CUDA (cudaGraphDestroy (graph));
        }
    }
  TG_TEST_CUDA (cudaStreamSynchronize (fx->stream));
  tg_test_counted_expect (&c, 9);
  tg_producer_unref (p);
  tg_test_counted_clear (&c);
}

static void
test_device_errors (Fixture *f, gconstpointer data)
{
  g_autoptr (TgProducer) p = NULL;
  g_autoptr (GError) error = NULL;
  int before = -1, after = -1;

  TG_TEST_REQUIRE_GPU ();
  TG_TEST_CUDA (cudaGetDevice (&before));
  p = tg_producer_new ("elsewhere", 64);
  tg_producer_add_device_stage (p, "count", TG_STAGE_CAPTURE_SAFE, tg_test_count_stage,
                                NULL, NULL);
  g_assert_false (
      tg_producer_run (p, TG_STREAM_AUTO, TG_POLICY_AUTO, tg_unconditional (), &error));
  g_assert_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE);
  TG_TEST_CUDA (cudaGetDevice (&after));
  g_assert_cmpint (before, ==, after);
}

int
main (int argc, char **argv)
{
  tg_test_init (&argc, &argv);
  TG_TEST_ADD_GPU ("/errors/cuda/pending-error-kept", test_pending_error_kept);
  TG_TEST_ADD_GPU ("/errors/device/bad-device-restores-current", test_device_errors);
  return g_test_run ();
}
