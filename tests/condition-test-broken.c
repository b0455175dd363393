/* SPDX-License-Identifier: Apache-2.0 */
/* condition-test-broken.c: a body whose capture breaks (issue 26 item 2).
 * A stage function that synchronizes its stream inside a condition's body,
 * an else branch, a switch case, a loop body, a nested body, the body of a
 * condition its own kernel decides or of a loop its body decides, or inside
 * a call-level condition, or a decide function inside a body, invalidates
 * that body's capture.  Until 0.4 the
 * driver then destroyed the body graph its node owns, and destroying the
 * outer graph crashed the process.  Each shape must be refused under
 * REPLAY and RECORD as a capture error naming the stage, leave the caller's
 * capture as it was, leak nothing, and let the next call run; EAGER runs
 * the same functions, where a synchronize is allowed. */
#include "config.h"
#include "condition-test.h"

#define LOOP_CAP 3

typedef enum
{
  SHAPE_IF,
  SHAPE_ELSE,
  SHAPE_SWITCH,
  SHAPE_WHILE,
  SHAPE_NESTED,
  SHAPE_IF_BY,
  SHAPE_WHILE_BY,
  SHAPE_NESTED_BY,
  SHAPE_CALL,
  SHAPE_CALL_SILENT,  /* the stage breaks a call condition's body, silently */
  SHAPE_PLAIN_SILENT, /* the stage breaks the call's own capture, silently */
} Shape;

typedef struct
{
  gint32 one, zero, index; /* conditions' flags; the switch's index, 1 */
  gint32 go;               /* the loop's flag */
  gint32 value, target;    /* the loop its body decides */
  guint32 at;              /* the decide kernel's cursor */
  gint32 seen;             /* what it decided */
  TgLoopStatus status;
  guint32 count; /* bodies run */
} Dev;

TG_TEST_DEFINE_GPU_FIXTURE (Dev, dev, 1)

typedef struct
{
  Shape shape;
  Dev *dev;
  gboolean breaking; /* the breaking body synchronizes its stream */
} Case;

/* The body that breaks the capture it runs in, ignoring what the driver
 * said, as a stage unaware of capture does; it counts its runs. */
static gboolean
breaker (const TgLaunch *launch, gpointer data, GError **error)
{
  Case *c = data;

  if (c->breaking)
    {
      (void)cudaStreamSynchronize (tg_launch_get_stream (launch));
      (void)cudaGetLastError ();
    }
  return tg_test_count_stage (launch, &c->dev->count, error);
}

/* A stage that counts, then breaks the capture it runs in and returns
 * TRUE, as a stage that catches the error of a synchronize and goes on
 * (torch's, or Warp's eager paths): only the capture's state tells. */
static gboolean
silent_breaker (const TgLaunch *launch, gpointer data, GError **error)
{
  Case *c = data;

  if (!tg_test_count_stage (launch, &c->dev->count, error))
    return FALSE;
  if (c->breaking)
    {
      (void)cudaStreamSynchronize (tg_launch_get_stream (launch));
      (void)cudaGetLastError ();
    }
  return TRUE;
}

static gboolean
counter (const TgLaunch *launch, gpointer data, GError **error)
{
  Case *c = data;

  return tg_test_count_stage (launch, &c->dev->count, error);
}

static gboolean
nested (const TgLaunch *launch, gpointer data, GError **error)
{
  Case *c = data;

  return tg_launch_if (launch, tg_conditional (&c->dev->one), breaker, data, error);
}

static gboolean
decide_true (const TgLaunch *launch, gpointer data, GError **error)
{
  Case *c = data;

  return tg_test_launched (tgc_launch_decide (tg_launch_get_stream (launch),
                                              tg_launch_get_condition (launch),
                                              &c->dev->one, 1, &c->dev->at,
                                              &c->dev->seen),
                           error);
}

/* A decide function that breaks the capture, inside a body. */
static gboolean
breaking_decide (const TgLaunch *launch, gpointer data, GError **error)
{
  Case *c = data;

  if (c->breaking)
    {
      (void)cudaStreamSynchronize (tg_launch_get_stream (launch));
      (void)cudaGetLastError ();
    }
  return decide_true (launch, data, error);
}

static gboolean
nested_by (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_launch_if_by (launch, breaking_decide, counter, NULL, data, error);
}

/* One iteration that breaks, then ends its loop. */
static gboolean
breaking_iteration (const TgLaunch *launch, gpointer data, GError **error)
{
  Case *c = data;

  return breaker (launch, data, error)
         && tg_test_launched (tgc_launch_relax_next (tg_launch_get_stream (launch),
                                                     tg_launch_get_loop (launch),
                                                     &c->dev->value, &c->dev->target),
                              error);
}

static gboolean
stage (const TgLaunch *launch, gpointer data, GError **error)
{
  Case *c = data;
  const TgDeviceFunc cases[] = { counter, breaker };

  switch (c->shape)
    {
    case SHAPE_IF:
      return tg_launch_if (launch, tg_conditional (&c->dev->one), breaker, data, error);
    case SHAPE_ELSE:
      return tg_launch_if_else (launch, tg_conditional (&c->dev->zero), counter, breaker,
                                data, error);
    case SHAPE_SWITCH:
      return tg_launch_switch (launch, &c->dev->index, G_N_ELEMENTS (cases), cases, data,
                               error);
    case SHAPE_WHILE:
      return tg_launch_while (launch, &c->dev->go, LOOP_CAP, &c->dev->status, breaker,
                              data, error);
    case SHAPE_NESTED:
      return tg_launch_if (launch, tg_conditional (&c->dev->one), nested, data, error);
    case SHAPE_IF_BY:
      return tg_launch_if_by (launch, decide_true, breaker, NULL, data, error);
    case SHAPE_WHILE_BY:
      return tg_launch_while_by (launch, NULL, LOOP_CAP, &c->dev->status,
                                 breaking_iteration, data, error);
    case SHAPE_NESTED_BY:
      return tg_launch_if (launch, tg_conditional (&c->dev->one), nested_by, data, error);
    case SHAPE_CALL:
      return breaker (launch, data, error);
    case SHAPE_CALL_SILENT:
    case SHAPE_PLAIN_SILENT:
      return silent_breaker (launch, data, error);
    }
  g_assert_not_reached ();
}

/* Bodies each shape runs in one call: one, but the loop its flag drives
 * (nothing clears the flag) runs to its cap. */
static guint32
runs_per_call (Shape shape)
{
  return shape == SHAPE_WHILE ? LOOP_CAP : 1;
}

static TgProducer *
producer_new (Case *c)
{
  g_autoptr (GError) error = NULL;
  TgProducer *p = tg_producer_new ("broken", 0);

  tg_producer_add_device_stage (p, "outer", TG_STAGE_CAPTURE_SAFE, stage, c, NULL,
                                &error);
  g_assert_no_error (error);
  return p;
}

static TgCondition
call_condition (Case *c)
{
  return c->shape == SHAPE_CALL || c->shape == SHAPE_CALL_SILENT
             ? tg_conditional (&c->dev->one)
             : tg_unconditional ();
}

static void
set_dev (Fixture *f)
{
  Dev d = { .one = 1, .zero = 0, .index = 1, .go = 1, .value = 0, .target = 1 };

  tg_test_upload (f->dev, &d, sizeof d);
}

/* A call that works (tg_test_run_once()): the count grows by what one call
 * runs. */
static void
run_works (Fixture *f, TgProducer *p, Case *c, TgPolicy policy)
{
  guint32 before = tg_test_read_u32 (&f->dev->count);

  tg_test_run_once (f->gpu.stream, p, policy, call_condition (c));
  g_assert_cmpuint (tg_test_read_u32 (&f->dev->count), ==,
                    before + runs_per_call (c->shape));
}

static void
test_broken (Fixture *f, gconstpointer data)
{
  const TgPolicy policies[] = { TG_POLICY_REPLAY, TG_POLICY_RECORD };
  Case c = { GPOINTER_TO_INT (data), f->dev, TRUE };

  TG_TEST_REQUIRE_GPU ();
  set_dev (f);
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      g_autoptr (TgProducer) p = producer_new (&c);
      g_autoptr (GError) error = NULL;

      c.breaking = TRUE;
      if (policies[i] == TG_POLICY_RECORD)
        tg_test_expect_refusal (p, f->gpu.stream, policies[i], call_condition (&c),
                                TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
      else
        {
          g_assert_false (tg_producer_run (p, f->gpu.stream, policies[i],
                                           call_condition (&c), &error));
          g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
          g_test_message ("refused as expected: %s", error->message);
          g_assert_cmpstr (tg_error_get_stage (error), ==, "outer");
          tg_test_assert_not_capturing (f->gpu.stream);
        }
      /* The next call works, with the same producer. */
      c.breaking = FALSE;
      run_works (f, p, &c, policies[i]);
      run_works (f, p, &c, policies[i]);
    }
  /* Eagerly a synchronize is allowed: the same functions run. */
  {
    g_autoptr (TgProducer) p = producer_new (&c);

    c.breaking = TRUE;
    run_works (f, p, &c, TG_POLICY_EAGER);
  }
}

/* A stage that breaks the capture of its work and says nothing, in a call
 * condition's body or in the call's own graph: refused under REPLAY and
 * RECORD as NOT_CAPTURABLE whose fields name the producer and the stage
 * (the stage was named nowhere until 0.5: the break showed only when the
 * capture ended, after the stages), the caller's capture intact. */
static void
test_broken_silently (Fixture *f, gconstpointer data)
{
  const TgPolicy policies[] = { TG_POLICY_REPLAY, TG_POLICY_RECORD };
  Case c = { GPOINTER_TO_INT (data), f->dev, TRUE };

  TG_TEST_REQUIRE_GPU ();
  set_dev (f);
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      g_autoptr (TgProducer) p = producer_new (&c);
      g_autoptr (GError) error = NULL;
      cudaGraph_t graph = NULL;

      c.breaking = TRUE;
      if (policies[i] == TG_POLICY_RECORD)
        TG_TEST_CUDA (
            cudaStreamBeginCapture (f->gpu.stream, cudaStreamCaptureModeGlobal));
      g_assert_false (
          tg_producer_run (p, f->gpu.stream, policies[i], call_condition (&c), &error));
      g_test_message ("refused as expected: %s", error->message);
      g_assert_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE);
      g_assert_cmpstr (tg_error_get_producer (error), ==, "broken");
      g_assert_cmpstr (tg_error_get_stage (error), ==, "outer");
      if (policies[i] == TG_POLICY_RECORD)
        {
          g_assert_true (tg_stream_is_capturing (f->gpu.stream));
          TG_TEST_CUDA (cudaStreamEndCapture (f->gpu.stream, &graph));
          TG_TEST_CUDA (cudaGraphDestroy (graph));
        }
      tg_test_assert_not_capturing (f->gpu.stream);
      c.breaking = FALSE;
      run_works (f, p, &c, policies[i]);
    }
}

void
tgc_add_broken_tests (void)
{
  static const struct
  {
    const char *path;
    Shape shape;
  } shapes[] = {
    { "/condition/broken-body/if", SHAPE_IF },
    { "/condition/broken-body/else", SHAPE_ELSE },
    { "/condition/broken-body/switch-case", SHAPE_SWITCH },
    { "/condition/broken-body/while", SHAPE_WHILE },
    { "/condition/broken-body/nested", SHAPE_NESTED },
    { "/condition/broken-body/if-by", SHAPE_IF_BY },
    { "/condition/broken-body/while-by", SHAPE_WHILE_BY },
    { "/condition/broken-body/nested-decide", SHAPE_NESTED_BY },
    { "/condition/broken-body/call-condition", SHAPE_CALL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (shapes); i++)
    TG_TEST_ADD_FIXTURE (shapes[i].path, GINT_TO_POINTER (shapes[i].shape), test_broken);
  TG_TEST_ADD_FIXTURE ("/condition/broken-body/call-condition-silent",
                       GINT_TO_POINTER (SHAPE_CALL_SILENT), test_broken_silently);
  TG_TEST_ADD_FIXTURE ("/condition/broken-body/own-graph-silent",
                       GINT_TO_POINTER (SHAPE_PLAIN_SILENT), test_broken_silently);
}
