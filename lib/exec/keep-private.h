/* SPDX-License-Identifier: Apache-2.0 */
/* keep-private.h: what graphs keep alive for TrackGen, tied to them with CUDA
 * user objects or held by their owners, and released on a reaper thread.
 * Private to libtrackgen. */
#ifndef TG_KEEP_PRIVATE_H
#define TG_KEEP_PRIVATE_H

#include "error-private.h"

G_BEGIN_DECLS

/* What TrackGen ties to the graph of one capture (interop.h names it
 * TgRetained): every release, run together once the graph is gone. */
typedef struct _TgRetained TgHold;

/* Ties @object to @graph: @release runs once the graph and every executable
 * made from it are gone.  All that is tied to the graph of one capture,
 * @capture_id, shares one CUDA user object, made at the first call (0: a
 * graph of no known capture, which gets a user object of its own), or the
 * graph's owner holds it (tg__keep_hold_new()).  The driver calls user
 * object destructors on its own thread, where CUDA calls are illegal, so
 * the destructor only queues the hold; a reaper thread of TrackGen's runs
 * the releases later, where CUDA calls are fine.  The reference to @object
 * is transferred in every case: on failure it is released at once. */
gboolean tg__keep_retain (cudaGraph_t graph, unsigned long long capture_id,
                          gpointer object, GDestroyNotify release, GError **error);

/* The owner of the graph of capture @capture_id holds, from now on, what
 * TrackGen ties to that graph, so the graph holds no user object;
 * TG_STATE_ERROR_FAILED when something of the capture is held already. */
TgHold *tg__keep_hold_new (unsigned long long capture_id, GError **error);

/* Releases what @hold holds once the work enqueued on @stream so far has run
 * (tg__keep_release_after()); later retentions into its capture, if any,
 * get a user object. */
void tg__keep_hold_release (TgHold *hold, cudaStream_t stream);

/* Releases @object on the reaper thread once the work enqueued on @stream so
 * far has run (a host function queues it): for what an executable graph
 * updated in place may still use in a launch in flight.  When the host
 * function cannot be enqueued, waits for @stream and releases at once. */
void tg__keep_release_after (cudaStream_t stream, gpointer object,
                             GDestroyNotify release);

/* Waits until every release decided so far ran, at most @timeout_us (a
 * timeout whose deadline would overflow waits forever): those enqueued
 * after a stream's work, and those of graphs destroyed, once the driver ran
 * their user objects' destructors; never those live graphs hold. */
gboolean tg__keep_release_wait (gint64 timeout_us);

G_END_DECLS

#endif
