/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file exec.h
 * @brief Execution layer: producers, launch contexts, policy, own-graph runner,
 *        host operations, conditions, bounded loops and error domains.
 * @ingroup exec
 */
#ifndef TRACKGEN_EXEC_H
#define TRACKGEN_EXEC_H

#include <glib.h>
#include <cuda_runtime_api.h>
#include <trackgen/kernel.h>
#include <trackgen/version.h>

G_BEGIN_DECLS

/**
 * @defgroup exec Execution layer (libtrackgen-exec)
 *
 * Every piece of device work that TrackGen emits is a *producer*: an ordered
 * list of stages that launch kernels (DEVICE), run on the host between them
 * (HOST), or iterate a body on the device until a flag clears (LOOP).  One
 * call, tg_producer_run(), decides how the work reaches the GPU from the
 * stream's capture state and the producer's stages (see @ref policy):
 * launched eagerly, replayed from a graph of the producer's own, or recorded
 * into the caller's capture.  Results are bit-identical under all three.
 *
 * Streams: a stream argument means what it means in every CUDA library: a
 * NULL stream is CUDA's legacy default stream (the same as
 * `cudaStreamLegacy`; PyTorch's default stream is this one), any other is
 * that stream.  To let TrackGen choose, pass #TG_STREAM_AUTO: the stream of
 * a foreign capture registered on this thread (interop.h), else the
 * producer's bound stream, else the caller's framework's current stream
 * when a binding passes it (#TgCallStream), else TrackGen's per-device
 * default stream (which is ordered with nothing of the caller's).  Code
 * built with `--default-stream per-thread` passes `cudaStreamPerThread`
 * explicitly.
 *
 * Threads: distinct producers run concurrently from any threads.  One
 * producer is not re-entrant: a call that finds it running on another thread
 * waits for that call to finish; a call from one of its own stages fails with
 * #TG_STATE_ERROR_BUSY.
 * @{
 */

/**
 * @defgroup exec-errors Errors
 * @ingroup exec
 * The error domains of every layer and their codes, each with its cause and
 * fix; see @ref errors for what a failed call leaves behind.
 * @{
 */

/** Error domain for capture failures and refusals, see #TgCaptureError. */
#define TG_CAPTURE_ERROR (tg_capture_error_quark ())
/** Error domain for CUDA failures; the code is the `cudaError_t`. */
#define TG_CUDA_ERROR (tg_cuda_error_quark ())
/** Error domain for invalid arguments made at run time, see #TgArgumentError. */
#define TG_ARGUMENT_ERROR (tg_argument_error_quark ())
/** Error domain for calls that the state of an object or stream refuses, see
 * #TgStateError. */
#define TG_STATE_ERROR (tg_state_error_quark ())

/** Codes of #TG_CAPTURE_ERROR. */
typedef enum
{
  /** The capture error: the caller's capture is invalidated (before the call,
   * or by a stage during it: the message names the stage), ended early, holds
   * part of a call whose second recording pass failed, or a graph failed to
   * instantiate.  Fix: end the broken capture (`cudaStreamEndCapture`) and
   * capture again; the message names the cause. */
  TG_CAPTURE_ERROR_FAILED,
  /** The work cannot be recorded into a capture (a stage that is not
   * capture-safe, a host operation that needs a synchronization, a host node
   * or allocation inside a condition or loop, conditional nodes missing from
   * the driver).  Nothing was recorded.  Fix: run outside the capture
   * (#TG_POLICY_AUTO picks EAGER), or make the named stage capture-safe. */
  TG_CAPTURE_ERROR_NOT_CAPTURABLE,
  /** A stage that only launches on the legacy default stream would escape a
   * capture or the stream it was given.  Fix: port the stage to launch on
   * tg_launch_get_stream(), or run it eagerly on `cudaStreamLegacy`. */
  TG_CAPTURE_ERROR_LEGACY_PLUGIN_STREAM,
  /** Checked mode (tg_set_checks()) saw a stage enqueue device work where the
   * policy does not put it: under REPLAY or RECORD on a stream outside the
   * stage's capture (another stream not forked from the stage's, the legacy
   * stream, a stream capturing into another graph), so that the work ran
   * once, at capture time, and every replay would miss it; under EAGER on
   * another stream not joined back to the stage's.  The message names the
   * CUDA call, the kernel and the stream.  Nothing was recorded (under EAGER
   * the work ran).  Fix: enqueue on tg_launch_get_stream(), or fork the other
   * stream from it and join it back with events. */
  TG_CAPTURE_ERROR_ESCAPED,
} TgCaptureError;

/** Codes of #TG_ARGUMENT_ERROR. */
typedef enum
{
  /** A value is not valid for this argument; the message names it. */
  TG_ARGUMENT_ERROR_INVALID,
  /** An index or id is out of range.  Fix: pass a value below the stated bound. */
  TG_ARGUMENT_ERROR_OUT_OF_RANGE,
  /** An id appears more than once where each must be unique. */
  TG_ARGUMENT_ERROR_DUPLICATE,
  /** A buffer, mask or snapshot has the wrong length.  Fix: pass the length
   * stated in the message. */
  TG_ARGUMENT_ERROR_SIZE_MISMATCH,
  /** A stream or buffer belongs to another device than the object's.  Fix:
   * create it on the device named in the message. */
  TG_ARGUMENT_ERROR_DEVICE_MISMATCH,
  /** A count that must be positive is zero (zero envs, zero bytes). */
  TG_ARGUMENT_ERROR_EMPTY,
  /** Serialized data has a version or format this library cannot read.  Fix:
   * pass data this library wrote. */
  TG_ARGUMENT_ERROR_VERSION,
  /** An argument is wrong in a way no other code names; the message says
   * which and how to fix it. */
  TG_ARGUMENT_ERROR_FAILED,
} TgArgumentError;

/** Codes of #TG_STATE_ERROR: the arguments are fine, the state is not. */
typedef enum
{
  /** The requested policy cannot apply to the stream's capture state (EAGER
   * or REPLAY on a capturing stream, RECORD outside a capture), or a call
   * that names no stream would run beside a capture in progress on the
   * ambient stream (#TgCallStream).  Fix: pass #TG_POLICY_AUTO, or the
   * capturing stream, or call it outside the capture. */
  TG_STATE_ERROR_POLICY,
  /** A binding a stage declared is not bound, or is smaller than declared.
   * Fix: tg_producer_bind() at least the size the message states. */
  TG_STATE_ERROR_UNBOUND,
  /** The producer is already running on this thread (a stage called back into
   * its own producer).  Fix: use a second producer. */
  TG_STATE_ERROR_BUSY,
  /** A scope was ended on another thread than the one that began it.  Fix:
   * end it on the thread that began it. */
  TG_STATE_ERROR_THREAD,
  /** The stream has no capture in progress, and the call needs one (a
   * capture scope, a retain).  Fix: call it between cudaStreamBeginCapture
   * and cudaStreamEndCapture (inside `torch.cuda.graph`). */
  TG_STATE_ERROR_NOT_CAPTURING,
  /** Scopes ended out of order: an inner scope is still registered.  Fix:
   * end the scopes begun inside it first. */
  TG_STATE_ERROR_NESTING,
  /** Two bindings that must not share memory (a loop's flag and its status)
   * overlap.  Fix: bind separate buffers. */
  TG_STATE_ERROR_OVERLAP,
  /** The state refuses the call in a way no other code names (a stage that
   * failed without saying why, a device that computes wrong values); the
   * message says what. */
  TG_STATE_ERROR_FAILED,
  /** The producer already ran, so its stages are fixed (a stage builder
   * called after the first run).  Fix: set the stages up before the first
   * run, or build a second producer. */
  TG_STATE_ERROR_SEALED,
} TgStateError;

/** @return the quark of #TG_CAPTURE_ERROR. */
GQuark tg_capture_error_quark (void);
/** @return the quark of #TG_CUDA_ERROR. */
GQuark tg_cuda_error_quark (void);
/** @return the quark of #TG_ARGUMENT_ERROR. */
GQuark tg_argument_error_quark (void);
/** @return the quark of #TG_STATE_ERROR. */
GQuark tg_state_error_quark (void);

/**
 * The producer an error concerns.  Errors of TrackGen's four domains (and
 * of domains registered with tg_error_domain_register()) carry, as fields
 * of GLib's extended errors, the producer, stage and binding their message
 * names, set where TrackGen makes the error or prefixes a stage's error
 * with `producer 'NAME', stage 'NAME': `; a binding that reads them never
 * parses the message.  The TG_*_ERROR macros register a domain with its
 * fields at first use: make errors of these domains through them (a quark
 * taken from the domain's name before that would make errors without
 * fields, which GLib then frees as errors with fields).
 * @param error an error
 * @return the producer's name (transfer none, valid as long as @p error),
 *         or NULL when the error concerns none or its domain has no fields
 */
const char *tg_error_get_producer (const GError *error);
/**
 * @param error an error
 * @return the stage an error concerns, as tg_error_get_producer(), or NULL
 */
const char *tg_error_get_stage (const GError *error);
/**
 * @param error an error
 * @return the binding an error concerns, as tg_error_get_producer(), or NULL
 */
const char *tg_error_get_binding (const GError *error);

/**
 * Sets the producer, stage and binding @p error concerns (each copied; NULL
 * clears one), for code that makes errors of TrackGen's domains itself (a
 * language binding checking an argument on TrackGen's behalf).  Nothing for
 * an error of a domain without fields.
 * @param error    an error
 * @param producer the producer's name, or NULL
 * @param stage    the stage's name, or NULL
 * @param binding  the binding's name, or NULL
 */
void tg_error_set_fields (GError *error, const char *producer, const char *stage,
                          const char *binding);

/**
 * Registers @p name as an error domain whose errors carry the fields read by
 * tg_error_get_producer() and its kin, for the errors your stages set:
 * TrackGen fills them in when it prefixes such an error with the producer
 * and the stage.  Call it before the first error of the domain is made
 * (from your domain's quark function); calling it again for the same name
 * returns the same quark.  At most 12 such domains per process, besides
 * TrackGen's four, which always have their fields; past them (a critical)
 * the domain's errors carry no fields.  A name that GLib's extended errors
 * registered first (g_error_domain_register(), G_DEFINE_EXTENDED_ERROR, or
 * another copy of TrackGen in the process) stays that registration's: GLib
 * says so in a critical, and its errors carry no fields of TrackGen's,
 * never written nor read (its quark is returned, so its errors still work).
 * @param name the domain's quark name (static: not copied)
 * @return the domain's quark
 */
GQuark tg_error_domain_register (const char *name);

/** @} */

/**
 * @defgroup exec-streams Devices and streams
 * @ingroup exec
 * Which stream a call uses (#TG_STREAM_AUTO, NULL, a stream), TrackGen's
 * default streams, and capture-state queries that never disturb a capture.
 * @{
 */

/**
 * "Not named: resolve it for me", as a stream argument: the stream of a
 * foreign capture registered on this thread (interop.h), else the producer's
 * bound stream (producer calls), else the ambient stream (#TgCallStream),
 * else TrackGen's default stream of the device.  Never a real stream, and
 * never NULL (which is CUDA's default stream).  From Python:
 * `ctypes.c_void_p(2**64 - 1)` on 64-bit platforms.
 */
#define TG_STREAM_AUTO ((cudaStream_t)(~(guintptr)0))

/**
 * Checks that @p device can run TrackGen's kernels: launches a kernel there
 * that writes a known pattern and compares it on the host.  Blocks.
 *
 * @param device CUDA device ordinal
 * @param error  #TG_CUDA_ERROR (no device, driver too old, launch failure),
 *               #TG_ARGUMENT_ERROR_OUT_OF_RANGE (no such device) or
 *               #TG_STATE_ERROR_FAILED (the kernel wrote wrong values)
 * @return TRUE when the device works
 */
gboolean tg_device_check (int device, GError **error);

/**
 * TrackGen's default stream for @p device: non-blocking, created once per
 * device on first use, thread-safe, never destroyed.  The caller's current
 * device is restored.
 *
 * @param device CUDA device ordinal
 * @param error  #TG_CUDA_ERROR, #TG_ARGUMENT_ERROR_OUT_OF_RANGE
 * @return the stream (transfer none: owned by TrackGen, never destroy it),
 *         or NULL on error
 */
cudaStream_t tg_default_stream (int device, GError **error);

/**
 * Resolves the stream a TrackGen call would use on @p device:
 * #TG_STREAM_AUTO becomes the stream of a foreign capture registered on this
 * thread (interop.h), else TrackGen's default stream (producer calls also
 * consider the producer's bound stream, before the default one); NULL
 * becomes `cudaStreamLegacy`; any other stream is checked and returned.  The
 * caller's current device is restored.  The stream's device is checked
 * through the driver, which leaves a capture in progress on it intact, and
 * only when the process sees more than one device.
 *
 * @param stream #TG_STREAM_AUTO, NULL (the legacy default stream), or a stream
 * @param device CUDA device ordinal the work is for
 * @param error  #TG_ARGUMENT_ERROR_DEVICE_MISMATCH (a stream of another
 *               device), #TG_ARGUMENT_ERROR_OUT_OF_RANGE, #TG_CUDA_ERROR
 * @return the stream (transfer none; NULL only on error, since NULL resolves
 *         to `cudaStreamLegacy`)
 */
cudaStream_t tg_stream_resolve (cudaStream_t stream, int device, GError **error);

/**
 * A call's stream as a framework's binding passes it: the stream the call
 * names and the framework's current stream on the call's device, the
 * *ambient* stream (torch's current stream, Warp's).  The `_full` variants
 * of the producer and seed-state calls and tg_stream_resolve_full() take it;
 * the plain calls are those variants with no ambient stream.
 *
 * The stream rule: a call uses, in order,
 * 1. the stream it names (NULL: CUDA's legacy default stream);
 * 2. the stream of a foreign capture registered on the calling thread
 *    (interop.h), except in a call a producer's stage makes: that call
 *    belongs to the stage's work (pass tg_launch_get_stream(), or, from a
 *    binding, the stage's stream as the ambient one);
 * 3. the producer's bound stream (producer calls, tg_producer_set_stream());
 * 4. the ambient stream;
 * 5. TrackGen's default stream of the device (tg_default_stream()).
 *
 * Work never runs beside a capture in progress on the ambient stream: a
 * call that names no stream fails with #TG_STATE_ERROR_POLICY, before
 * anything is enqueued, when it would run on the producer's bound stream
 * while the ambient stream captures (or holds an invalidated capture), or
 * would run now on a capturing ambient stream (#TG_POLICY_EAGER or
 * #TG_POLICY_REPLAY, a seed-state call that waits for its stream).  A call
 * that can be recorded records into that capture; when no scope registered
 * it (interop.h), its graph still retains a producer recorded into it, as
 * a registered capture's graph does.
 */
typedef struct
{
  /** The stream the call names: a stream, NULL (CUDA's legacy default
   * stream) or #TG_STREAM_AUTO. */
  cudaStream_t stream;
  /** The caller's framework's current stream on the call's device (NULL is
   * the legacy default stream), or #TG_STREAM_AUTO when there is none. */
  cudaStream_t ambient;
  /** How errors name @c ambient ("torch's current stream"); NULL: "the
   * ambient stream".  Static, or alive for the call. */
  const char *ambient_name;
} TgCallStream;

/**
 * The #TgCallStream of a call naming @p s, with no ambient stream: what the
 * plain calls use (C only: a compound literal).
 */
#define TG_CALL_STREAM(s) ((TgCallStream){ (s), TG_STREAM_AUTO, NULL })

/**
 * tg_stream_resolve() with an ambient stream: the stream a call that can be
 * recorded would use on @p device (steps 1, 2, 4 and 5 of the stream rule
 * of #TgCallStream: no producer, so no bound stream).
 *
 * @param call   the stream named and the ambient stream
 * @param device CUDA device ordinal the work is for
 * @param error  #TG_ARGUMENT_ERROR_DEVICE_MISMATCH (a stream of another
 *               device), #TG_ARGUMENT_ERROR_OUT_OF_RANGE, #TG_CUDA_ERROR
 * @return the stream (transfer none), or NULL on error
 */
cudaStream_t tg_stream_resolve_full (const TgCallStream *call, int device,
                                     GError **error);

/** Capture state of a stream, as TrackGen sees it. */
typedef enum
{
  TG_CAPTURE_NONE,        /**< not capturing: work runs */
  TG_CAPTURE_ACTIVE,      /**< capturing: work is recorded, never run */
  TG_CAPTURE_INVALIDATED, /**< a capture that an earlier operation broke */
  /** The legacy default stream while a blocking stream captures: work
   * launched on it would invalidate that capture.  Detected without touching
   * the capture. */
  TG_CAPTURE_IMPLICIT,
} TgCaptureState;

/**
 * Queries the capture state of any stream, the legacy one included, without
 * disturbing a capture in progress.
 *
 * @param stream   the stream (NULL and `cudaStreamLegacy` are the legacy stream)
 * @param state    (out) the state
 * @param id       (out, optional) the capture id while ACTIVE or INVALIDATED
 * @param error    #TG_ARGUMENT_ERROR_INVALID (#TG_STREAM_AUTO, which is not
 *                 a stream: the message names "stream"; a critical too when
 *                 @p error is NULL), #TG_CUDA_ERROR
 * @return TRUE on success
 */
gboolean tg_stream_get_capture_state (cudaStream_t stream, TgCaptureState *state,
                                      unsigned long long *id, GError **error);

/**
 * Convenience form of tg_stream_get_capture_state(); a failed query is
 * reported as FALSE, with no error.
 * @param stream the stream (NULL and `cudaStreamLegacy` are the legacy stream)
 * @return TRUE when @p stream is ACTIVE or INVALIDATED; FALSE when it is not
 *         capturing (the legacy stream in the IMPLICIT state is not capturing
 *         itself) or the query failed
 */
gboolean tg_stream_is_capturing (cudaStream_t stream);

/** @} */

/**
 * @defgroup exec-policy Policy
 * @ingroup exec
 * How a producer call reaches the GPU: EAGER, REPLAY or RECORD, decided by
 * the policy table (@ref capture).
 * @{
 */

/** How a producer call reaches the GPU. */
typedef enum
{
  /** Decide from the stream: RECORD under a capture, else REPLAY when every
   * device stage is capture-safe, else EAGER. */
  TG_POLICY_AUTO,
  /** Launch every stage on the stream now; HOST stages run inline. */
  TG_POLICY_EAGER,
  /** Capture the device stages once into graphs of the producer's own and
   * launch those on the stream; HOST stages run between them. */
  TG_POLICY_REPLAY,
  /** Record every stage into the capture in progress on the stream. */
  TG_POLICY_RECORD,
} TgPolicy;

/**
 * Names a policy, for messages.
 * @param policy a #TgPolicy
 * @return a static string (transfer none): "auto", "eager", "replay" or
 *         "record"
 */
const char *tg_policy_to_string (TgPolicy policy);

/** @} */

/**
 * @defgroup exec-conditions Conditions and loops
 * @ingroup exec
 * Device-side decisions: the condition of a call or a stage (an IF node
 * under a capture, a wait for the device's decision eagerly), and the
 * conditions, switches and bounded loops a stage runs around parts of its
 * work, decided by a device flag or by the stage's own kernels
 * (tg_launch_if_by(), tg_launch_switch_by(), tg_launch_while_by(); see
 * @ref kernel-decisions).
 * @{
 */

/**
 * A condition on device work: unconditional, or guarded by a device flag
 * (a `gint32`, non-zero means run).  A value type: build it with
 * tg_unconditional() or tg_conditional().
 */
typedef struct
{
  const gint32 *flag; /**< device flag, or NULL when unconditional */
} TgCondition;

/** @return the condition that always runs. */
static inline TgCondition
tg_unconditional (void)
{
  TgCondition c = { NULL };
  return c;
}

/**
 * Guards work by a device flag.  Under a capture the work sits in a CUDA
 * conditional IF node that a replay skips on the device when the flag is 0;
 * eagerly the host waits for the flag first: a one-thread kernel stores it in
 * mapped host memory, in stream order, so the host waits for the work
 * before it (see @ref capture-eager).
 * @param device_flag a `gint32` in device memory, read when the work would
 *                    run (must not be NULL)
 * @return the condition
 */
static inline TgCondition
tg_conditional (const gint32 *device_flag)
{
  TgCondition c = { device_flag };
  return c;
}

/** @} */

/**
 * @defgroup exec-producers Producers and stages
 * @ingroup exec
 * What a caller builds and runs: a producer, its DEVICE, HOST, LOOP and
 * SWITCH stages, their declared bindings, the buffers bound to them, and the
 * call itself with its runner counters.
 * @{
 */

/** A reference-counted producer of device work. */
typedef struct _TgProducer TgProducer;
/** What a stage sees during a call: device, stream, policy, capture. */
typedef struct _TgLaunch TgLaunch;
/** The host operations a HOST stage may use. */
typedef struct _TgHostOps TgHostOps;

/** Declarations a stage makes up front, so a policy can refuse before recording. */
typedef enum
{
  /** No declaration: the stage is not capture-safe.  A DEVICE or LOOP stage
   * without it makes AUTO run its producer eagerly outside a capture (and
   * refuses it inside one); a HOST stage without it only prevents RECORD. */
  TG_STAGE_NONE = 0,
  /** The stage can be captured: its DEVICE work only enqueues on the given
   * stream, or its HOST work only enqueues host functions and pinned copies. */
  TG_STAGE_CAPTURE_SAFE = 1 << 0,
  /** The stage can only launch on the legacy default stream (a plugin that
   * ignores streams).  Such a producer runs only eagerly on the legacy stream
   * (NULL or `cudaStreamLegacy`). */
  TG_STAGE_LEGACY_STREAM = 1 << 1,
} TgStageFlags;

/**
 * A DEVICE stage (or a loop, condition or switch body): enqueue work on
 * tg_launch_get_stream(@p launch), nothing else.  How often it is called:
 * once per EAGER call; under REPLAY only when the producer's own graph is
 * captured (the first call, after a rebind, or for a new condition flag);
 * under RECORD once per call, or twice when the call records a condition, a
 * loop or an allocation (see @ref capture-rules; CUDA can neither embed such
 * work as a child graph nor remove nodes from a capture, so a trial capture
 * of TrackGen's own comes first).  So it must only enqueue work.
 * @param launch    the call's launch context (valid during the call only)
 * @param user_data the data given when the stage was added
 * @param error     return location for the error that fails the call
 * @return FALSE with @p error set to fail the call
 */
typedef gboolean (*TgDeviceFunc) (const TgLaunch *launch, gpointer user_data,
                                  GError **error);

/**
 * A HOST stage: uses @p ops for every stream operation.  Under RECORD it runs
 * at record time, once per call (twice when a DEVICE stage of the call
 * records a condition or loop itself, see #TgDeviceFunc), and never at
 * replay: only what it enqueues is replayed.
 * @param ops       the host operations (valid during the call only)
 * @param user_data the data given when the stage was added
 * @param error     return location for the error that fails the call
 * @return FALSE with @p error set to fail the call
 */
typedef gboolean (*TgHostFunc) (TgHostOps *ops, gpointer user_data, GError **error);

/**
 * Creates a producer with no stages.  Makes no CUDA call: the device is
 * checked at the first run.
 * @param name   a name for messages (copied)
 * @param device CUDA device ordinal whose streams it runs on (>= 0)
 * @return a new producer (transfer full): release it with tg_producer_unref()
 */
TgProducer *tg_producer_new (const char *name, int device);

/**
 * Adds a reference.  Thread-safe.
 * @param producer a producer
 * @return @p producer (the new reference: transfer full)
 */
TgProducer *tg_producer_ref (TgProducer *producer);

/**
 * Drops a reference; the last one frees the producer, its own graphs and
 * streams, and calls the stages' destroy notifies.  Thread-safe.  A graph
 * that retained the producer (interop.h) holds a reference of its own.
 * @param producer a producer (transfer full: the reference is consumed)
 */
void tg_producer_unref (TgProducer *producer);

/**
 * @param producer a producer
 * @return the producer's name (transfer none: owned by the producer)
 */
const char *tg_producer_get_name (const TgProducer *producer);

/**
 * @param producer a producer
 * @return the producer's CUDA device ordinal
 */
int tg_producer_get_device (const TgProducer *producer);

/**
 * Binds the stream that calls passing #TG_STREAM_AUTO use (after a
 * registered foreign capture, before TrackGen's default stream).
 * #TG_STREAM_AUTO unbinds; NULL binds CUDA's legacy default stream.
 * @param producer a producer
 * @param stream   a stream of the producer's device (transfer none: the
 *                 caller keeps it alive while it is bound), NULL, or
 *                 #TG_STREAM_AUTO
 * @param error    #TG_ARGUMENT_ERROR_DEVICE_MISMATCH (a stream of another
 *                 device), #TG_ARGUMENT_ERROR_OUT_OF_RANGE (the producer's
 *                 device does not exist), #TG_STATE_ERROR_BUSY (called from a
 *                 stage of the same producer), #TG_CUDA_ERROR
 * @return TRUE on success; FALSE with @p error set, the binding unchanged
 */
gboolean tg_producer_set_stream (TgProducer *producer, cudaStream_t stream,
                                 GError **error);

/**
 * @param producer a producer
 * @return the stream bound by tg_producer_set_stream() (transfer none), or
 *         #TG_STREAM_AUTO when none is bound
 */
cudaStream_t tg_producer_get_stream (TgProducer *producer);

/**
 * Appends a DEVICE stage.  Stages are added before the first run.
 *
 * Errors of the stage builders (this one, the other
 * tg_producer_add_*_stage(), tg_producer_declare_binding(),
 * tg_producer_set_stage_condition(), tg_producer_set_stage_else()): every
 * refusal of the caller's data is a GError naming the producer, the stage
 * and the argument; a NULL producer is a programming error
 * (`g_return_val_if_fail`).  When @p error is NULL and the call fails, the
 * message is also logged as a critical, so that a caller who ignores errors
 * still sees the misuse.
 * @param producer  a producer that has not run yet
 * @param name      unique stage name (copied)
 * @param flags     declarations, see #TgStageFlags
 * @param func      the launcher
 * @param user_data passed to @p func (transfer full when @p destroy is set)
 * @param destroy   called on @p user_data when the producer is freed (may be NULL)
 * @param error     #TG_ARGUMENT_ERROR_INVALID (an empty name, flags not
 *                  valid for the stage, a missing function),
 *                  #TG_ARGUMENT_ERROR_DUPLICATE (a name already used),
 *                  #TG_STATE_ERROR_SEALED (the producer already ran),
 *                  #TG_STATE_ERROR_BUSY (called from a stage of the producer)
 * @return the stage's index; G_MAXUINT on failure, and then @p destroy is not
 *         called: the caller keeps @p user_data
 */
guint tg_producer_add_device_stage (TgProducer *producer, const char *name,
                                    TgStageFlags flags, TgDeviceFunc func,
                                    gpointer user_data, GDestroyNotify destroy,
                                    GError **error);

/**
 * Appends a HOST stage: under EAGER and REPLAY it runs on the host at its
 * place in the order (REPLAY splits its graphs around it); under RECORD it
 * runs at record time and what it enqueues becomes nodes, so it must be
 * #TG_STAGE_CAPTURE_SAFE to be recorded.
 * @param producer  a producer that has not run yet
 * @param name      unique stage name (copied)
 * @param flags     #TG_STAGE_NONE or #TG_STAGE_CAPTURE_SAFE
 *                  (#TG_STAGE_LEGACY_STREAM is a misuse for a HOST stage)
 * @param func      the host function
 * @param user_data passed to @p func (transfer full when @p destroy is set)
 * @param destroy   called on @p user_data when the producer is freed (may be NULL)
 * @param error     as tg_producer_add_device_stage()
 * @return the stage's index; G_MAXUINT on failure, and then @p destroy is not
 *         called: the caller keeps @p user_data
 */
guint tg_producer_add_host_stage (TgProducer *producer, const char *name,
                                  TgStageFlags flags, TgHostFunc func,
                                  gpointer user_data, GDestroyNotify destroy,
                                  GError **error);

/**
 * A bounded loop stage, see tg_producer_add_loop_stage().  Name the fields:
 * @code
 * TgLoopSpec loop = { .flag_binding = "go", .status_binding = "status", .max_iters = 64
 * };
 * @endcode
 */
typedef struct
{
  /** Binding of the `gint32` continue flag.  With @p set_by_body, only the
   * entry reads it (0: the loop is skipped), and it may be NULL: the loop
   * always runs at least once. */
  const char *flag_binding;
  const char *status_binding; /**< binding of the #TgLoopStatus; not the flag's */
  guint max_iters;            /**< at most this many iterations, 1 to G_MAXINT32 */
  /** The body decides each continuation itself: one thread of its kernel
   * calls tg_loop_next() with tg_launch_get_loop() (see
   * tg_launch_while_by()), so no kernel of TrackGen's runs per iteration. */
  gboolean set_by_body;
} TgLoopSpec;

/**
 * Appends a bounded LOOP stage: runs @p body while the `gint32` bound as
 * @p loop->flag_binding is non-zero, at most @p loop->max_iters times, and
 * writes the outcome to the #TgLoopStatus bound as @p loop->status_binding.
 * Under a capture it is a CUDA WHILE node with the iteration count on the
 * device; eagerly a host loop that waits for the device's decision once per
 * iteration.  The body clears the flag to stop (for example when a
 * relaxation converged).  With @p loop->set_by_body the body's own kernel
 * decides instead, as in tg_launch_while_by(), and the flag is read at
 * entry only.  The bindings are declared for the stage (see
 * tg_producer_declare_binding()): a run whose bindings are missing or too
 * small fails with #TG_STATE_ERROR_UNBOUND.
 * @param producer  a producer that has not run yet
 * @param name      unique stage name (copied)
 * @param flags     declarations, see #TgStageFlags
 * @param loop      the loop (copied): two distinct binding names (the flag's
 *                  may be NULL with `set_by_body`), the cap, whether the body
 *                  decides
 * @param body      the loop body: enqueues one iteration
 * @param user_data passed to @p body (transfer full when @p destroy is set)
 * @param destroy   called on @p user_data when the producer is freed
 *                  (may be NULL)
 * @param error     as tg_producer_add_device_stage(); also
 *                  #TG_ARGUMENT_ERROR_INVALID (a missing or empty binding
 *                  name), #TG_ARGUMENT_ERROR_DUPLICATE (the flag's binding is
 *                  the status's), #TG_ARGUMENT_ERROR_OUT_OF_RANGE (the cap)
 * @return the stage's index; G_MAXUINT on failure, and then @p destroy is not
 *         called: the caller keeps @p user_data
 */
guint tg_producer_add_loop_stage (TgProducer *producer, const char *name,
                                  TgStageFlags flags, const TgLoopSpec *loop,
                                  TgDeviceFunc body, gpointer user_data,
                                  GDestroyNotify destroy, GError **error);

/**
 * A switch stage, see tg_producer_add_switch_stage().  Name the fields:
 * @code
 * static const TgDeviceFunc cases[] = { small_family, large_family };
 * TgSwitchSpec sw = { .index_binding = "family", .n_cases = 2, .cases = cases };
 * @endcode
 */
typedef struct
{
  const char *index_binding; /**< binding of the `gint32` index */
  guint n_cases;             /**< the number of cases, at least 1 */
  const TgDeviceFunc *cases; /**< @p n_cases bodies, none NULL */
} TgSwitchSpec;

/**
 * Appends a SWITCH stage: runs `cases[i]` where i is the `gint32` bound as
 * @p sw->index_binding, and nothing when i is negative or not below
 * @p sw->n_cases.  Under a capture it is a CUDA SWITCH conditional node
 * (driver and runtime 12.8 or newer, else #TG_CAPTURE_ERROR_NOT_CAPTURABLE
 * and AUTO runs the producer eagerly), of any number of cases; eagerly the
 * host waits for the index (see tg_conditional()).  The index binding is declared
 * for the stage.
 * @param producer  a producer that has not run yet
 * @param name      unique stage name (copied)
 * @param flags     declarations, see #TgStageFlags
 * @param sw        the switch (copied, cases included)
 * @param user_data passed to every case (transfer full when @p destroy is set)
 * @param destroy   called on @p user_data when the producer is freed
 * @param error     as tg_producer_add_device_stage(); also
 *                  #TG_ARGUMENT_ERROR_INVALID (an empty index binding name,
 *                  a missing case), #TG_ARGUMENT_ERROR_EMPTY (no case)
 * @return the stage's index; G_MAXUINT on failure, and then @p destroy is not
 *         called: the caller keeps @p user_data
 */
guint tg_producer_add_switch_stage (TgProducer *producer, const char *name,
                                    TgStageFlags flags, const TgSwitchSpec *sw,
                                    gpointer user_data, GDestroyNotify destroy,
                                    GError **error);

/**
 * Declares that stage @p stage reads the buffer bound as @p name, at least
 * @p min_size bytes of it.  Every call checks, before anything runs or is
 * recorded, that each declared binding is bound with at least its size
 * (else #TG_STATE_ERROR_UNBOUND naming the stage and the binding), so a
 * stage's tg_launch_get_binding() of a declared name never returns NULL.
 * Looking up a name the stage did not declare is a programming error
 * (a critical warning, and NULL).  Condition, loop and switch bindings are
 * declared by the calls that name them.  Declare before the first run.
 * @param producer a producer that has not run yet
 * @param stage    the index returned when the stage was added
 * @param name     binding name (copied)
 * @param min_size the fewest bytes the stage reads or writes, at least 1
 * @param error    #TG_ARGUMENT_ERROR_OUT_OF_RANGE (no such stage),
 *                 #TG_ARGUMENT_ERROR_INVALID (an empty name),
 *                 #TG_ARGUMENT_ERROR_EMPTY (a size of 0), #TG_STATE_ERROR_SEALED,
 *                 #TG_STATE_ERROR_BUSY (see tg_producer_add_device_stage())
 * @return TRUE on success; FALSE with @p error set, nothing changed
 */
gboolean tg_producer_declare_binding (TgProducer *producer, guint stage,
                                      const char *name, gsize min_size, GError **error);

/**
 * Guards stage @p stage by the `gint32` bound as @p flag_binding: the stage
 * runs only when it is non-zero (an IF node under a capture, a wait for the
 * flag eagerly).  NULL removes the guard.  Set before the first run.  A guarded
 * HOST stage cannot be recorded (#TG_CAPTURE_ERROR_NOT_CAPTURABLE).
 * @param producer     a producer that has not run yet
 * @param stage        the index returned when the stage was added
 * @param flag_binding binding name of the guard flag (copied), or NULL
 * @param error        #TG_ARGUMENT_ERROR_OUT_OF_RANGE (no such stage),
 *                     #TG_ARGUMENT_ERROR_INVALID (an empty name),
 *                     #TG_STATE_ERROR_SEALED, #TG_STATE_ERROR_BUSY
 * @return TRUE on success; FALSE with @p error set, nothing changed
 */
gboolean tg_producer_set_stage_condition (TgProducer *producer, guint stage,
                                          const char *flag_binding, GError **error);

/**
 * Gives the guarded DEVICE stage @p stage an else branch: @p else_func runs,
 * with the stage's user data, when its condition flag is 0.  Under a capture
 * the stage is one IF node with two bodies (driver and runtime 12.8 or
 * newer, else #TG_CAPTURE_ERROR_NOT_CAPTURABLE and AUTO runs the producer
 * eagerly).  Set after tg_producer_set_stage_condition(), before the first
 * run; NULL removes the branch.
 * @param producer  a producer that has not run yet
 * @param stage     a DEVICE stage with a condition
 * @param else_func the else branch, or NULL
 * @param error     #TG_ARGUMENT_ERROR_OUT_OF_RANGE (no such stage),
 *                  #TG_ARGUMENT_ERROR_INVALID (not a DEVICE stage with a
 *                  condition), #TG_STATE_ERROR_SEALED, #TG_STATE_ERROR_BUSY
 * @return TRUE on success; FALSE with @p error set, nothing changed
 */
gboolean tg_producer_set_stage_else (TgProducer *producer, guint stage,
                                     TgDeviceFunc else_func, GError **error);

/**
 * @param producer a producer
 * @return the number of stages
 */
guint tg_producer_get_n_stages (TgProducer *producer);

/**
 * Binds (or rebinds) a device buffer under @p name.  The buffer is checked
 * against what the driver knows of its allocation: device memory of the
 * producer's device (or managed memory), with at least @p size bytes from
 * @p device_ptr on.  Changing the buffer (or its size) of a producer that was
 * already captured (its own graph, or recorded into a caller's graph) is a
 * *rebind*: it is counted (TgRunnerStats.n_rebinds), given to the handler of
 * tg_producer_set_rebind_handler(), and, unless that handler took it, logged
 * as a warning in log domain "TrackGen" starting "RebindAfterCaptureWarning".
 * The own graphs are captured again at the next call, and their executable
 * graphs updated in place (`cudaGraphExecUpdate`) when the topology allows,
 * else re-instantiated; graphs of the caller that recorded the producer must
 * be re-captured.  Binding the same buffer and size again changes nothing.
 *
 * @param producer   a producer
 * @param name       binding name (copied)
 * @param device_ptr device memory of the producer's device (transfer none:
 *                   the caller keeps it alive while it is bound and while
 *                   any graph that baked it in may run), or NULL to unbind
 * @param size       its size in bytes (at least 1 when @p device_ptr is set)
 * @param error      #TG_ARGUMENT_ERROR_DEVICE_MISMATCH (memory of another
 *                   device), #TG_ARGUMENT_ERROR_INVALID (not device memory),
 *                   #TG_ARGUMENT_ERROR_SIZE_MISMATCH (@p size larger than the
 *                   allocation from @p device_ptr), #TG_ARGUMENT_ERROR_EMPTY
 *                   (a size of 0), #TG_STATE_ERROR_BUSY (called from a stage
 *                   of the same producer), #TG_ARGUMENT_ERROR_OUT_OF_RANGE,
 *                   #TG_CUDA_ERROR
 * @return TRUE on success; FALSE with @p error set, the binding unchanged
 */
gboolean tg_producer_bind (TgProducer *producer, const char *name, gpointer device_ptr,
                           gsize size, GError **error);

/**
 * Looks a binding up.
 * @param producer a producer
 * @param name     binding name
 * @param size     (out, optional) the bound size in bytes, 0 when unbound
 * @return the buffer bound as @p name (transfer none), or NULL when unbound
 */
gpointer tg_producer_get_binding (TgProducer *producer, const char *name, gsize *size);

/**
 * Called at every rebind of a captured producer (see tg_producer_bind()), on
 * the thread that rebinds, after the binding changed, with the producer held
 * (so tg_producer_set_rebind_handler() on another thread waits for it to
 * return before the old handler's data is destroyed).  It may read the
 * producer (tg_producer_get_binding(), tg_producer_get_runner_stats()); a
 * call that changes or runs it (bind, set_stream, run) fails with
 * #TG_STATE_ERROR_BUSY.
 * @param producer  the producer
 * @param binding   the binding's name (transfer none)
 * @param old_ptr   the buffer bound before (may be NULL)
 * @param new_ptr   the buffer bound now (may be NULL: unbound)
 * @param user_data the data given to tg_producer_set_rebind_handler()
 * @return TRUE when the handler dealt with it: no warning is logged
 */
typedef gboolean (*TgRebindFunc) (TgProducer *producer, const char *binding,
                                  gpointer old_ptr, gpointer new_ptr,
                                  gpointer user_data);

/**
 * Sets the handler told of every rebind after capture, so code can act on
 * it (re-capture its own graphs, count, refuse to go on) instead of a log
 * line, which is fatal under `G_DEBUG=fatal-warnings`.  Replaces a previous
 * handler, whose @p destroy is called.
 * @param producer  a producer
 * @param handler   the handler, or NULL to remove it
 * @param user_data passed to @p handler (transfer full when @p destroy is set)
 * @param destroy   called on @p user_data when the handler is replaced or the
 *                  producer freed (may be NULL)
 */
void tg_producer_set_rebind_handler (TgProducer *producer, TgRebindFunc handler,
                                     gpointer user_data, GDestroyNotify destroy);

/**
 * Resolves the stream and the policy a call would use, without running it.
 * Implements the policy table of the design once; tg_producer_run() uses it.
 * The first call fixes the producer's stages, as a run does.
 *
 * @param producer   a producer
 * @param stream     a stream, NULL (the legacy default stream) or
 *                   #TG_STREAM_AUTO (see @ref exec)
 * @param requested  the requested policy
 * @param condition  the call's condition (a conditional call of a producer
 *                   with HOST stages cannot be recorded)
 * @param policy     (out) EAGER, REPLAY or RECORD
 * @param resolved   (out, optional) the stream (transfer none)
 * @param error      #TG_CAPTURE_ERROR, #TG_STATE_ERROR_POLICY,
 *                   #TG_ARGUMENT_ERROR_DEVICE_MISMATCH,
 *                   #TG_ARGUMENT_ERROR_OUT_OF_RANGE (the producer's device,
 *                   or @p requested not a #TgPolicy: named "policy", a
 *                   critical too when @p error is NULL),
 *                   #TG_STATE_ERROR_BUSY, #TG_CUDA_ERROR
 * @return TRUE when the call would run
 */
gboolean tg_producer_resolve (TgProducer *producer, cudaStream_t stream,
                              TgPolicy requested, TgCondition condition,
                              TgPolicy *policy, cudaStream_t *resolved, GError **error);

/**
 * Runs the producer: resolves stream and policy, then launches, replays or
 * records every stage, under @p condition.  Returns as soon as the work is
 * enqueued unless a HOST stage (or an eager condition) reads back.  The
 * caller's current device is restored.  Calls of one producer from several
 * threads run one at a time; a call from one of its own stages fails with
 * #TG_STATE_ERROR_BUSY.
 *
 * What a failed call guarantees (see @ref capture-rules): a call refused
 * before it runs (a policy, binding, device or declaration error) or while
 * it is captured into TrackGen's own graph (a stage that fails, or that a
 * capture cannot hold) changes nothing: the caller's capture keeps exactly
 * its nodes, no stream is left capturing, nothing leaks.  A stage that
 * breaks the caller's capture itself (an unsafe runtime call, a legacy-stream
 * launch or synchronous copy while a blocking stream captures) is detected
 * after it returns and reported as #TG_CAPTURE_ERROR_FAILED naming it: that
 * capture is lost.  Work a stage sends to a stream other than
 * tg_launch_get_stream() escapes every graph and cannot be detected.
 *
 * @param producer   a producer (transfer none)
 * @param stream     a stream, NULL (the legacy default stream) or
 *                   #TG_STREAM_AUTO to resolve one (see @ref exec)
 * @param requested  the requested #TgPolicy
 * @param condition  tg_unconditional() or tg_conditional()
 * @param error      #TG_CAPTURE_ERROR (refusals, a broken capture),
 *                   #TG_CUDA_ERROR, #TG_STATE_ERROR (POLICY, UNBOUND, BUSY),
 *                   #TG_ARGUMENT_ERROR (DEVICE_MISMATCH, OUT_OF_RANGE: as
 *                   tg_producer_resolve()), or what a stage set, prefixed with the producer's and the
 *                   stage's names
 * @return TRUE when the work was enqueued (or recorded)
 */
gboolean tg_producer_run (TgProducer *producer, cudaStream_t stream, TgPolicy requested,
                          TgCondition condition, GError **error);

/**
 * tg_producer_resolve() with an ambient stream (#TgCallStream: the stream
 * rule and its refusal).  One lock of the producer and one capture query of
 * the resolved stream (two when the producer's bound stream is checked
 * against a capturing ambient stream).
 *
 * @param producer   a producer
 * @param call       the stream named and the ambient stream
 * @param requested  the requested policy
 * @param condition  the call's condition
 * @param policy     (out) EAGER, REPLAY or RECORD
 * @param resolved   (out, optional) the stream (transfer none)
 * @param error      as tg_producer_resolve(), and #TG_STATE_ERROR_POLICY
 *                   when the call would run beside a capture in progress on
 *                   the ambient stream
 * @return TRUE when the call would run
 */
gboolean tg_producer_resolve_full (TgProducer *producer, const TgCallStream *call,
                                   TgPolicy requested, TgCondition condition,
                                   TgPolicy *policy, cudaStream_t *resolved,
                                   GError **error);

/**
 * tg_producer_run() with an ambient stream (#TgCallStream: the stream rule
 * and its refusal): what a framework's binding calls.
 *
 * @param producer   a producer (transfer none)
 * @param call       the stream named and the ambient stream
 * @param requested  the requested #TgPolicy
 * @param condition  tg_unconditional() or tg_conditional()
 * @param error      as tg_producer_run(), and #TG_STATE_ERROR_POLICY when
 *                   the call would run beside a capture in progress on the
 *                   ambient stream
 * @return TRUE when the work was enqueued (or recorded)
 */
gboolean tg_producer_run_full (TgProducer *producer, const TgCallStream *call,
                               TgPolicy requested, TgCondition condition,
                               GError **error);

/** How the last rebind of an own graph was absorbed. */
typedef enum
{
  TG_REBIND_NONE,       /**< no rebind since the producer was captured */
  TG_REBIND_UPDATED,    /**< `cudaGraphExecUpdate` updated the graph in place */
  TG_REBIND_RECAPTURED, /**< the topology changed: graph re-instantiated */
} TgRebindOutcome;

/** Counters of the own-graph runner (REPLAY). */
typedef struct
{
  guint n_segments; /**< device segments (graphs) between HOST stages */
  /** Stream captures of own graphs made (REPLAY).  RECORD's trial captures
   * are not counted: they make no graph of the producer's. */
  guint64 n_captures;
  guint64 n_replays;           /**< calls served by replaying own graphs */
  guint64 n_updates;           /**< own graphs updated in place */
  guint64 n_recaptures;        /**< own graphs re-instantiated after a rebind */
  guint64 n_rebinds;           /**< rebinds after capture (tg_producer_bind()) */
  TgRebindOutcome last_rebind; /**< outcome of the latest rebind */
} TgRunnerStats;

/**
 * Reads the runner's counters into @p stats.  Also callable from a stage of
 * the producer.
 * @param producer a producer
 * @param stats    (out) the counters
 */
void tg_producer_get_runner_stats (TgProducer *producer, TgRunnerStats *stats);

/** @} */

/**
 * @defgroup exec-launch The launch context
 * @ingroup exec
 * What a stage sees during a call (the stage author's side): its device,
 * stream, policy, capture, nesting depth and bindings.
 * @{
 */

/**
 * @param launch a launch context
 * @return the producer whose call this is (transfer none)
 */
TgProducer *tg_launch_get_producer (const TgLaunch *launch);
/**
 * @param launch a launch context
 * @return the name of the running stage (transfer none), or NULL outside a stage
 */
const char *tg_launch_get_stage_name (const TgLaunch *launch);
/**
 * @param launch a launch context
 * @return the device the work runs on (current during the call)
 */
int tg_launch_get_device (const TgLaunch *launch);
/**
 * @param launch a launch context
 * @return the stream to enqueue on (transfer none): the resolved stream, the
 *         producer's own capture stream, or a condition's body stream
 */
cudaStream_t tg_launch_get_stream (const TgLaunch *launch);
/**
 * @param launch a launch context
 * @return the resolved policy: EAGER, REPLAY or RECORD
 */
TgPolicy tg_launch_get_policy (const TgLaunch *launch);
/**
 * @param launch a launch context
 * @return whether work enqueued now is captured (REPLAY capture, RECORD,
 *         condition and loop bodies under either)
 */
gboolean tg_launch_is_capturing (const TgLaunch *launch);
/**
 * @param launch a launch context
 * @return the id of the capture work is recorded into, or 0
 */
unsigned long long tg_launch_get_capture_id (const TgLaunch *launch);
/**
 * @param launch a launch context
 * @return the graph work is captured into (transfer none), or NULL: a graph
 *         of TrackGen's own (REPLAY, and RECORD's capture before it joins
 *         the caller's), the caller's graph, or a condition's body graph
 */
cudaGraph_t tg_launch_get_capture_graph (const TgLaunch *launch);
/**
 * @param launch a launch context
 * @return 0 at top level, n inside n nested conditions or loops
 */
guint tg_launch_get_depth (const TgLaunch *launch);
/**
 * Which pass of a #TG_POLICY_RECORD call is running.  RECORD first captures
 * the call into a graph of its own (the trial: pass 1), so that a refused
 * call leaves the caller's capture untouched, and places it in the caller's
 * capture as one child graph node.  A graph holding a conditional node
 * cannot be a child node, so a call whose producer has a call-level
 * condition, a stage condition (with or without an else branch), a SWITCH
 * or a LOOP stage, or whose stages made conditions of their own, takes a
 * second pass (2) that builds those nodes in the caller's capture.  In a
 * producer with a condition, an else branch, a SWITCH or a LOOP stage, or
 * called under a condition, the second pass calls a stage function (a
 * stage, an else branch, a case, a loop body) again only when its own work
 * holds a conditional node (tg_launch_if() and kin) or an allocation, or
 * when it is the body of a loop that its body decides (tg_loop_next());
 * every other stage function's work is taken from the trial, so it runs
 * once per RECORD call.  In a producer without them, the second pass comes
 * only when a stage made a condition or an allocation of its own, and
 * calls every stage again.
 * @param launch a launch context
 * @return 0 under EAGER and REPLAY, 1 in RECORD's trial, 2 in its second pass
 */
guint tg_launch_get_record_pass (const TgLaunch *launch);
/**
 * Which case of a switch is running, so that one function can serve several
 * cases (a binding of another language, a table of cases that differ only
 * by a parameter).
 * @param launch a launch context
 * @return the case of the innermost switch whose body is running (a SWITCH
 *         stage's or tg_launch_switch()'s), or -1 outside any
 */
gint tg_launch_get_case (const TgLaunch *launch);
/**
 * Looks up a binding the running stage declared (tg_producer_declare_binding(),
 * or its condition, loop or switch binding).  Bound and large enough, or the
 * call would not have started.  The bodies a stage runs through
 * tg_launch_if(), tg_launch_if_else(), tg_launch_switch() and
 * tg_launch_while() are part of the stage: their launch contexts see the
 * same bindings.
 * @param launch a launch context
 * @param name   binding name, declared by the running stage
 * @return the buffer bound as @p name (transfer none); NULL, with a critical
 *         warning, when the stage did not declare @p name
 */
gpointer tg_launch_get_binding (const TgLaunch *launch, const char *name);

/**
 * The size bound with a binding the running stage declared: at least the
 * size it declared, maybe more (a buffer bound for more envs than the stage
 * needs).  A name the stage did not declare is no misuse here: the size is
 * 0, without a warning, so that a caller (a language binding) can ask
 * whether the stage declared @p name before tg_launch_get_binding().
 * @param launch a launch context
 * @param name   binding name
 * @return the bound size in bytes, at least 1 for a declared binding; 0 when
 *         the stage did not declare @p name
 */
gsize tg_launch_get_binding_size (const TgLaunch *launch, const char *name);

/**
 * Keeps @p data alive as long as the graph that holds the running stage's
 * work may run, then calls @p release on it: what a captured kernel uses
 * beyond the bindings (a scratch buffer, the memory pool that served the
 * stage's allocations; the Python package keeps a torch memory pool this
 * way).  How long, by policy:
 * - REPLAY: until the producer's own graph is captured again (then once the
 *   work enqueued on the call's stream so far has run) or the producer is
 *   freed;
 * - RECORD: until the caller's graph and every executable graph made from
 *   it are destroyed, as with tg_retain_full() (on TrackGen's reaper
 *   thread; one user object per capture, none when nothing is kept), or,
 *   where the graph's owner took them (tg_retained_new()), until the owner
 *   hands them back;
 * - EAGER, and a call refused before its work was recorded: when the call
 *   returns.
 * @p release runs in relaxed capture mode, on any thread, never inside the
 * producer's call.
 * @param launch  the launch context of the calling stage
 * @param data    what to keep (transfer full)
 * @param release called once on @p data
 */
void tg_launch_keep (const TgLaunch *launch, gpointer data, GDestroyNotify release);

/**
 * The decision the running decide function of tg_launch_if_by() or
 * tg_launch_switch_by() sets: pass it to the kernel whose one thread calls
 * tg_condition_set() (trackgen/kernel.h).  A value, valid for the kernels
 * the decide function enqueues on tg_launch_get_stream() during this call.
 * @param launch the launch context a decide function was given
 * @return the condition; outside a decide function (a body's launch context
 *         included), a critical warning and a condition whose writes are
 *         dropped
 */
TgDeviceCondition tg_launch_get_condition (const TgLaunch *launch);

/**
 * The continuation the running body of a loop that its body decides
 * (tg_launch_while_by(), a loop stage with #TgLoopSpec `set_by_body`) sets:
 * pass it to the kernel whose one thread calls tg_loop_next()
 * (trackgen/kernel.h) once per iteration.  A value, valid for this
 * iteration's kernels on tg_launch_get_stream().
 * @param launch the launch context the loop's body was given (not the one of
 *               a body nested in it)
 * @return the loop; elsewhere, a critical warning and a loop whose
 *         tg_loop_next() does nothing
 */
TgDeviceLoop tg_launch_get_loop (const TgLaunch *launch);

/** @} */

/**
 * @addtogroup exec-conditions
 * @{
 */

/**
 * Runs @p body under @p condition, from inside a stage, around any part of
 * its work.  Under a capture: an IF node whose body is captured on an
 * internal side stream, so conditions and loops nest.  Eagerly: the host
 * waits for the flag (see tg_conditional()).
 * @param launch    the launch context of the calling stage
 * @param condition tg_conditional() (tg_unconditional() just runs @p body)
 * @param body      enqueues the guarded work on tg_launch_get_stream() of
 *                  the launch context it is given
 * @param user_data passed to @p body
 * @param error     #TG_CAPTURE_ERROR_NOT_CAPTURABLE when the body holds what
 *                  a conditional body cannot (host nodes, allocations,
 *                  events) or conditional nodes are missing,
 *                  #TG_ARGUMENT_ERROR_INVALID or _DEVICE_MISMATCH when the
 *                  flag is not device memory of the producer's device,
 *                  #TG_CUDA_ERROR, or what @p body set
 * @return TRUE on success, FALSE with @p error set
 */
gboolean tg_launch_if (const TgLaunch *launch, TgCondition condition, TgDeviceFunc body,
                       gpointer user_data, GError **error);

/**
 * Runs @p then_body when @p condition holds, else @p else_body, from inside
 * a stage.  Under a capture: one IF node with two bodies (CUDA 12.8 driver
 * and runtime); eagerly: one wait for the flag.  tg_unconditional() just runs
 * @p then_body.
 * @param launch    the launch context of the calling stage
 * @param condition tg_conditional() on a `gint32` in device memory
 * @param then_body runs when the flag is non-zero
 * @param else_body runs when it is 0
 * @param user_data passed to either body
 * @param error     as tg_launch_if(); NOT_CAPTURABLE also when the driver or
 *                  runtime is older than 12.8
 * @return TRUE on success, FALSE with @p error set
 */
gboolean tg_launch_if_else (const TgLaunch *launch, TgCondition condition,
                            TgDeviceFunc then_body, TgDeviceFunc else_body,
                            gpointer user_data, GError **error);

/**
 * Runs `cases[i]`, i the `gint32` at @p index, from inside a stage; nothing
 * when i is negative or not below @p n_cases.  Under a capture: a SWITCH node
 * (CUDA 12.8 driver and runtime); eagerly: one wait for the index.
 * @param launch    the launch context of the calling stage
 * @param index     a `gint32` in device memory
 * @param n_cases   the number of cases, at least 1
 * @param cases     @p n_cases bodies, none NULL
 * @param user_data passed to the case that runs
 * @param error     as tg_launch_if_else(); #TG_ARGUMENT_ERROR_EMPTY for
 *                  @p n_cases 0 (named "n_cases"; a critical too when
 *                  @p error is NULL)
 * @return TRUE on success, FALSE with @p error set
 */
gboolean tg_launch_switch (const TgLaunch *launch, const gint32 *index, guint n_cases,
                           const TgDeviceFunc *cases, gpointer user_data,
                           GError **error);

/**
 * Runs @p body while *@p flag is non-zero, at most @p max_iters times, from
 * inside a stage; writes the outcome to @p status (device memory).  Under a
 * capture: a WHILE node with the iteration counter in @p status, reset at
 * entry.  Eagerly: a host loop that waits once per iteration for the tail
 * kernel's decision (stored in mapped host memory, no copy).
 * @param launch    the launch context of the calling stage
 * @param flag      a `gint32` in device memory; the body clears it to stop
 * @param max_iters 1 to `G_MAXINT32`
 * @param status    a #TgLoopStatus in device memory, apart from @p flag
 * @param body      enqueues one iteration
 * @param user_data passed to @p body
 * @param error     as tg_launch_if(); #TG_ARGUMENT_ERROR_OUT_OF_RANGE for
 *                  @p max_iters out of range; #TG_ARGUMENT_ERROR_INVALID
 *                  also when @p flag or @p status is NULL, or when they
 *                  overlap (the status write would clear the flag: the
 *                  loop would stop after one iteration); each names the
 *                  argument, the producer and the stage (a critical too
 *                  when @p error is NULL)
 * @return TRUE on success, FALSE with @p error set
 */
gboolean tg_launch_while (const TgLaunch *launch, const gint32 *flag, guint max_iters,
                          TgLoopStatus *status, TgDeviceFunc body, gpointer user_data,
                          GError **error);

/**
 * Runs @p then_body when the kernels that @p decide enqueues set the
 * condition to non-zero, else @p else_body (when not NULL), from inside a
 * stage.  @p decide is called first, with a launch context whose
 * tg_launch_get_condition() is the value to pass to its kernel; one thread
 * of that kernel calls tg_condition_set() (see @ref kernel-decisions).  So
 * the kernel that computes the decision also sets it, and no kernel of
 * TrackGen's runs: under a capture, @p decide's kernels precede an IF node
 * whose handle they set; eagerly, their store lands in mapped host memory
 * that TrackGen waits for (no copy, no synchronization when the kernel is
 * quick), then it runs the body.  The results are the same under every
 * policy.  Under RECORD @p decide is called once per capture the call makes
 * (see #TgDeviceFunc).
 * @param launch    the launch context of the calling stage
 * @param decide    enqueues the kernel(s) that set the condition, on
 *                  tg_launch_get_stream() of the launch context it is given
 * @param then_body runs when the condition is non-zero
 * @param else_body runs when it is 0, or NULL (an IF with two bodies under a
 *                  capture: CUDA 12.8 driver and runtime)
 * @param user_data passed to @p decide and to the body that runs
 * @param error     as tg_launch_if_else(); #TG_STATE_ERROR_FAILED when,
 *                  eagerly, no kernel of @p decide set the condition; or
 *                  what @p decide or a body set
 * @return TRUE on success, FALSE with @p error set
 */
gboolean tg_launch_if_by (const TgLaunch *launch, TgDeviceFunc decide,
                          TgDeviceFunc then_body, TgDeviceFunc else_body,
                          gpointer user_data, GError **error);

/**
 * Runs `cases[i]`, i the value the kernels that @p decide enqueues set
 * (tg_condition_set() with tg_launch_get_condition(), as in
 * tg_launch_if_by()), from inside a stage; nothing when i is not below
 * @p n_cases.  Under a capture: a SWITCH node (CUDA 12.8 driver and runtime)
 * after @p decide's kernels; eagerly, TrackGen waits for their store.
 * @param launch    the launch context of the calling stage
 * @param decide    enqueues the kernel(s) that set the case
 * @param n_cases   the number of cases, at least 1
 * @param cases     @p n_cases bodies, none NULL
 * @param user_data passed to @p decide and to the case that runs
 * @param error     as tg_launch_if_by(); #TG_ARGUMENT_ERROR_EMPTY for
 *                  @p n_cases 0, as tg_launch_switch()
 * @return TRUE on success, FALSE with @p error set
 */
gboolean tg_launch_switch_by (const TgLaunch *launch, TgDeviceFunc decide,
                              guint n_cases, const TgDeviceFunc *cases,
                              gpointer user_data, GError **error);

/**
 * A bounded loop whose body decides each continuation, from inside a
 * stage: runs @p body at most @p max_iters times, as long as its kernel
 * says so, and writes the outcome to @p status (device memory).  One thread
 * of a kernel of @p body calls tg_loop_next() with tg_launch_get_loop() once
 * per iteration; it counts the iteration and folds the cap in exactly, as
 * tg_launch_while() does, so the status and the exit reason are the same,
 * with no kernel of TrackGen's per iteration: under a capture the body is a
 * WHILE node's and its kernel sets the handle; eagerly its store lands in
 * mapped host memory that TrackGen waits for before the next iteration.
 * One entry kernel per run resets @p status and reads @p entry_flag.
 * @param launch     the launch context of the calling stage
 * @param entry_flag a `gint32` in device memory read at entry (0: skipped,
 *                   #TG_LOOP_END_SKIPPED), or NULL to always enter
 * @param max_iters  1 to `G_MAXINT32`
 * @param status     a #TgLoopStatus in device memory, apart from
 *                   @p entry_flag
 * @param body       enqueues one iteration and decides it (tg_loop_next())
 * @param user_data  passed to @p body
 * @param error      as tg_launch_while(); #TG_STATE_ERROR_FAILED when,
 *                   eagerly, an iteration's kernels did not call
 *                   tg_loop_next()
 * @return TRUE on success, FALSE with @p error set
 */
gboolean tg_launch_while_by (const TgLaunch *launch, const gint32 *entry_flag,
                             guint max_iters, TgLoopStatus *status, TgDeviceFunc body,
                             gpointer user_data, GError **error);

/** @} */

/**
 * @defgroup exec-host Host operations
 * @ingroup exec
 * What a HOST stage may do with its stream: copies, synchronization and host
 * functions, refused under RECORD when a capture cannot hold them.
 * @{
 */

/** A host function enqueued by tg_host_ops_enqueue(); it must not call CUDA. */
typedef void (*TgHostCallback) (gpointer user_data);

/**
 * @param ops the host operations of a HOST stage
 * @return the launch context of the HOST stage using @p ops (transfer none)
 */
const TgLaunch *tg_host_ops_get_launch (TgHostOps *ops);

/**
 * Copies @p size bytes from device memory to host memory and waits for them.
 * @param ops        the host operations of the calling stage
 * @param host_dst   host memory of at least @p size bytes
 * @param device_src device memory
 * @param size       bytes to copy
 * @param error      #TG_CAPTURE_ERROR_NOT_CAPTURABLE under RECORD (it needs a
 *                   synchronization), #TG_CUDA_ERROR
 * @return TRUE when the bytes are in @p host_dst
 */
gboolean tg_host_ops_copy_to_host (TgHostOps *ops, gpointer host_dst,
                                   gconstpointer device_src, gsize size,
                                   GError **error);

/**
 * Enqueues a copy of @p size bytes from host memory to device memory; the
 * host buffer must stay valid until the copy ran.  Under RECORD it becomes a
 * copy node that reads @p host_src at every replay, which needs pinned memory
 * (`cudaMallocHost`).
 * @param ops        the host operations of the calling stage
 * @param device_dst device memory of at least @p size bytes
 * @param host_src   host memory (transfer none; pinned under RECORD, kept
 *                   alive as long as the graph may run)
 * @param size       bytes to copy
 * @param error      #TG_CAPTURE_ERROR_NOT_CAPTURABLE under RECORD from
 *                   pageable memory, #TG_CUDA_ERROR
 * @return TRUE when the copy is enqueued
 */
gboolean tg_host_ops_copy_to_device (TgHostOps *ops, gpointer device_dst,
                                     gconstpointer host_src, gsize size,
                                     GError **error);

/**
 * Waits for everything enqueued on the stream so far.
 * @param ops   the host operations of the calling stage
 * @param error #TG_CAPTURE_ERROR_NOT_CAPTURABLE under RECORD, #TG_CUDA_ERROR
 * @return TRUE when the stream is idle
 */
gboolean tg_host_ops_synchronize (TgHostOps *ops, GError **error);

/**
 * Enqueues @p func on the stream (`cudaLaunchHostFunc`); under RECORD it
 * becomes a host node of the caller's graph that runs at every replay.
 * @param ops       the host operations of the calling stage
 * @param func      the host function; it must not call CUDA
 * @param user_data passed to @p func (transfer none: keep it alive as long
 *                  as the function may run, every replay included)
 * @param error     #TG_CUDA_ERROR
 * @return TRUE when the function is enqueued
 */
gboolean tg_host_ops_enqueue (TgHostOps *ops, TgHostCallback func, gpointer user_data,
                              GError **error);

/** @} */

/**
 * @defgroup exec-diagnostics Diagnostics
 * @ingroup exec
 * Live-object counters for leak checks, NVTX ranges for profilers, and checked
 * mode.
 * @{
 */

/** Counts of what TrackGen created and has not destroyed yet. */
typedef struct
{
  gint producers;   /**< live producers */
  gint graphs;      /**< live `cudaGraph_t` made by TrackGen */
  gint graph_execs; /**< live `cudaGraphExec_t` made by TrackGen */
  gint streams;     /**< live streams made by TrackGen (default streams included) */
  gint captures;    /**< captures TrackGen began and has not ended */
  /** Releases (frees, destroys) that CUDA refused since the process started;
   * each was also logged as a warning.  The objects stay counted above. */
  gint failed_releases;
  /** Streams of freed producers that TrackGen keeps, idle, for the captures of
   * later producers of the same device (at most a few per device; not
   * counted in @c streams). */
  gint idle_streams;
  /** CUDA user objects TrackGen tied to graphs whose destructor has not run:
   * at most one per graph that holds what TrackGen retains (tg_retain(),
   * tg_launch_keep() under RECORD), none where nothing is kept or the
   * graph's owner holds it (tg_retained_new()). */
  gint user_objects;
} TgLiveObjects;

/**
 * Reads the live-object counters, for leak checks.  Thread-safe.
 * @param live (out) the counters
 */
void tg_get_live_objects (TgLiveObjects *live);

/**
 * Turns NVTX ranges on or off, for every thread: a range named after the
 * producer around each tg_producer_run(), and one named "producer/stage"
 * around each stage the call runs on the host (EAGER, RECORD, the capture of
 * REPLAY's own graph; a replay of that graph runs no stage on the host), so
 * that Nsight Systems (`nsys profile --trace=cuda,nvtx`) shows TrackGen's
 * work by name.  Off by default, at the cost of one predictable branch per
 * call and stage; the environment variable `TG_NVTX=1` turns them on until
 * this is called.  The ranges are NVTX 3's (header-only, from the CUDA
 * toolkit): without a tool attached each is a no-op of NVTX's own.
 * @param on TRUE to open ranges
 */
void tg_set_nvtx (gboolean on);

/**
 * @return whether NVTX ranges are on (tg_set_nvtx(), else `TG_NVTX=1`)
 */
gboolean tg_get_nvtx (void);

/**
 * Turns checked mode on or off, for every thread.  With it on, every CUDA
 * call that enqueues device work (launches, copies, sets, stream-ordered
 * allocations and frees, event records and waits) made on a stage's thread
 * while the stage runs is checked when the stage returns: under REPLAY and
 * RECORD the work must be in the stage's capture, under EAGER on the stage's
 * stream or joined back to it; else the call fails with
 * #TG_CAPTURE_ERROR_ESCAPED naming the stage, the CUDA call, the kernel and
 * the stream, refused like every refusal.  This sees the work of every
 * library (TrackGen's, PyTorch's, Warp's, the stage's own) through NVIDIA's
 * CUPTI callback API, loaded with `dlopen` only when the mode is turned on
 * (`libcupti.so.13`; the environment variable `TG_CUPTI_PATH` names the file
 * or its folder).  Off by default, at the cost of a predictable branch before
 * and after each stage; on, every CUDA call of the process that enqueues device
 * work or orders streams passes CUPTI's callback.  The
 * environment variable `TG_CHECK=1` turns it on when the first producer is
 * made, until this is called; when CUPTI cannot be loaded then, every checked stage fails
 * with the reason.  See @ref capture-rules.
 * @param on    TRUE to check
 * @param error #TG_STATE_ERROR_FAILED when CUPTI cannot be loaded or
 *              subscribed to (the message names `TG_CUPTI_PATH`); checked
 *              mode is off then
 * @return TRUE on success
 */
gboolean tg_set_checks (gboolean on, GError **error);

/**
 * @return whether checked mode is on (tg_set_checks(), else `TG_CHECK=1`,
 *         also when CUPTI failed to load for it)
 */
gboolean tg_get_checks (void);

/** @} */

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TgProducer, tg_producer_unref)

/** @} */

G_END_DECLS

#endif /* TRACKGEN_EXEC_H */
