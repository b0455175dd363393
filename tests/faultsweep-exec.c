/* SPDX-License-Identifier: Apache-2.0 */
/* faultsweep-exec.c: the exec scenario.  A chain-like producer -- device
 * stages on both sides of a capture-safe HOST stage that uploads from pinned
 * memory and enqueues a host function -- run under every policy, then its
 * output and the number of runs checked. */
#include "config.h"
#include "faultsweep.h"

#define N 1024
#define PARAM 0x1234u
#define K 0xBEEFu

typedef struct
{
  guint32 *param, *k, *a, *b, *runs; /* device */
  guint32 *host_k;                   /* pinned: the HOST stage's source */
  gint host_runs;                    /* runs of the enqueued host function */
} Exec;

static gboolean
seed_a (const TgLaunch *launch, gpointer data, GError **error)
{
  return FS_CUDA (tgt_launch_seed (tg_launch_get_stream (launch),
                                   tg_launch_get_binding (launch, "a"), N,
                                   tg_launch_get_binding (launch, "param")),
                  error);
}

static void
count_host_run (gpointer data)
{
  g_atomic_int_inc (&((Exec *)data)->host_runs);
}

static gboolean
upload_k (TgHostOps *ops, gpointer data, GError **error)
{
  Exec *e = data;

  return tg_host_ops_copy_to_device (ops, e->k, e->host_k, sizeof (guint32), error)
         && tg_host_ops_enqueue (ops, count_host_run, e, error);
}

static gboolean
seed_b (const TgLaunch *launch, gpointer data, GError **error)
{
  return FS_CUDA (tgt_launch_seed (tg_launch_get_stream (launch),
                                   tg_launch_get_binding (launch, "b"), N,
                                   tg_launch_get_binding (launch, "k")),
                  error);
}

static gboolean
combine (const TgLaunch *launch, gpointer data, GError **error)
{
  return FS_CUDA (tgt_launch_combine (tg_launch_get_stream (launch),
                                      tg_launch_get_binding (launch, "a"),
                                      tg_launch_get_binding (launch, "b"), N),
                  error);
}

static TgProducer *
exec_producer (Exec *e, GError **error)
{
  TgProducer *p = tg_producer_new ("fs-exec", 0);
  const gsize size = N * sizeof (guint32);
  guint stage;

  stage = tg_producer_add_device_stage (p, "seed-a", TG_STAGE_CAPTURE_SAFE, seed_a,
                                        NULL, NULL, NULL);
  tg_producer_declare_binding (p, stage, "a", size, NULL);
  tg_producer_declare_binding (p, stage, "param", sizeof (guint32), NULL);
  tg_producer_add_host_stage (p, "upload-k", TG_STAGE_CAPTURE_SAFE, upload_k, e, NULL,
                              NULL);
  stage = tg_producer_add_device_stage (p, "seed-b", TG_STAGE_CAPTURE_SAFE, seed_b,
                                        NULL, NULL, NULL);
  tg_producer_declare_binding (p, stage, "b", size, NULL);
  tg_producer_declare_binding (p, stage, "k", sizeof (guint32), NULL);
  stage = tg_producer_add_device_stage (p, "combine", TG_STAGE_CAPTURE_SAFE, combine,
                                        NULL, NULL, NULL);
  tg_producer_declare_binding (p, stage, "a", size, NULL);
  tg_producer_declare_binding (p, stage, "b", size, NULL);
  stage = tg_producer_add_device_stage (p, "count", TG_STAGE_CAPTURE_SAFE,
                                        fs_count_runs, NULL, NULL, NULL);
  tg_producer_declare_binding (p, stage, "runs", sizeof (guint32), NULL);
  if (tg_producer_bind (p, "param", e->param, sizeof (guint32), error)
      && tg_producer_bind (p, "k", e->k, sizeof (guint32), error)
      && tg_producer_bind (p, "a", e->a, size, error)
      && tg_producer_bind (p, "b", e->b, size, error)
      && tg_producer_bind (p, "runs", e->runs, sizeof (guint32), error))
    return p;
  tg_producer_unref (p);
  return NULL;
}

static gboolean
check_output (Exec *e, GError **error)
{
  g_autofree guint32 *b = g_new (guint32, N);
  g_autofree guint32 *expected = g_new (guint32, N);
  const guint32 expected_runs = FS_POLICY_RUNS;
  const guint32 host_runs = (guint32)g_atomic_int_get (&e->host_runs);
  guint32 runs = 0;

  tg_test_download (b, e->b, N * sizeof (guint32));
  tg_test_download (&runs, e->runs, sizeof runs);
  for (guint32 i = 0; i < N; i++)
    expected[i] = tgt_hash (i, K) + tgt_hash ((guint32)((guint64)i * 7 % N), PARAM);
  return fs_check_equal ("output b", b, expected, N * sizeof (guint32), error)
         && fs_check_equal ("number of runs", &runs, &expected_runs, sizeof runs, error)
         && fs_check_equal ("number of host function runs", &host_runs, &expected_runs,
                            sizeof host_runs, error);
}

gboolean
fs_scenario_exec (FsCtx *ctx, GError **error)
{
  const guint32 param = PARAM;
  Exec e = { 0 };
  TgProducer *p;
  gboolean ok;

  e.param = tg_test_device_alloc (sizeof (guint32));
  e.k = tg_test_device_alloc (sizeof (guint32));
  e.a = tg_test_device_alloc (N * sizeof (guint32));
  e.b = tg_test_device_alloc (N * sizeof (guint32));
  e.runs = tg_test_device_alloc (sizeof (guint32));
  TG_TEST_CUDA (cudaMallocHost ((void **)&e.host_k, sizeof (guint32)));
  *e.host_k = K;
  tg_test_upload (e.param, &param, sizeof param);

  fs_step (ctx, "bind");
  p = exec_producer (&e, error);
  ok = p != NULL && fs_run_policies (ctx, p, error)
       && FS_CUDA (cudaStreamSynchronize (ctx->stream), error)
       && check_output (&e, error);

  /* A failed call may leave work in flight that reads the buffers. */
  (void)FS_CUDA (cudaStreamSynchronize (ctx->stream), NULL);
  fs_step (ctx, "unref");
  if (p != NULL)
    tg_producer_unref (p);
  tg_test_device_free (e.param);
  tg_test_device_free (e.k);
  tg_test_device_free (e.a);
  tg_test_device_free (e.b);
  tg_test_device_free (e.runs);
  TG_TEST_CUDA (cudaFreeHost (e.host_k));
  return ok;
}
