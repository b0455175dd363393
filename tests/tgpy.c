/* tgpy.c: a thin C face over libtrackgen for tests/interop-torch.py, which
 * loads it (with the three archives) as a shared object through ctypes.
 * Errors come back as a message in a caller's buffer.  Streams are passed
 * as they are: torch's cuda_stream (0 is CUDA's default stream), or
 * TG_STREAM_AUTO. */
#include "config.h"
#include "tg-test.h"

/* The test producer: out[i] = mix(hash(i, *param)), guarded per call. */
typedef struct
{
  guint32 n;
} PyChain;

static gint finalized;

static void
py_chain_free (gpointer data)
{
  g_free (data);
  g_atomic_int_inc (&finalized);
}

static gboolean
py_seed (const TgLaunch *launch, gpointer data, GError **error)
{
  PyChain *c = data;
  return tg_test_launched (tgt_launch_seed (tg_launch_get_stream (launch),
                                            tg_launch_get_binding (launch, "out"), c->n,
                                            tg_launch_get_binding (launch, "param")),
                           error);
}

static gboolean
py_mix (const TgLaunch *launch, gpointer data, GError **error)
{
  PyChain *c = data;
  return tg_test_launched (tgt_launch_mix (tg_launch_get_stream (launch),
                                           tg_launch_get_binding (launch, "out"), c->n,
                                           7),
                           error);
}

static gboolean
report (gboolean ok, GError *error, char *buf, int len)
{
  if (!ok && buf != NULL && len > 0)
    g_strlcpy (buf, error != NULL ? error->message : "failed", len);
  g_clear_error (&error);
  return ok;
}

TgProducer *tgpy_chain_new (guint32 n, guint32 *out, guint32 *param, char *buf,
                            int len);
gboolean tgpy_run (TgProducer *p, cudaStream_t stream, int policy, const gint32 *flag,
                   char *buf, int len);
void tgpy_unref (TgProducer *p);
int tgpy_finalized (void);
gboolean tgpy_release_wait (gint64 timeout_us);
TgCaptureScope *tgpy_scope_begin (cudaStream_t stream, int mode, char *buf, int len);
gboolean tgpy_scope_end (TgCaptureScope *scope, char *buf, int len);
TgSeedState *tgpy_seeds_new (guint n, guint64 base, char *buf, int len);
gboolean tgpy_seeds_advance (TgSeedState *s, cudaStream_t stream, const guint8 *mask,
                             gsize len, char *buf, int buflen);
gboolean tgpy_seeds_epochs (TgSeedState *s, cudaStream_t stream, guint32 *epochs,
                            char *buf, int len);
void tgpy_seeds_unref (TgSeedState *s);
gboolean tgpy_reaper_hold (char *buf, int len);
void tgpy_reaper_release (void);

TgProducer *
tgpy_chain_new (guint32 n, guint32 *out, guint32 *param, char *buf, int len)
{
  TgProducer *p = tg_producer_new ("torch-chain", 0);
  PyChain *c = g_new0 (PyChain, 1);
  GError *error = NULL;
  guint stage;

  c->n = n;
  stage = tg_producer_add_device_stage (p, "seed", TG_STAGE_CAPTURE_SAFE, py_seed, c,
                                        py_chain_free, NULL);
  tg_producer_declare_binding (p, stage, "out", n * sizeof (guint32), NULL);
  tg_producer_declare_binding (p, stage, "param", sizeof (guint32), NULL);
  stage = tg_producer_add_device_stage (p, "mix", TG_STAGE_CAPTURE_SAFE, py_mix, c,
                                        NULL, NULL);
  tg_producer_declare_binding (p, stage, "out", n * sizeof (guint32), NULL);
  if (!report (tg_producer_bind (p, "out", out, n * sizeof (guint32), &error)
                   && tg_producer_bind (p, "param", param, sizeof (guint32), &error),
               error, buf, len))
    {
      tg_producer_unref (p);
      return NULL;
    }
  return p;
}

gboolean
tgpy_run (TgProducer *p, cudaStream_t stream, int policy, const gint32 *flag, char *buf,
          int len)
{
  GError *error = NULL;
  TgCondition cond = flag != NULL ? tg_conditional (flag) : tg_unconditional ();

  return report (tg_producer_run (p, stream, policy, cond, &error), error, buf, len);
}

void
tgpy_unref (TgProducer *p)
{
  tg_producer_unref (p);
}

int
tgpy_finalized (void)
{
  return g_atomic_int_get (&finalized);
}

gboolean
tgpy_release_wait (gint64 timeout_us)
{
  return tg_release_wait (timeout_us);
}

TgCaptureScope *
tgpy_scope_begin (cudaStream_t stream, int mode, char *buf, int len)
{
  GError *error = NULL;
  TgCaptureScope *scope = tg_capture_scope_begin (stream, mode, &error);

  report (scope != NULL, error, buf, len);
  return scope;
}

gboolean
tgpy_scope_end (TgCaptureScope *scope, char *buf, int len)
{
  GError *error = NULL;
  gboolean ok = tg_capture_scope_end (scope, &error);

  if (ok)
    tg_capture_scope_free (scope);
  return report (ok, error, buf, len);
}

TgSeedState *
tgpy_seeds_new (guint n, guint64 base, char *buf, int len)
{
  GError *error = NULL;
  TgSeedState *s = tg_seed_state_new (0, n, base, &error);

  report (s != NULL, error, buf, len);
  return s;
}

gboolean
tgpy_seeds_advance (TgSeedState *s, cudaStream_t stream, const guint8 *mask, gsize len,
                    char *buf, int buflen)
{
  GError *error = NULL;

  return report (tg_seed_state_advance (s, stream, mask, len, &error), error, buf,
                 buflen);
}

gboolean
tgpy_seeds_epochs (TgSeedState *s, cudaStream_t stream, guint32 *epochs, char *buf,
                   int len)
{
  GError *error = NULL;

  return report (tg_seed_state_read (s, stream, NULL, epochs, &error), error, buf, len);
}

void
tgpy_seeds_unref (TgSeedState *s)
{
  tg_seed_state_unref (s);
}

/* Holding TrackGen's reaper thread, so that a release queued behind it
 * happens exactly when Python wants it (inside a capture): the reaper frees
 * a producer retained by a graph, whose stage's destroy notify waits at a
 * gate until tgpy_reaper_release().  The reaper works through its queue in
 * order, so releases queued meanwhile wait behind the gate. */
static GMutex gate_lock;
static GCond gate_cond;
static gboolean gate_held, gate_open;

static gboolean
never_run (const TgLaunch *launch, gpointer data, GError **error)
{
  g_set_error_literal (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                       "the gate producer is never run");
  return FALSE;
}

static void
gate_wait (gpointer data)
{
  g_mutex_lock (&gate_lock);
  gate_held = TRUE;
  g_cond_broadcast (&gate_cond);
  while (!gate_open)
    g_cond_wait (&gate_cond, &gate_lock);
  gate_held = gate_open = FALSE;
  g_mutex_unlock (&gate_lock);
}

/* Returns once the reaper waits at the gate (call it outside any capture). */
gboolean
tgpy_reaper_hold (char *buf, int len)
{
  TgProducer *gate = tg_producer_new ("reaper-gate", 0);
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  GError *error = NULL;
  cudaGraph_t graph = NULL;
  gboolean ok;

  tg_producer_add_device_stage (gate, "gate", TG_STAGE_CAPTURE_SAFE, never_run, NULL,
                                gate_wait, NULL);
  ok = tg_test_launched (cudaGraphCreate (&graph, 0), &error)
       && tg_retain (graph, gate, &error);
  /* Not retained: this unref frees it here, and must pass the gate. */
  if (!ok)
    tgpy_reaper_release ();
  tg_producer_unref (gate);
  /* The graph's end drops its reference: the reaper frees the producer. */
  if (graph != NULL)
    ok = tg_test_launched (cudaGraphDestroy (graph), ok ? &error : NULL) && ok;
  g_mutex_lock (&gate_lock);
  while (ok && !gate_held)
    if (!g_cond_wait_until (&gate_cond, &gate_lock, deadline) && !gate_held)
      {
        g_set_error_literal (&error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                             "the reaper did not reach the gate within 10 s");
        ok = FALSE;
      }
  g_mutex_unlock (&gate_lock);
  return report (ok, error, buf, len);
}

/* Opens the gate: no CUDA call, safe inside any capture. */
void
tgpy_reaper_release (void)
{
  g_mutex_lock (&gate_lock);
  gate_open = TRUE;
  g_cond_broadcast (&gate_cond);
  g_mutex_unlock (&gate_lock);
}
