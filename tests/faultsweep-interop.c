/* SPDX-License-Identifier: Apache-2.0 */
/* faultsweep-interop.c: the interop scenario.  The scenario begins a capture
 * of its own, as torch.cuda.graph does, and registers it with a capture
 * scope; a producer and a seed state called with TG_STREAM_AUTO record into
 * it, and the graph retains the producer.  The scenario drops its reference,
 * ends the scope and the capture, replays the graph once, destroys it, and
 * waits for the producer's release on TrackGen's reaper thread. */
#include "config.h"
#include "faultsweep.h"

#define ENVS 16
#define BASE G_GUINT64_CONSTANT (0x1A7E2B0B5EED)

static TgProducer *
interop_producer (guint32 *runs, GError **error)
{
  TgProducer *p = tg_producer_new ("fs-interop", 0);
  guint stage = tg_producer_add_device_stage (p, "count", TG_STAGE_CAPTURE_SAFE,
                                              fs_count_runs, NULL, NULL, NULL);

  tg_producer_declare_binding (p, stage, "runs", sizeof (guint32), NULL);
  if (tg_producer_bind (p, "runs", runs, sizeof (guint32), error))
    return p;
  tg_producer_unref (p);
  return NULL;
}

/* Records @p and an advance of @state into the capture on ctx->stream,
 * registered for the call, naming no stream. */
static gboolean
record (FsCtx *ctx, TgProducer *p, TgSeedState *state, GError **error)
{
  TgCaptureScope *scope;
  gboolean ok;

  fs_step (ctx, "scope begin");
  scope = tg_capture_scope_begin (ctx->stream, cudaStreamCaptureModeGlobal, error);
  if (scope == NULL)
    return FALSE;
  fs_step (ctx, "record");
  ok = tg_producer_run (p, TG_STREAM_AUTO, TG_POLICY_AUTO, tg_unconditional (), error)
       && tg_seed_state_advance (state, TG_STREAM_AUTO, NULL, 0, error);
  fs_step (ctx, "scope end");
  ok = ok && tg_capture_scope_end (scope, error);
  tg_capture_scope_free (scope);
  return ok;
}

/* The graph ran the producer's work and the advance once each. */
static gboolean
check_replay (guint32 *runs, TgSeedState *state, cudaStream_t stream, GError **error)
{
  const guint32 one = 1;
  guint32 got = 0, epochs[ENVS], expected[ENVS];

  for (guint i = 0; i < ENVS; i++)
    expected[i] = 1;
  tg_test_download (&got, runs, sizeof got);
  return fs_check_equal ("producer runs", &got, &one, sizeof got, error)
         && tg_seed_state_read (state, stream, NULL, epochs, error)
         && fs_check_equal ("epochs", epochs, expected, sizeof epochs, error);
}

gboolean
fs_scenario_interop (FsCtx *ctx, GError **error)
{
  guint32 *runs = tg_test_device_alloc (sizeof (guint32));
  TgSeedState *state = NULL;
  TgLiveObjects live;
  TgProducer *p;
  gint producers;
  gboolean ok;

  tg_get_live_objects (&live);
  producers = live.producers;
  fs_step (ctx, "setup");
  p = interop_producer (runs, error);
  ok = p != NULL && (state = tg_seed_state_new (0, ENVS, BASE, error)) != NULL
       && fs_capture_begin (ctx, error);
  if (ok)
    {
      ok = record (ctx, p, state, error);
      /* From here on only the graph holds the producer, if it recorded it. */
      g_clear_pointer (&p, tg_producer_unref);
      tg_get_live_objects (&live);
      if (ok && live.producers != producers + 1)
        {
          g_set_error (error, FS_ERROR, 0,
                       "the capture's graph did not retain the "
                       "producer it recorded");
          ok = FALSE;
        }
      fs_step (ctx, "replay, release");
      ok = fs_capture_end (ctx, ok, error);
      /* Destroying the graph queued the producer's release. */
      if (!tg_release_wait (5 * G_USEC_PER_SEC) && ok)
        {
          g_set_error (error, FS_ERROR, 0,
                       "the producer the graph retained was not "
                       "released within 5 s of its destruction");
          ok = FALSE;
        }
      fs_step (ctx, "check");
      ok = ok && check_replay (runs, state, ctx->stream, error);
    }

  (void)FS_CUDA (cudaStreamSynchronize (ctx->stream), NULL);
  fs_step (ctx, "unref");
  if (p != NULL)
    tg_producer_unref (p);
  if (state != NULL)
    tg_seed_state_unref (state);
  tg_test_device_free (runs);
  return ok;
}
