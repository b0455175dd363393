/* SPDX-License-Identifier: Apache-2.0 */
/* body.c: capturing the body of a conditional node TrackGen made.
 *
 * The body graph, which its node owns, is never what a stream captures
 * into: when such a capture breaks (a stage synchronizes, frees on the
 * legacy stream, ...), cudaStreamEndCapture destroys the graph it filled,
 * and destroying the node's graph then crashes in the driver (H200, driver
 * 580: ending, unhooking the node or destroying in any order crashed too).
 * So a body's work is captured in segments, graphs of TrackGen's that a
 * broken capture may destroy harmlessly, each moved into the body as a
 * child node once its capture ended well.  A nested conditional node of
 * TrackGen's is added to the body between two segments, its handle made on
 * the body and what decides it (a set kernel, a decide function) in the
 * segment before it: a kernel in a child graph sets the handle of a node
 * above it, as a loop's tail kernel and a body that decides its loop do.
 * Launches cost the same GPU time (H200: an IF/ELSE of 32 and 1 kernels,
 * 9.137 us skipped and 37.505 taken with its bodies straight, 9.143 and
 * 37.525 as child nodes).
 *
 * A child graph cannot hold a conditional node: a segment that holds one
 * another made (a user's capture_if, a nested producer's RECORD) makes the
 * body be captured again straight into its graph, where a break cannot be
 * survived. */
#include "config.h"
#include "body-private.h"
#include "resource-private.h"

/* Begins the capture of @graph on the body's stream. */
static gboolean
capture_into (TgBody *body, cudaGraph_t graph, GError **error)
{
  TgCaptureInfo info;

  if (!tg__capture_begin_body (body->stream, graph, body->mode, error))
    return FALSE;
  body->capturing = TRUE;
  if (!tg__capture_query (body->stream, &info, error))
    return FALSE;
  body->id = info.id;
  return TRUE;
}

static gboolean
segment_begin (TgBody *body, GError **error)
{
  if (!TG_CUDA_OK (cudaGraphCreate (&body->segment, 0), error))
    return FALSE;
  tg__live_add (TG_LIVE_GRAPHS, 1);
  if (!capture_into (body, body->segment, error))
    {
      if (!body->capturing)
        g_clear_pointer (&body->segment, tg__graph_free);
      return FALSE;
    }
  return TRUE;
}

/* Ends the segment's capture; with @place, moves what it holds into the
 * body after its last node. */
static gboolean
segment_end (TgBody *body, gboolean place, GError **error)
{
  cudaGraph_t segment = g_steal_pointer (&body->segment);
  cudaGraphNode_t node = NULL;
  gboolean embeddable = FALSE;
  size_t n = 0;

  body->capturing = FALSE;
  if (!tg__capture_end_body (body->stream, place ? error : NULL))
    {
      /* The driver destroyed the segment with its broken capture. */
      tg__live_add (TG_LIVE_GRAPHS, -1);
      return FALSE;
    }
  if (!place)
    {
      tg__graph_free (segment);
      return TRUE;
    }
  if (!TG_CUDA_OK (cudaGraphGetNodes (segment, NULL, &n), error)
      || (n > 0
          && (!tg__capture_check_body (segment, body->where, error)
              || !tg__capture_embeddable (segment, &embeddable, error))))
    {
      tg__graph_free (segment);
      return FALSE;
    }
  if (n == 0)
    {
      tg__graph_free (segment);
      return TRUE;
    }
  if (!embeddable)
    {
      tg__graph_free (segment);
      body->foreign = TRUE;
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_NOT_CAPTURABLE,
                     "%s holds a conditional node TrackGen did not make", body->where);
      return FALSE;
    }
  if (!tg__capture_add_child (body->graph, body->last, &segment, &node, error))
    {
      g_clear_pointer (&segment, tg__graph_free);
      return FALSE;
    }
  body->last = node;
  return TRUE;
}

gboolean
tg__body_begin (TgBody *body, cudaStream_t stream, cudaGraph_t graph, const char *where,
                enum cudaStreamCaptureMode mode, gboolean direct, GArray *handles,
                GError **error)
{
  *body = (TgBody){ .graph = graph,
                    .where = where,
                    .stream = stream,
                    .mode = mode,
                    .direct = direct,
                    .handles = handles };
  return direct ? capture_into (body, graph, error) : segment_begin (body, error);
}

gboolean
tg__body_end (TgBody *body, gboolean place, GError **error)
{
  if (!body->capturing)
    return !place;
  if (body->segment != NULL)
    return segment_end (body, place, error);
  body->capturing = FALSE;
  return tg__capture_end_body (body->stream, place ? error : NULL);
}

gboolean
tg__body_add_conditional (TgBody *body, cudaGraphConditionalHandle handle,
                          enum cudaGraphConditionalNodeType type, guint n_bodies,
                          cudaGraph_t *bodies, GError **error)
{
  cudaGraphNode_t node = NULL;

  if (!segment_end (body, TRUE, error)
      || !tg__graph_add_conditional (body->graph, body->last, handle, type, n_bodies,
                                     bodies, &node, error))
    return FALSE;
  body->last = node;
  return segment_begin (body, error);
}

gboolean
tg__body_new_handle (TgBody *body, cudaStream_t stream, cudaGraphConditionalHandle *handle,
                     GError **error)
{
  GArray *made = body != NULL ? body->handles : NULL;

  if (body == NULL)
    return tg__capture_new_handle (stream, NULL, handle, error);
  if (body->direct && made->len > 0)
    {
      *handle = g_array_index (made, cudaGraphConditionalHandle, made->len - 1);
      g_array_set_size (made, made->len - 1);
      return TRUE;
    }
  /* Straight: on the graph the stream captures into, which is @body->graph. */
  if (!tg__capture_new_handle (stream, body->direct ? NULL : body->graph, handle, error))
    return FALSE;
  if (!body->direct)
    g_array_append_val (made, *handle);
  return TRUE;
}

gboolean
tg__body_clear (TgBody *body, GError **error)
{
  g_autofree cudaGraphNode_t *nodes = NULL;
  size_t n = 0;

  if (!TG_CUDA_OK (cudaGraphGetNodes (body->graph, NULL, &n), error))
    return FALSE;
  if (n == 0)
    return TRUE;
  nodes = g_new (cudaGraphNode_t, n);
  if (!TG_CUDA_OK (cudaGraphGetNodes (body->graph, nodes, &n), error))
    return FALSE;
  for (size_t i = 0; i < n; i++)
    if (!TG_CUDA_OK (cudaGraphDestroyNode (nodes[i]), error))
      return FALSE;
  body->last = NULL;
  return TRUE;
}
