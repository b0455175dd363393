/* error-private.h: the one CUDA check used everywhere in libtrackgen.
 * Private to libtrackgen: shipped by make dist, never installed. */
#ifndef TG_ERROR_PRIVATE_H
#define TG_ERROR_PRIVATE_H

#include <trackgen/exec.h>

G_BEGIN_DECLS

/* Turns a CUDA result into a TG_CUDA_ERROR naming the call and the call site.
 * Keeps an error already set (the first one wins) and clears the runtime's
 * non-sticky last error, so that a caller's later cudaGetLastError() does not
 * see a failure TrackGen already reported. */
gboolean tg__cuda_ok (cudaError_t status, const char *call, const char *where,
                      GError **error);

#define TG_CUDA_OK(call, error) tg__cuda_ok ((call), #call, G_STRLOC, (error))

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

G_END_DECLS

#endif
