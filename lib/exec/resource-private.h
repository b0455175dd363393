/* SPDX-License-Identifier: Apache-2.0 */
/* resource-private.h: every CUDA call of TrackGen's that is not
 * stream-ordered -- creation, destruction, instantiation, allocation, frees,
 * synchronization, pointer queries -- goes through these wrappers, and only
 * these.  Each runs in relaxed capture mode, which is what CUDA requires for
 * such a call not to invalidate a capture in progress: one of this thread's,
 * or, in global mode, one of any other thread's (a torch.cuda.graph by
 * default).  They also count live objects (tg_get_live_objects) and report
 * failed releases instead of hiding them.  Private to libtrackgen. */
#ifndef TG_RESOURCE_PRIVATE_H
#define TG_RESOURCE_PRIVATE_H

#include "error-private.h"

G_BEGIN_DECLS

typedef enum
{
  TG_LIVE_PRODUCERS,
  TG_LIVE_GRAPHS,
  TG_LIVE_GRAPH_EXECS,
  TG_LIVE_STREAMS,
  TG_LIVE_CAPTURES,
  TG_LIVE_FAILED_RELEASES,
  TG_LIVE_IDLE_STREAMS,
  TG_LIVE_USER_OBJECTS,
  TG_LIVE_N
} TgLiveKind;

void tg__live_add (TgLiveKind kind, gint delta);

/* Reports a failure while releasing something (a device switch, say) as a
 * failed release: logged and counted, never hidden.  Takes @error. */
void tg__release_failed (GError *error);

/* A relaxed section: this thread's calls cannot invalidate any capture.
 * Sections nest.  tg__relaxed_thread() relaxes the calling thread for good
 * (TrackGen's reaper thread, which releases at moments nobody chooses). */
enum cudaStreamCaptureMode tg__relaxed_begin (void);
void tg__relaxed_end (enum cudaStreamCaptureMode saved);
void tg__relaxed_thread (void);

/* Non-blocking stream on the current device (counted). */
cudaStream_t tg__stream_new (GError **error);
void tg__stream_free (cudaStream_t stream);
/* Streams for TrackGen's own captures, lent to a producer for its life: an
 * idle one of @device (current) given back by a freed producer, else a new
 * one.  Given back, a stream that is not capturing is kept idle (at most a
 * few per device, counted apart from live streams), any other is freed. */
cudaStream_t tg__stream_lend (int device, GError **error);
void tg__stream_give_back (int device, cudaStream_t stream);
/* Waits for @stream. */
gboolean tg__stream_synchronize (cudaStream_t stream, GError **error);

/* Graphs (counted).  Own graphs are instantiated to free the allocations a
 * launch made when the next one starts, so stages may allocate. */
gboolean tg__graph_instantiate (cudaGraph_t graph, cudaGraphExec_t *exec,
                                GError **error);
/* Updates @exec from @graph; FALSE (nothing set) when the topology differs. */
gboolean tg__graph_exec_update (cudaGraphExec_t exec, cudaGraph_t graph);
void tg__graph_exec_free (cudaGraphExec_t exec);
void tg__graph_free (cudaGraph_t graph);

/* Memory. */
gpointer tg__host_alloc (gsize size, GError **error);
void tg__host_free (gpointer ptr);
gpointer tg__device_alloc (gsize size, GError **error);
void tg__device_free (gpointer ptr);
/* Pinned host memory mapped into the current device's address space (free
 * it with tg__host_free); *@device is the address kernels write through. */
gpointer tg__host_alloc_mapped (gsize size, gpointer *device, GError **error);

/* *@blocks := whether host threads waiting for the current device block in
 * the driver (cudaDeviceScheduleBlockingSync, set by the application)
 * rather than spin or yield. */
gboolean tg__device_blocks_on_sync (gboolean *blocks, GError **error);

/* What CUDA knows of @ptr: host, pinned, device or managed memory. */
gboolean tg__pointer_attributes (gconstpointer ptr, struct cudaPointerAttributes *attr,
                                 GError **error);

G_END_DECLS

#endif
