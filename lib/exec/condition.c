/* condition.c: conditions (IF) and bounded loops (WHILE).  Captured, the
 * guarded work is the body graph of a conditional node, captured on a side
 * stream of the producer (one per nesting depth) with
 * cudaStreamBeginCaptureToGraph, so conditions and loops nest.  Eagerly, the
 * flag or the loop status is read back on the host. */
#include "config.h"
#include "condition-private.h"
#include "producer-private.h"

static gboolean
captured (const TgLaunch *launch, enum cudaGraphConditionalNodeType type,
          const gint32 *flag, guint max_iters, TgLoopStatus *status, TgDeviceFunc body,
          gpointer data, GError **error)
{
  TgProducer *p = launch->producer;
  gboolean loop = type == cudaGraphCondTypeWhile;
  cudaGraphConditionalHandle handle;
  cudaGraph_t body_graph = NULL;
  cudaStream_t side;
  const char *where = loop ? "the loop's body" : "the condition's body";
  TgCaptureInfo info;
  TgLaunch inner;
  gboolean ok, ended;

  if (!tg__capture_conditionals_supported (error)
      || (side = tg__producer_side_stream (p, launch->depth, error)) == NULL
      || !tg__capture_new_handle (launch->stream, &handle, error)
      || !TG_CUDA_OK (
          loop ? tg__launch_loop_entry (launch->stream, handle, TRUE, flag, status)
               : tg__launch_if_set (launch->stream, handle, flag),
          error)
      || !tg__capture_add_conditional (launch->stream, handle, type, &body_graph, error)
      || !tg__capture_begin_body (side, body_graph, launch->mode, error))
    return FALSE;

  inner = *launch;
  inner.stream = side;
  inner.depth++;
  ok = tg__capture_query (side, &info, error);
  inner.capture_id = info.id;
  inner.capture_graph = body_graph;
  ok = ok && body (&inner, data, error);
  if (ok && loop)
    ok = TG_CUDA_OK (tg__launch_loop_tail (side, handle, TRUE, flag, status, max_iters),
                     error);
  /* End the body capture whatever happened: no stream is left capturing.  A
   * refusal raised by the capture itself becomes NOT_CAPTURABLE in
   * tg__stages_capture(), which every captured body runs under first. */
  ended = tg__capture_end_body (side, ok ? error : NULL);
  if (!ok || !ended)
    return FALSE;
  return tg__capture_check_body (body_graph, where, error);
}

gboolean
tg__condition_if (const TgLaunch *launch, const gint32 *flag, TgDeviceFunc body,
                  gpointer data, GError **error)
{
  TgLaunch inner;
  gint32 value = 0;

  if (launch->capturing)
    return captured (launch, cudaGraphCondTypeIf, flag, 0, NULL, body, data, error);
  if (!tg__producer_readback (launch->producer, launch->stream, flag, sizeof value,
                              &value, error))
    return FALSE;
  if (value == 0)
    return TRUE;
  inner = *launch;
  inner.depth++;
  return body (&inner, data, error);
}

gboolean
tg__condition_while (const TgLaunch *launch, const gint32 *flag, guint max_iters,
                     TgLoopStatus *status, TgDeviceFunc body, gpointer data,
                     GError **error)
{
  TgProducer *p = launch->producer;
  TgLoopStatus now = { 0, TG_LOOP_END_NONE };
  TgLaunch inner;

  if (launch->capturing)
    return captured (launch, cudaGraphCondTypeWhile, flag, max_iters, status, body,
                     data, error);
  inner = *launch;
  inner.depth++;
  if (!TG_CUDA_OK (tg__launch_loop_entry (launch->stream, 0, FALSE, flag, status),
                   error)
      || !tg__producer_readback (p, launch->stream, status, sizeof now, &now, error))
    return FALSE;
  while (now.end == TG_LOOP_END_NONE)
    {
      if (!body (&inner, data, error)
          || !TG_CUDA_OK (
              tg__launch_loop_tail (launch->stream, 0, FALSE, flag, status, max_iters),
              error)
          || !tg__producer_readback (p, launch->stream, status, sizeof now, &now,
                                     error))
        return FALSE;
    }
  return TRUE;
}
