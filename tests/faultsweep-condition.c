/* SPDX-License-Identifier: Apache-2.0 */
/* faultsweep-condition.c: the condition scenario.  A producer with a
 * guarded stage, a bounded loop stage, and a stage holding an IF/ELSE and a
 * SWITCH, run under every policy; every body counts its runs, so the counts
 * show which branches ran how often. */
#include "config.h"
#include "faultsweep.h"

#define TARGET 5 /* loop iterations per run */
#define MAX_ITERS 8

/* What the bodies count, one slot each. */
enum
{
  RAN_GUARDED,
  RAN_ITERATION,
  RAN_THEN,
  RAN_ELSE,
  RAN_CASE_0,
  RAN_CASE_1,
  RAN_CASE_2,
  RAN_N
};

/* Every device value of the producer, in one allocation; each field is the
 * binding of its name. */
typedef struct
{
  guint32 ran[RAN_N];
  gint32 go;     /* the guarded stage's flag: 1, it runs */
  gint32 pick;   /* the IF/ELSE flag: 0, the else body runs */
  gint32 index;  /* the switch index: case 2 runs */
  gint32 target; /* the loop's value to reach */
  gint32 value, loop_flag;
  TgLoopStatus status;
} Dev;

static gboolean
count (const TgLaunch *launch, guint slot, GError **error)
{
  guint32 *ran = tg_launch_get_binding (launch, "ran");

  return FS_CUDA (tgt_launch_count (tg_launch_get_stream (launch), ran + slot), error);
}

static gboolean
guarded (const TgLaunch *launch, gpointer data, GError **error)
{
  return count (launch, RAN_GUARDED, error);
}

static gboolean
loop_init (const TgLaunch *launch, gpointer data, GError **error)
{
  cudaStream_t stream = tg_launch_get_stream (launch);

  return FS_CUDA (tgt_launch_set (stream, tg_launch_get_binding (launch, "value"), 0),
                  error)
         && FS_CUDA (
             tgt_launch_set (stream, tg_launch_get_binding (launch, "loop_flag"), 1),
             error);
}

static gboolean
relax (const TgLaunch *launch, gpointer data, GError **error)
{
  return FS_CUDA (tgt_launch_relax (tg_launch_get_stream (launch),
                                    tg_launch_get_binding (launch, "value"),
                                    tg_launch_get_binding (launch, "loop_flag"),
                                    tg_launch_get_binding (launch, "target")),
                  error)
         && count (launch, RAN_ITERATION, error);
}

static gboolean
then_body (const TgLaunch *launch, gpointer data, GError **error)
{
  return count (launch, RAN_THEN, error);
}

static gboolean
else_body (const TgLaunch *launch, gpointer data, GError **error)
{
  return count (launch, RAN_ELSE, error);
}

static gboolean
case_0 (const TgLaunch *launch, gpointer data, GError **error)
{
  return count (launch, RAN_CASE_0, error);
}

static gboolean
case_1 (const TgLaunch *launch, gpointer data, GError **error)
{
  return count (launch, RAN_CASE_1, error);
}

static gboolean
case_2 (const TgLaunch *launch, gpointer data, GError **error)
{
  return count (launch, RAN_CASE_2, error);
}

static gboolean
branch (const TgLaunch *launch, gpointer data, GError **error)
{
  static const TgDeviceFunc cases[] = { case_0, case_1, case_2 };

  return tg_launch_if_else (launch,
                            tg_conditional (tg_launch_get_binding (launch, "pick")),
                            then_body, else_body, NULL, error)
         && tg_launch_switch (launch, tg_launch_get_binding (launch, "index"),
                              G_N_ELEMENTS (cases), cases, NULL, error);
}

#define DECLARE(p, stage, field)                                                       \
  tg_producer_declare_binding (p, stage, #field, sizeof (((Dev *)NULL)->field), NULL)
#define BIND(p, dev, field, error)                                                     \
  tg_producer_bind (p, #field, &(dev)->field, sizeof ((dev)->field), error)

static TgProducer *
condition_producer (Dev *dev, GError **error)
{
  const TgLoopSpec loop = { .flag_binding = "loop_flag",
                            .status_binding = "status",
                            .max_iters = MAX_ITERS };
  TgProducer *p = tg_producer_new ("fs-condition", 0);
  guint stage;

  stage = tg_producer_add_device_stage (p, "guarded", TG_STAGE_CAPTURE_SAFE, guarded,
                                        NULL, NULL, NULL);
  tg_producer_set_stage_condition (p, stage, "go", NULL);
  DECLARE (p, stage, ran);
  stage = tg_producer_add_device_stage (p, "loop-init", TG_STAGE_CAPTURE_SAFE,
                                        loop_init, NULL, NULL, NULL);
  DECLARE (p, stage, value);
  DECLARE (p, stage, loop_flag);
  stage = tg_producer_add_loop_stage (p, "relax", TG_STAGE_CAPTURE_SAFE, &loop, relax,
                                      NULL, NULL, NULL);
  DECLARE (p, stage, value);
  DECLARE (p, stage, target);
  DECLARE (p, stage, ran);
  stage = tg_producer_add_device_stage (p, "branch", TG_STAGE_CAPTURE_SAFE, branch,
                                        NULL, NULL, NULL);
  DECLARE (p, stage, pick);
  DECLARE (p, stage, index);
  DECLARE (p, stage, ran);
  if (BIND (p, dev, ran, error) && BIND (p, dev, go, error)
      && BIND (p, dev, pick, error) && BIND (p, dev, index, error)
      && BIND (p, dev, target, error) && BIND (p, dev, value, error)
      && BIND (p, dev, loop_flag, error) && BIND (p, dev, status, error))
    return p;
  tg_producer_unref (p);
  return NULL;
}

static gboolean
check_counts (const Dev *dev, GError **error)
{
  Dev got;
  guint32 expected[RAN_N] = { 0 };
  const TgLoopStatus converged = { TARGET, TG_LOOP_END_CONVERGED };

  expected[RAN_GUARDED] = FS_POLICY_RUNS;
  expected[RAN_ITERATION] = FS_POLICY_RUNS * TARGET;
  expected[RAN_ELSE] = FS_POLICY_RUNS;
  expected[RAN_CASE_2] = FS_POLICY_RUNS;
  tg_test_download (&got, dev, sizeof got);
  return fs_check_equal ("run counts", got.ran, expected, sizeof expected, error)
         && fs_check_equal ("loop status", &got.status, &converged, sizeof converged,
                            error);
}

gboolean
fs_scenario_condition (FsCtx *ctx, GError **error)
{
  const Dev init = { .go = 1, .pick = 0, .index = 2, .target = TARGET };
  Dev *dev = tg_test_device_alloc (sizeof (Dev));
  TgProducer *p;
  gboolean ok;

  tg_test_upload (dev, &init, sizeof init);
  fs_step (ctx, "bind");
  p = condition_producer (dev, error);
  ok = p != NULL && fs_run_policies (ctx, p, error)
       && FS_CUDA (cudaStreamSynchronize (ctx->stream), error)
       && check_counts (dev, error);

  /* A failed call may leave work in flight that writes @dev. */
  (void)FS_CUDA (cudaStreamSynchronize (ctx->stream), NULL);
  fs_step (ctx, "unref");
  if (p != NULL)
    tg_producer_unref (p);
  tg_test_device_free (dev);
  return ok;
}
