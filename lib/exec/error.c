/* error.c: error domains and the CUDA-to-GError helper. */
#include "config.h"
#include "error-private.h"

/* Quark names are strings, not expressions. */
/* clang-format off */
G_DEFINE_QUARK (tg-capture-error-quark, tg_capture_error)
G_DEFINE_QUARK (tg-cuda-error-quark, tg_cuda_error)
G_DEFINE_QUARK (tg-argument-error-quark, tg_argument_error)
/* clang-format on */

void
tg__set_error (GError **error, GQuark domain, gint code, const char *format, ...)
{
  va_list args;

  if (error == NULL || *error != NULL)
    return;
  va_start (args, format);
  *error = g_error_new_valist (domain, code, format, args);
  va_end (args);
}

gboolean
tg__cuda_ok (cudaError_t status, const char *call, const char *where, GError **error)
{
  if (G_LIKELY (status == cudaSuccess))
    return TRUE;
  (void)cudaGetLastError ();
  tg__set_error (error, TG_CUDA_ERROR, (gint)status, "%s failed at %s: %s (%s)", call,
                 where, cudaGetErrorName (status), cudaGetErrorString (status));
  return FALSE;
}
