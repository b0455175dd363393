/* SPDX-License-Identifier: Apache-2.0 */
/* error-private.h: the one CUDA check used everywhere in libtrackgen, and
 * the fault injection it carries in a --enable-fault-injection build.
 * Private to libtrackgen: shipped by make dist, never installed. */
#ifndef TG_ERROR_PRIVATE_H
#define TG_ERROR_PRIVATE_H

#include <trackgen/exec.h>

G_BEGIN_DECLS

/* The failure half of tg__cuda_ok(), out of line: always FALSE. */
gboolean tg__cuda_failed (cudaError_t status, const char *call, const char *where,
                          GError **error);

/* Turns a CUDA result into a TG_CUDA_ERROR naming the call and the call site.
 * Keeps an error already set (the first one wins).  When the runtime holds
 * this very failure as its non-sticky last error, it is cleared, so that a
 * caller's later cudaGetLastError() does not see a failure TrackGen already
 * reported; an error the caller left pending is never touched.  Inline:
 * every CUDA call of a call goes through it, and success is one comparison. */
static inline gboolean
tg__cuda_ok (cudaError_t status, const char *call, const char *where, GError **error)
{
  return G_LIKELY (status == cudaSuccess)
         || tg__cuda_failed (status, call, where, error);
}

/* Clears @status from the runtime's last error when it is still there: a
 * failure TrackGen handled must not reach the caller's cudaGetLastError(),
 * and an error the caller left pending (any other value) is never touched. */
void tg__cuda_clear (cudaError_t status);

#if TG_FAULT_INJECTION
/* Counts every CUDA call made through TG_CUDA_CALL / TG_CUDA_OVERRIDE and
 * fails the one numbered tg__fault_at (1-based) with tg__fault_status. */
gboolean tg__fault_hit (void);
cudaError_t tg__fault_injected (void);
/* Arms the injection: call number @at (0: none) fails with @status; resets
 * the count. */
void tg__fault_arm (guint64 at, cudaError_t status);
/* Calls counted since the last tg__fault_arm(). */
guint64 tg__fault_count (void);
/* An injected failure replaces the call: nothing was done, as when CUDA
 * refuses one. */
#define TG_CUDA_CALL(call)                                                             \
  (G_UNLIKELY (tg__fault_hit ()) ? tg__fault_injected () : (call))
/* For calls that end or release something: the call is made, its status
 * replaced, so an injected failure leaves no capture open. */
#define TG_CUDA_OVERRIDE(status) tg__fault_override_status (tg__fault_hit (), (status))
cudaError_t tg__fault_override_status (gboolean hit, cudaError_t status);
#else
#define TG_CUDA_CALL(call) (call)
#define TG_CUDA_OVERRIDE(status) (status)
#endif

#define TG_CUDA_OK(call, error)                                                        \
  tg__cuda_ok (TG_CUDA_CALL (call), #call, G_STRLOC, (error))

#define TG_CUDA_GOTO(call, error, label)                                               \
  G_STMT_START                                                                         \
  {                                                                                    \
    if (!TG_CUDA_OK (call, error))                                                     \
      goto label;                                                                      \
  }                                                                                    \
  G_STMT_END

/* Sets @error unless one is set already: cleanup paths keep the first error. */
void tg__set_error (GError **error, GQuark domain, gint code, const char *format, ...)
    G_GNUC_PRINTF (4, 5);

/* tg__set_error(), with the producer, stage and binding it concerns. */
void tg__set_error_about (GError **error, const char *producer, const char *stage,
                          const char *binding, GQuark domain, gint code,
                          const char *format, ...) G_GNUC_PRINTF (7, 8);

/* Names @producer in *@error, a failure of one of its calls, when nothing
 * did: its message prefixed "producer 'p': ", its producer field set.  For
 * what the call met before or around its stages (the policy, the stream,
 * the device, its own graph); a stage's error names the producer and the
 * stage already. */
void tg__error_name_producer (GError **error, const char *producer);

/* A refusal of the caller's data by a call @func: sets @error with the
 * message prefixed "producer 'p', stage 's': " (@stage may be NULL; neither
 * when @producer is NULL) and its fields, or, when the caller passed no @error, logs it as a critical, so
 * that misuse stays visible to callers who ignore errors.  Always FALSE. */
gboolean tg__refuse (GError **error, const char *func, const char *producer,
                     const char *stage, const char *binding, GQuark domain, gint code,
                     const char *format, ...) G_GNUC_PRINTF (8, 9);

G_END_DECLS

#endif
