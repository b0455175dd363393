/* SPDX-License-Identifier: Apache-2.0 */
/* body-private.h: capturing the body of a conditional node TrackGen made
 * (condition.c).  Private to libtrackgen. */
#ifndef TG_BODY_PRIVATE_H
#define TG_BODY_PRIVATE_H

#include "capture-private.h"
#include "producer-private.h"

G_BEGIN_DECLS

typedef struct _TgBody TgBody;
struct _TgBody
{
  cudaGraph_t graph;      /* the body, owned by its node */
  const char *where;      /* the body, for messages */
  cudaStream_t stream;    /* the side stream that captures it */
  enum cudaStreamCaptureMode mode;
  gboolean direct;        /* captured straight into @graph, without segments */
  gboolean capturing;     /* @stream captures now (a segment, or straight) */
  cudaGraph_t segment;    /* what @stream captures into now, or NULL */
  cudaGraphNode_t last;   /* the body's last node, NULL while it has none */
  gboolean foreign;       /* a segment held a conditional node of another's */
  unsigned long long id;  /* the capture id of what @stream captures now */
  GArray *handles;        /* made on @graph in segments, for the direct retry */
};

/* The capture @launch's work goes into now (tg_launch_get_capture_id()):
 * a body of ours is captured in segments, each a capture of its own.
 * Inline: checked mode asks it too, below the launch. */
static inline unsigned long long
tg__launch_capture_id (const TgLaunch *launch)
{
  if (!launch->capturing)
    return 0;
  return launch->body != NULL ? launch->body->id : launch->capture_id;
}

/* Begins capturing @graph (named @where in messages) on @stream: in
 * segments, or @direct.  @handles (the caller's, kept over the attempts)
 * gets the handles made on @graph in segments; a direct attempt takes
 * them again. */
gboolean tg__body_begin (TgBody *body, cudaStream_t stream, cudaGraph_t graph,
                         const char *where, enum cudaStreamCaptureMode mode,
                         gboolean direct, GArray *handles, GError **error);

/* The handle of a conditional node of TrackGen's in @body (NULL: none: in
 * the capture of @stream).  A body captured again straight into its graph
 * reuses those its attempt in segments made there: their nodes went with
 * it, and a handle left without a node fails the graph's instantiation
 * (cudaGraphInstantiateConditionalHandleUnused); there is no call to
 * destroy one. */
gboolean tg__body_new_handle (TgBody *body, cudaStream_t stream,
                              cudaGraphConditionalHandle *handle, GError **error);

/* Ends what @body's stream captures, whatever happened before (no stream is
 * left capturing); with @place, the last segment joins the body.  Fails
 * when that capture broke, or a segment held what
 * cannot join a body: a conditional node TrackGen did not make sets
 * @body->foreign, and the body must be emptied (tg__body_clear()) and
 * captured again, direct. */
gboolean tg__body_end (TgBody *body, gboolean place, GError **error);

/* Adds a nested conditional node of TrackGen's to a body captured in
 * segments: the segment so far joins the body, the node follows it, and a
 * new segment begins.  The node's handle is made on @body->graph, and what
 * decides it was enqueued in the segment before. */
gboolean tg__body_add_conditional (TgBody *body, cudaGraphConditionalHandle handle,
                                   enum cudaGraphConditionalNodeType type,
                                   guint n_bodies, cudaGraph_t *bodies, GError **error);

/* Removes every node of the body, to capture it again. */
gboolean tg__body_clear (TgBody *body, GError **error);

G_END_DECLS

#endif /* TG_BODY_PRIVATE_H */
