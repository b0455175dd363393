/* SPDX-License-Identifier: Apache-2.0 */
/* capture-private.h: everything that touches stream capture and conditional
 * nodes (graph user objects: keep-private.h).  Private to libtrackgen. */
#ifndef TG_CAPTURE_PRIVATE_H
#define TG_CAPTURE_PRIVATE_H

#include "driver-private.h"
#include "error-private.h"

G_BEGIN_DECLS

typedef struct
{
  TgCaptureState state;
  unsigned long long id;
  cudaGraph_t graph; /* the graph being captured into, while ACTIVE */
} TgCaptureInfo;

/* The rest of tg__capture_query() once the driver's answer was not "not
 * capturing": @err and @status are that answer. */
gboolean tg__capture_query_status (cudaStream_t stream, cudaError_t err,
                                   enum cudaStreamCaptureStatus status,
                                   TgCaptureInfo *info, GError **error);

/* The capture state of @stream, its id and graph while ACTIVE.  Inline, as
 * every call makes it: a stream that is not capturing, the hot path of
 * EAGER and REPLAY, costs one driver call. */
static inline gboolean
tg__capture_query (cudaStream_t stream, TgCaptureInfo *info, GError **error)
{
  enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaError_t err = TG_CUDA_CALL (tg__stream_is_capturing (stream, &status));

  if (G_LIKELY (err == cudaSuccess && status == cudaStreamCaptureStatusNone))
    {
      info->state = TG_CAPTURE_NONE;
      info->id = 0;
      info->graph = NULL;
      return TRUE;
    }
  return tg__capture_query_status (stream, err, status, info, error);
}

/* The capture in progress on @stream (a foreign one), for a call that
 * needs one: @what names what the call does to it, for messages.  An
 * invalidated capture is TG_CAPTURE_ERROR_FAILED, none
 * TG_STATE_ERROR_NOT_CAPTURING. */
gboolean tg__capture_require (cudaStream_t stream, const char *what,
                              TgCaptureInfo *info, GError **error);

/* A capture of TrackGen's own, on one of its private streams. */
gboolean tg__capture_begin (cudaStream_t stream, enum cudaStreamCaptureMode mode,
                            GError **error);
/* Ends it; on success *graph is a new graph (counted), else NULL and
 * TG_CAPTURE_ERROR_FAILED naming the cause. */
gboolean tg__capture_end (cudaStream_t stream, cudaGraph_t *graph, GError **error);

/* Captures into @body (a segment of a conditional node's body:
 * body-private.h, or the body itself) on a side stream.  The end fails
 * (NOT_CAPTURABLE) when the capture broke; the driver has destroyed @body
 * then. */
gboolean tg__capture_begin_body (cudaStream_t stream, cudaGraph_t body,
                                 enum cudaStreamCaptureMode mode, GError **error);
gboolean tg__capture_end_body (cudaStream_t stream, GError **error);

/* Adds to @graph, after @after if not NULL, a child graph node holding
 * *@child, moved in where the driver can (*@child becomes NULL), else
 * copied (*@child is freed); *@node is the new node. */
gboolean tg__capture_add_child (cudaGraph_t graph, cudaGraphNode_t after,
                                cudaGraph_t *child, cudaGraphNode_t *node,
                                GError **error);

/* Creates a conditional handle on @graph, or when NULL on the graph @stream
 * captures into. */
gboolean tg__capture_new_handle (cudaStream_t stream, cudaGraph_t graph,
                                 cudaGraphConditionalHandle *handle, GError **error);

/* Appends a conditional node (IF, WHILE or SWITCH) with @n_bodies bodies
 * after the capturing stream's current dependencies, makes it the stream's
 * only dependency, and returns its body graphs (owned by the node). */
gboolean tg__capture_add_conditional (cudaStream_t stream,
                                      cudaGraphConditionalHandle handle,
                                      enum cudaGraphConditionalNodeType type,
                                      guint n_bodies, cudaGraph_t *bodies,
                                      GError **error);

/* Adds a conditional node to @graph by hand, after @after if not NULL: as
 * tg__capture_add_conditional() does into a capture. */
gboolean tg__graph_add_conditional (cudaGraph_t graph, cudaGraphNode_t after,
                                    cudaGraphConditionalHandle handle,
                                    enum cudaGraphConditionalNodeType type,
                                    guint n_bodies, cudaGraph_t *bodies,
                                    cudaGraphNode_t *node, GError **error);

/* Whether @graph can be embedded as a child graph node: it holds no
 * conditional, allocation or free node (CUDA refuses those in children). */
gboolean tg__capture_embeddable (cudaGraph_t graph, gboolean *embeddable,
                                 GError **error);

/* Appends a child graph node holding @child after the capturing stream's
 * current dependencies, and makes it the stream's only dependency.  The
 * graph is moved into the node where the driver can (then *@child becomes
 * NULL: the caller's graph owns it), else copied. */
gboolean tg__capture_embed (cudaStream_t stream, cudaGraph_t *child, GError **error);

/* NOT_CAPTURABLE (@where names the work for the message) when @graph, or a
 * child graph of it, holds a node the driver rejects in conditional bodies:
 * host nodes, allocations, frees, events. */
gboolean tg__capture_check_body (cudaGraph_t graph, const char *where, GError **error);

/* Finishes a body graph once captured: refuses (NOT_CAPTURABLE) one holding
 * nodes the driver rejects in conditional bodies (@where names the stage and
 * body for the message), and gives an empty one an empty node. */
gboolean tg__capture_finish_body (cudaGraph_t body, const char *where, GError **error);

/* Whether @error is a CUDA error that a capture raised (an operation the
 * capture cannot hold): the work is not capturable, nothing else is wrong. */
gboolean tg__capture_is_refusal (const GError *error);

/* What a kind of conditional node needs from the driver and the runtime. */
typedef enum
{
  TG_CONDITIONAL_IF_WHILE,    /* CUDA 12.4 */
  TG_CONDITIONAL_ELSE_SWITCH, /* an IF with two bodies, a SWITCH: CUDA 12.8 */
} TgConditionalKind;

/* NOT_CAPTURABLE unless the driver and this build have @kind. */
gboolean tg__capture_conditionals_supported (TgConditionalKind kind, GError **error);

G_END_DECLS

#endif
