/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file interop.h
 * @brief Interop: captures TrackGen did not begin, and producer lifetimes tied
 *        to graphs.
 * @ingroup interop
 */
#ifndef TRACKGEN_INTEROP_H
#define TRACKGEN_INTEROP_H

#include <trackgen/exec.h>

G_BEGIN_DECLS

/**
 * @defgroup interop Interop (libtrackgen-interop)
 *
 * A simulator's step graph is often captured by someone else: PyTorch's
 * `torch.cuda.graph`, or any code that called `cudaStreamBeginCapture`.  A
 * *capture scope* tells TrackGen about such a capture on the calling thread:
 * producer and seed-state calls passing #TG_STREAM_AUTO record into it, and each
 * producer recorded into it is retained by the captured graph, so the graph can be
 * replayed after the caller dropped its own reference.  While a producer's stages
 * run, the thread's scopes are hidden: a call a stage makes belongs to the
 * stage's work, on tg_launch_get_stream(), never straight in the caller's capture.
 *
 * Retention uses CUDA user objects.  The driver runs their destructors on a
 * thread of its own, where CUDA calls are illegal; TrackGen's destructor only
 * queues the release, and a reaper thread of TrackGen's drops the reference
 * there, so a producer freed this way releases its CUDA resources on the
 * reaper thread, never on the driver's.
 *
 * A graph that holds any user object costs GPU time at every launch (on an
 * H200, 1.4-1.9 µs in a plain CUDA program, however many objects, on
 * 2026-12-02; 5.3 µs in `make bench`'s hand-built IF on 2026-12-05), so
 * TrackGen ties nothing to a graph where nothing must be kept, and
 * everything it ties to the graph of one capture (what recorded stages
 * keep, the producers a scope retains, tg_retain_capture()) shares one user
 * object.  Where the graph's owner
 * knows its lifetime, PyTorch's `CUDAGraph` object for one, the owner holds
 * those references instead (tg_retained_new()) and the graph holds no user
 * object at all.  See @ref capture-rules-retention.
 * @{
 */

/** A registered foreign capture on one thread. */
typedef struct _TgCaptureScope TgCaptureScope;

/**
 * Registers the capture in progress on @p stream for the calling thread,
 * until tg_capture_scope_end().  Scopes nest; the innermost wins.
 *
 * @param stream the capturing stream (e.g. `torch.cuda.current_stream()` inside
 *               `torch.cuda.graph`); NULL is the legacy default stream, and
 *               #TG_STREAM_AUTO, which names no stream, is refused
 * @param mode   the mode the capture was begun with (`torch.cuda.graph`'s
 *               default `capture_error_mode="global"` is
 *               `cudaStreamCaptureModeGlobal`)
 * @param error  #TG_STATE_ERROR_NOT_CAPTURING when @p stream is not capturing,
 *               #TG_CAPTURE_ERROR_FAILED when its capture is invalidated,
 *               #TG_ARGUMENT_ERROR_INVALID for #TG_STREAM_AUTO,
 *               #TG_CUDA_ERROR
 * @return the scope (transfer full), or NULL
 */
TgCaptureScope *tg_capture_scope_begin (cudaStream_t stream,
                                        enum cudaStreamCaptureMode mode,
                                        GError **error);

/**
 * Like tg_capture_scope_begin(), for a capture that fills the body of a
 * conditional node of the caller's: a capture begun with
 * `cudaStreamBeginCaptureToGraph` into a graph that an IF, WHILE or SWITCH
 * node of the caller's made, as PyTorch's and cuda.core's conditional
 * builders do.  CUDA cannot tell such a capture from any other, and a body
 * cannot hold host nodes, memory allocations or frees, or event nodes: the
 * driver refuses them only when the caller's graph is instantiated.  Inside
 * this scope, a producer call whose work would put one there (a
 * capture-safe HOST stage, tg_host_ops_enqueue(), `cudaMallocAsync` in a
 * stage) is refused with #TG_CAPTURE_ERROR_NOT_CAPTURABLE before anything
 * is recorded; what a body can hold, kernels, copies, memsets and the
 * producer's own conditions and loops, is recorded as anywhere else.  See
 * @ref capture-rules-caller-bodies.  A body capture that was invalidated
 * before the call is refused like any (#TG_CAPTURE_ERROR_FAILED), and the
 * message says what the driver does next (H200, driver 580): ending that
 * capture destroys the body its node owns, and destroying the graph that
 * holds the node then crashes in the driver, so that graph must be kept.
 *
 * @param stream the stream capturing into the body graph
 * @param mode   the mode that capture was begun with
 * @param error  as tg_capture_scope_begin()
 * @return the scope (transfer full), or NULL
 */
TgCaptureScope *tg_capture_scope_begin_body (cudaStream_t stream,
                                             enum cudaStreamCaptureMode mode,
                                             GError **error);

/**
 * Ends the registration.  Ending after the foreign capture itself ended is
 * fine (PyTorch ends its capture when the `with` block exits).  Ending it on
 * another thread than the one that began it fails and leaves it registered;
 * so does ending a scope while an inner one is still registered.  The scope
 * is not freed: call tg_capture_scope_free().
 *
 * @param scope a scope from tg_capture_scope_begin() (transfer none)
 * @param error #TG_STATE_ERROR_THREAD (another thread),
 *              #TG_STATE_ERROR_NESTING (not the innermost scope)
 * @return TRUE when the scope is ended (ending twice is a no-op)
 */
gboolean tg_capture_scope_end (TgCaptureScope *scope, GError **error);

/**
 * Ends @p scope if still registered (on its thread) and frees it.  When it
 * cannot be ended (another thread, or not the innermost scope) a critical
 * warning is logged and the scope is leaked, still registered.
 * @param scope a scope (transfer full), or NULL
 */
void tg_capture_scope_free (TgCaptureScope *scope);

/**
 * @param scope a scope
 * @return the capture id the scope registered
 */
unsigned long long tg_capture_scope_get_capture_id (const TgCaptureScope *scope);

/**
 * @param stream a stream, or #TG_STREAM_AUTO for the innermost capture
 *               registered on the calling thread
 * @return TRUE when @p stream is capturing and its capture is registered on
 *         the calling thread
 */
gboolean tg_capture_is_registered (cudaStream_t stream);

/**
 * Makes @p graph hold a reference to @p producer until the graph and every
 * executable graph instantiated from it are destroyed.  The reference is
 * dropped on TrackGen's reaper thread, never on the driver's.  Each call ties
 * a user object of its own to @p graph (TrackGen cannot tell a graph it was
 * given from one destroyed earlier at the same address); for the graph of a
 * capture in progress, tg_retain_capture() shares one per capture.
 * @param graph    a graph (transfer none)
 * @param producer the producer to keep alive (transfer none: the graph takes
 *                 a reference of its own)
 * @param error #TG_ARGUMENT_ERROR_INVALID (@p graph NULL, named "graph"; a
 *              critical too when @p error is NULL), #TG_CUDA_ERROR
 * @return TRUE when the graph holds the reference
 */
gboolean tg_retain (cudaGraph_t graph, TgProducer *producer, GError **error);

/**
 * Makes @p graph hold @p data until the graph and every executable graph
 * instantiated from it are destroyed; then @p release runs on TrackGen's
 * reaper thread, in relaxed capture mode (never on the driver's thread, where
 * CUDA calls are illegal), so it may free CUDA memory.  For what a graph
 * needs beyond a producer: a seed state (tg_seed_state_unref()), buffers, a
 * binding's owner.  Like tg_retain(), one user object per call.
 * @param graph   a graph (transfer none)
 * @param data    what to keep (transfer full: @p release gets it)
 * @param release called once on @p data; also on failure, right away
 * @param error   as tg_retain()
 * @return TRUE when the graph holds @p data
 */
gboolean tg_retain_full (cudaGraph_t graph, gpointer data, GDestroyNotify release,
                         GError **error);

/**
 * Like tg_retain(), for the graph of the capture in progress on @p stream.
 * Everything TrackGen ties to the graph of one capture shares one user
 * object, made at the first retention, or is held by the graph's owner
 * (tg_retained_new()).
 * @param stream   a capturing stream, or #TG_STREAM_AUTO for the innermost
 *                 capture registered on the calling thread
 * @param producer the producer to keep alive (transfer none: the graph takes
 *                 a reference of its own)
 * @param error #TG_STATE_ERROR_NOT_CAPTURING (not capturing),
 *              #TG_CAPTURE_ERROR_FAILED (its capture is invalidated),
 *              #TG_ARGUMENT_ERROR_INVALID (#TG_STREAM_AUTO with no registered
 *              capture), #TG_CUDA_ERROR
 * @return TRUE when the capture's graph holds the reference
 */
gboolean tg_retain_capture (cudaStream_t stream, TgProducer *producer, GError **error);

/**
 * Like tg_retain_full(), for the graph of the capture in progress on
 * @p stream, sharing that graph's one user object as tg_retain_capture()
 * does.
 * @param stream  a capturing stream, or #TG_STREAM_AUTO for the innermost
 *                capture registered on the calling thread
 * @param data    what to keep (transfer full: @p release gets it)
 * @param release called once on @p data; also on failure, right away
 * @param error   as tg_retain_capture()
 * @return TRUE when the capture's graph, or its owner, holds @p data
 */
gboolean tg_retain_capture_full (cudaStream_t stream, gpointer data,
                                 GDestroyNotify release, GError **error);

/** What TrackGen ties to the graph of one capture, held by the graph's owner. */
typedef struct _TgRetained TgRetained;

/**
 * Takes over what TrackGen would tie to the graph of the capture in progress
 * on @p stream with a CUDA user object: what recorded stages keep
 * (tg_launch_keep()), the producers a capture scope retains,
 * tg_retain_capture().  The graph then holds no user object, and its
 * launches pay no GPU time for one; the caller holds the references until it
 * hands them back with tg_retained_release() once it destroys the graph and
 * its executable graph.  For an owner that knows that moment, as the Python
 * package knows PyTorch's `CUDAGraph` object.  Call it right after the
 * capture began, before TrackGen's first call into it.
 * @param stream the capturing stream, or #TG_STREAM_AUTO for the innermost
 *               capture registered on the calling thread
 * @param error  #TG_STATE_ERROR_NOT_CAPTURING (not capturing),
 *               #TG_CAPTURE_ERROR_FAILED (its capture is invalidated),
 *               #TG_ARGUMENT_ERROR_INVALID (#TG_STREAM_AUTO with no registered
 *               capture), #TG_STATE_ERROR_FAILED (something of this capture
 *               is held already: by its graph's user object, or by another
 *               owner), #TG_CUDA_ERROR
 * @return the references (transfer full: hand them back with
 *         tg_retained_release()), or NULL
 */
TgRetained *tg_retained_new (cudaStream_t stream, GError **error);

/**
 * Hands back what @p retained holds: released on TrackGen's reaper thread
 * once the work enqueued on @p stream so far has run, as a user object of the
 * graph would be once its launches completed.  Call it when the graph and its
 * executable graph are destroyed (or will no longer be launched), naming the
 * stream of the last launch: CUDA runs the launches of one executable graph
 * one after the other, so every earlier launch has finished too.  The graph
 * may be destroyed right after a launch: nothing is released before that
 * launch completes.  Handing them back while the capture is still in
 * progress is fine: later retentions into it get a user object.
 * tg_release_wait() waits for these releases.
 * @param retained from tg_retained_new() (transfer full on success; on
 *                 failure it is left to the caller, unchanged)
 * @param stream   the stream of the graph's last launch, not capturing
 * @param error    #TG_STATE_ERROR_POLICY (@p stream is capturing: nothing
 *                 can be ordered after the work it ran before),
 *                 #TG_ARGUMENT_ERROR_INVALID (#TG_STREAM_AUTO, which names
 *                 no stream here: the message names "stream"; a critical
 *                 too when @p error is NULL), #TG_CUDA_ERROR
 * @return TRUE when the release is enqueued
 */
gboolean tg_retained_release (TgRetained *retained, cudaStream_t stream,
                              GError **error);

/**
 * Waits until every reference TrackGen tied to a graph was released, at most
 * @p timeout_us microseconds: those the user objects of graphs hold (released
 * once the graphs and their executable graphs are destroyed and their
 * launches completed: synchronize first), and those tg_retained_release()
 * enqueued.  A graph still alive holds its references, so the wait lasts
 * the whole timeout while one does: destroy your graphs first, or hold their
 * references as their owner (tg_retained_new()).  The driver runs a user
 * object's destructor on a thread of its own at a moment it says nothing of
 * (on the H200, driver 580, after the destructor of a user object dropped
 * later), so no wait can tell a graph alive from one whose destructor is
 * still to come.
 * @param timeout_us the longest wait, in microseconds
 * @return TRUE when none is outstanding
 */
gboolean tg_release_wait (gint64 timeout_us);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TgCaptureScope, tg_capture_scope_free)

/** @} */

G_END_DECLS

#endif /* TRACKGEN_INTEROP_H */
