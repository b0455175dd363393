/* error.c: error domains, the CUDA-to-GError helper and fault injection. */
#include "config.h"
#include "error-private.h"
#include "tsan-private.h"

/* G_DEFINE_QUARK, but race-free: GLib's caches the quark in a plain static
 * that the first errors of two threads write at once, a data race (harmless
 * in practice: both write the same value) that ThreadSanitizer reports. */
#define TG_DEFINE_QUARK(QN, q_n)                                                       \
  GQuark q_n##_quark (void)                                                            \
  {                                                                                    \
    static gint q;                                                                     \
    gint value = g_atomic_int_get (&q);                                                \
                                                                                       \
    if (G_UNLIKELY (value == 0))                                                       \
      g_atomic_int_set (&q, value = (gint)g_quark_from_static_string (#QN));           \
    return (GQuark)value;                                                              \
  }

/* Quark names are strings, not expressions. */
/* clang-format off */
TG_DEFINE_QUARK (tg-capture-error-quark, tg_capture_error)
TG_DEFINE_QUARK (tg-cuda-error-quark, tg_cuda_error)
TG_DEFINE_QUARK (tg-argument-error-quark, tg_argument_error)
TG_DEFINE_QUARK (tg-state-error-quark, tg_state_error)
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
tg__refuse (GError **error, const char *func, const char *producer, const char *stage,
            GQuark domain, gint code, const char *format, ...)
{
  g_autofree char *what = NULL;
  va_list args;
  GError *e;

  va_start (args, format);
  what = g_strdup_vprintf (format, args);
  va_end (args);
  if (stage != NULL)
    e = g_error_new (domain, code, "producer '%s', stage '%s': %s", producer, stage,
                     what);
  else
    e = g_error_new (domain, code, "producer '%s': %s", producer, what);
  if (error == NULL)
    g_critical ("%s: %s", func, e->message);
  g_propagate_error (error, e);
  return FALSE;
}

void
tg__cuda_clear (cudaError_t status)
{
  if (status != cudaSuccess && cudaPeekAtLastError () == status)
    (void)cudaGetLastError ();
}

gboolean
tg__cuda_failed (cudaError_t status, const char *call, const char *where,
                 GError **error)
{
  tg__cuda_clear (status);
  tg__set_error (error, TG_CUDA_ERROR, (gint)status, "%s failed at %s: %s (%s)", call,
                 where, cudaGetErrorName (status), cudaGetErrorString (status));
  return FALSE;
}

#if TG_FAULT_INJECTION
static guint64 fault_at;
static guint64 fault_calls;
static cudaError_t fault_status = cudaErrorMemoryAllocation;
static GMutex fault_lock;

gboolean
tg__fault_hit (void)
{
  gboolean hit;

  tg__mutex_lock (&fault_lock);
  hit = ++fault_calls == fault_at;
  tg__mutex_unlock (&fault_lock);
  return hit;
}

cudaError_t
tg__fault_injected (void)
{
  return fault_status;
}

cudaError_t
tg__fault_override_status (gboolean hit, cudaError_t status)
{
  return hit ? fault_status : status;
}

void
tg__fault_arm (guint64 at, cudaError_t status)
{
  tg__mutex_lock (&fault_lock);
  fault_at = at;
  fault_status = status;
  fault_calls = 0;
  tg__mutex_unlock (&fault_lock);
}

guint64
tg__fault_count (void)
{
  guint64 n;

  tg__mutex_lock (&fault_lock);
  n = fault_calls;
  tg__mutex_unlock (&fault_lock);
  return n;
}
#endif
