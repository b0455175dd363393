/* SPDX-License-Identifier: Apache-2.0 */
/* condition-test-bodies.c: what condition bodies may be and see, under
 * EAGER, REPLAY and RECORD alike: empty bodies (a then or else branch, a
 * switch case, a loop body that launches nothing), a switch of more cases
 * than 0.2 could capture served by one function (tg_launch_get_case()),
 * and bodies that look up their stage's bindings and bound sizes. */
#include "config.h"
#include "condition-test.h"

#define MANY_CASES 100
#define LOOP_CAP 6

/* The device values of these tests, in one allocation. */
typedef struct
{
  gint32 flag; /* the conditions' flag, the switch index */
  gint32 go;   /* the empty loop's flag, never cleared */
  TgLoopStatus status;
  guint32 count; /* kernels the bodies ran */
  gint32 picked; /* the case a switch ran */
  guint32 sizes[2];
} Dev;

TG_TEST_DEFINE_GPU_FIXTURE (Dev, dev, 1)

static const TgPolicy policies[]
    = { TG_POLICY_EAGER, TG_POLICY_REPLAY, TG_POLICY_RECORD };

static gboolean
nothing (const TgLaunch *launch, gpointer data, GError **error)
{
  return TRUE;
}

static gboolean
count (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_count_bound_stage (launch, data, error);
}

static void
bind_dev (Fixture *f, TgProducer *p)
{
  static const struct
  {
    const char *name;
    gsize offset, size;
  } fields[] = {
    { "flag", G_STRUCT_OFFSET (Dev, flag), sizeof (gint32) },
    { "go", G_STRUCT_OFFSET (Dev, go), sizeof (gint32) },
    { "status", G_STRUCT_OFFSET (Dev, status), sizeof (TgLoopStatus) },
    { "counter", G_STRUCT_OFFSET (Dev, count), sizeof (guint32) },
    { "picked", G_STRUCT_OFFSET (Dev, picked), sizeof (gint32) },
    { "sizes", G_STRUCT_OFFSET (Dev, sizes), 2 * sizeof (guint32) },
  };
  g_autoptr (GError) error = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    g_assert_true (tg_producer_bind (p, fields[i].name,
                                     (guint8 *)f->dev + fields[i].offset,
                                     fields[i].size, &error));
  g_assert_no_error (error);
}

static Dev
read_dev (Fixture *f)
{
  Dev d;

  tg_test_download (&d, f->dev, sizeof d);
  return d;
}

/* ------------------------------------------------------------------------ */
/* Empty bodies                                                              */

static gboolean
empty_bodies_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  const TgDeviceFunc cases[] = { nothing, count };
  gint32 *flag = tg_launch_get_binding (launch, "flag");

  /* An empty else, an empty then, an empty IF body, an empty case 0. */
  return tg_launch_if_else (launch, tg_conditional (flag), count, nothing, NULL, error)
         && tg_launch_if_else (launch, tg_conditional (flag), nothing, count, NULL,
                               error)
         && tg_launch_if (launch, tg_conditional (flag), nothing, NULL, error)
         && tg_launch_switch (launch, flag, G_N_ELEMENTS (cases), cases, NULL, error);
}

static void
test_empty_bodies (Fixture *f, gconstpointer data)
{
  const TgLoopSpec loop
      = { .flag_binding = "go", .status_binding = "status", .max_iters = LOOP_CAP };
  TgLiveObjects before;

  TG_TEST_REQUIRE_GPU ();
  tg_test_live_snapshot (&before);
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    for (gint32 flag = 0; flag <= 1; flag++)
      {
        const gint32 go = 1;
        g_autoptr (TgProducer) p = tg_producer_new ("empty", 0);
        guint s = tg_producer_add_device_stage (p, "branches", TG_STAGE_CAPTURE_SAFE,
                                                empty_bodies_stage, NULL, NULL, NULL);
        guint guarded;
        Dev d;

        tg_producer_declare_binding (p, s, "flag", sizeof (gint32), NULL);
        tg_producer_declare_binding (p, s, "counter", sizeof (guint32), NULL);
        /* A guarded stage whose else branch is empty. */
        guarded = tg_producer_add_device_stage (p, "guarded", TG_STAGE_CAPTURE_SAFE,
                                                count, NULL, NULL, NULL);
        tg_producer_declare_binding (p, guarded, "counter", sizeof (guint32), NULL);
        tg_producer_set_stage_condition (p, guarded, "flag", NULL);
        tg_producer_set_stage_else (p, guarded, nothing, NULL);
        /* A loop whose body launches nothing: its flag is never cleared. */
        tg_producer_add_loop_stage (p, "idle", TG_STAGE_CAPTURE_SAFE, &loop, nothing,
                                    NULL, NULL, NULL);
        bind_dev (f, p);
        tg_test_device_clear (f->dev, sizeof (Dev));
        tg_test_upload (&f->dev->flag, &flag, sizeof flag);
        tg_test_upload (&f->dev->go, &go, sizeof go);
        tg_test_run_once (f->gpu.stream, p, policies[i], tg_unconditional ());
        d = read_dev (f);
        g_test_message ("%s, flag %d: %u kernels", tg_policy_to_string (policies[i]),
                        flag, d.count);
        /* flag 0: one else branch counts; flag 1: one then branch, case 1 and
         * the guarded stage. */
        g_assert_cmpuint (d.count, ==, flag ? 3 : 1);
        g_assert_cmpint (d.status.iterations, ==, LOOP_CAP);
        g_assert_cmpint (d.status.end, ==, TG_LOOP_END_CAPPED);
      }
  tg_test_assert_no_leaks (&before);
}

/* ------------------------------------------------------------------------ */
/* A switch of many cases, one function for all                              */

static gboolean
which_case (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_test_launched (tgt_launch_set (tg_launch_get_stream (launch),
                                           tg_launch_get_binding (launch, "picked"),
                                           tg_launch_get_case (launch)),
                           error);
}

static void
test_many_cases (Fixture *f, gconstpointer data)
{
  TgDeviceFunc cases[MANY_CASES];
  const TgSwitchSpec sw
      = { .index_binding = "flag", .n_cases = MANY_CASES, .cases = cases };
  const gint32 picks[] = { 0, 63, 64, 99, 100, -1 };
  TgLiveObjects before;

  TG_TEST_REQUIRE_GPU ();
  tg_test_live_snapshot (&before);
  for (guint c = 0; c < MANY_CASES; c++)
    cases[c] = which_case;
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      g_autoptr (TgProducer) p = tg_producer_new ("many", 0);
      g_autoptr (GError) error = NULL;
      guint s = tg_producer_add_switch_stage (p, "pick", TG_STAGE_CAPTURE_SAFE, &sw,
                                              NULL, NULL, NULL);
      TgPolicy resolved = TG_POLICY_AUTO;

      tg_producer_declare_binding (p, s, "picked", sizeof (gint32), NULL);
      bind_dev (f, p);
      g_assert_true (tg_producer_resolve (p, f->gpu.stream, TG_POLICY_AUTO,
                                          tg_unconditional (), &resolved, NULL,
                                          &error));
      g_assert_cmpint (resolved, ==, TG_POLICY_REPLAY);
      for (guint k = 0; k < G_N_ELEMENTS (picks); k++)
        {
          const gint32 none = -7;

          tg_test_upload (&f->dev->flag, &picks[k], sizeof (gint32));
          tg_test_upload (&f->dev->picked, &none, sizeof none);
          tg_test_run_once (f->gpu.stream, p, policies[i], tg_unconditional ());
          g_assert_cmpint (read_dev (f).picked, ==,
                           picks[k] >= 0 && picks[k] < MANY_CASES ? picks[k] : none);
        }
    }
  tg_test_assert_no_leaks (&before);
}

/* ------------------------------------------------------------------------ */
/* Bodies see the stage's bindings                                           */

/* A body that checks what it sees of its stage's bindings, then counts. */
static gboolean
count_seeing_sizes (const TgLaunch *launch, gpointer data, GError **error)
{
  gsize counter = tg_launch_get_binding_size (launch, "counter");
  gsize sizes = tg_launch_get_binding_size (launch, "sizes");

  /* "sizes" is declared as 4 bytes and bound with 8: the bound size. */
  if (counter != sizeof (guint32) || sizes != 2 * sizeof (guint32))
    {
      g_set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                   "the body saw sizes %zu and %zu", counter, sizes);
      return FALSE;
    }
  return count (launch, data, error);
}

static gboolean
bindings_stage (const TgLaunch *launch, gpointer data, GError **error)
{
  return tg_launch_if_else (launch,
                            tg_conditional (tg_launch_get_binding (launch, "flag")),
                            count_seeing_sizes, count_seeing_sizes, NULL, error);
}

static void
test_bodies_see_bindings (Fixture *f, gconstpointer data)
{
  TgLiveObjects before;

  TG_TEST_REQUIRE_GPU ();
  tg_test_live_snapshot (&before);
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      g_autoptr (TgProducer) p = tg_producer_new ("see", 0);
      guint s = tg_producer_add_device_stage (p, "branches", TG_STAGE_CAPTURE_SAFE,
                                              bindings_stage, NULL, NULL, NULL);

      /* Declared smaller than bound: the body learns the bound size. */
      tg_producer_declare_binding (p, s, "flag", sizeof (gint32), NULL);
      tg_producer_declare_binding (p, s, "counter", sizeof (guint32), NULL);
      tg_producer_declare_binding (p, s, "sizes", sizeof (guint32), NULL);
      bind_dev (f, p);
      tg_test_device_clear (f->dev, sizeof (Dev));
      tg_test_run_once (f->gpu.stream, p, policies[i], tg_unconditional ());
      g_assert_cmpuint (read_dev (f).count, ==, 1);
    }
  tg_test_assert_no_leaks (&before);
}

void
tgc_add_body_tests (void)
{
  TG_TEST_ADD_FIXTURE ("/condition/bodies/empty-under-every-policy", NULL,
                       test_empty_bodies);
  TG_TEST_ADD_FIXTURE ("/condition/switch/many-cases-one-function", NULL,
                       test_many_cases);
  TG_TEST_ADD_FIXTURE ("/condition/bodies/see-stage-bindings", NULL,
                       test_bodies_see_bindings);
}
