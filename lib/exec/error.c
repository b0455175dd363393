/* SPDX-License-Identifier: Apache-2.0 */
/* error.c: error domains, the CUDA-to-GError helper and fault injection. */
#include "config.h"
#include "error-private.h"
#include "tsan-private.h"

/* What an error of a domain with fields concerns (GLib's extended errors):
 * the private data GLib allocates, zeroed, with every GError of the domain. */
typedef struct
{
  char *producer;
  char *stage;
  char *binding;
} TgErrorFields;

static TgErrorFields *
fields_of (const GError *error)
{
  /* Where GLib places it: before the GError, aligned as GType's private
   * data (gerror.h, G_DEFINE_EXTENDED_ERROR's _get_private). */
  const gsize sa = 2 * sizeof (gsize);
  const gsize as = (sizeof (TgErrorFields) + (sa - 1)) & -sa;

  return (TgErrorFields *)(((guint8 *)error) - as);
}

/* Set on the thread whose error fields_init() just prepared: how a
 * registration tells its own domain from a name registered first by
 * another (registered_here()). */
static _Thread_local gboolean initialized;

static void
fields_init (GError *error)
{
  initialized = TRUE;
}

static void
fields_copy (const GError *src, GError *dest)
{
  const TgErrorFields *from = fields_of (src);
  TgErrorFields *to = fields_of (dest);

  to->producer = g_strdup (from->producer);
  to->stage = g_strdup (from->stage);
  to->binding = g_strdup (from->binding);
}

static void
fields_free (TgErrorFields *f)
{
  g_clear_pointer (&f->producer, g_free);
  g_clear_pointer (&f->stage, g_free);
  g_clear_pointer (&f->binding, g_free);
}

static void
fields_clear (GError *error)
{
  fields_free (fields_of (error));
}

/* The domains whose errors carry TgErrorFields: TrackGen's four, always
 * first, and up to MAX_USER_DOMAINS of tg_error_domain_register().  Only
 * their errors may be read as having fields: GLib allocates none for
 * others.  Entries are written before the count that publishes them, and
 * never change. */
#define MAX_USER_DOMAINS 12
#define MAX_DOMAINS (4 + MAX_USER_DOMAINS)
static GQuark domains[MAX_DOMAINS];
static gint n_domains;
static GMutex domains_lock;

static gboolean
has_fields (GQuark domain)
{
  gint n = g_atomic_int_get (&n_domains);

  for (gint i = 0; i < n; i++)
    if ((GQuark)g_atomic_int_get ((gint *)&domains[i]) == domain)
      return TRUE;
  return FALSE;
}

/* Whether GLib runs fields_init() for @domain's errors.  Not when the name
 * was registered first by GLib's g_error_domain_register() or another copy
 * of TrackGen: GLib keeps the first registration, returns the quark with a
 * critical, and allocates that one's private data, not TgErrorFields. */
static gboolean
registered_here (GQuark domain)
{
  GError *probe;
  gboolean ours;

  initialized = FALSE;
  probe = g_error_new_literal (domain, 0, "");
  ours = initialized;
  g_error_free (probe);
  return ours;
}

static GQuark
domain_register (const char *name)
{
  GQuark q;

  tg__mutex_lock (&domains_lock);
  q = g_quark_try_string (name);
  if (q == 0 || !has_fields (q))
    {
      if (n_domains == MAX_DOMAINS)
        g_critical ("tg_error_domain_register: %s: already %d domains registered", name,
                    MAX_USER_DOMAINS);
      else if ((q = g_error_domain_register_static (name, sizeof (TgErrorFields),
                                                    fields_init, fields_copy,
                                                    fields_clear))
                   != 0
               && registered_here (q))
        {
          g_atomic_int_set ((gint *)&domains[n_domains], (gint)q);
          g_atomic_int_inc (&n_domains);
        }
      /* Past the limit, or another's: still a domain, its errors without
       * fields. */
      if (q == 0)
        q = g_quark_from_static_string (name);
    }
  tg__mutex_unlock (&domains_lock);
  return q;
}

GQuark
tg_error_domain_register (const char *name)
{
  g_return_val_if_fail (name != NULL, 0);
  /* TrackGen's own first, so that a caller's domains never take their
   * places. */
  (void)tg_capture_error_quark ();
  (void)tg_cuda_error_quark ();
  (void)tg_argument_error_quark ();
  (void)tg_state_error_quark ();
  return domain_register (name);
}

/* The quark function of a domain of TrackGen's, registered with its fields
 * at the first call.  The quark is read and published atomically, not
 * through GOnce, which ThreadSanitizer cannot see into. */
#define TG_DEFINE_ERROR_DOMAIN(QN, q_n)                                                \
  GQuark q_n##_quark (void)                                                            \
  {                                                                                    \
    static gint q;                                                                     \
    gint value = g_atomic_int_get (&q);                                                \
                                                                                       \
    if (G_UNLIKELY (value == 0))                                                       \
      g_atomic_int_set (&q, value = (gint)domain_register (#QN));                      \
    return (GQuark)value;                                                              \
  }

/* Quark names are strings, not expressions. */
/* clang-format off */
TG_DEFINE_ERROR_DOMAIN (tg-capture-error-quark, tg_capture_error)
TG_DEFINE_ERROR_DOMAIN (tg-cuda-error-quark, tg_cuda_error)
TG_DEFINE_ERROR_DOMAIN (tg-argument-error-quark, tg_argument_error)
TG_DEFINE_ERROR_DOMAIN (tg-state-error-quark, tg_state_error)
/* clang-format on */

void
tg_error_set_fields (GError *error, const char *producer, const char *stage,
                     const char *binding)
{
  TgErrorFields *f, old;

  g_return_if_fail (error != NULL);
  if (!has_fields (error->domain))
    return;
  /* All copied before any is freed: a value may be a field's own string,
   * or another's (producer and stage swapped). */
  f = fields_of (error);
  old = *f;
  f->producer = g_strdup (producer);
  f->stage = g_strdup (stage);
  f->binding = g_strdup (binding);
  fields_free (&old);
}

void
tg__error_name_producer (GError **error, const char *producer)
{
  /* Only a domain with fields can say whether the producer is named: a
   * stage's error of another domain was prefixed where the stage failed. */
  if (error == NULL || *error == NULL || !has_fields ((*error)->domain)
      || fields_of (*error)->producer != NULL)
    return;
  g_prefix_error (error, "producer '%s': ", producer);
  fields_of (*error)->producer = g_strdup (producer);
}

/* The field at @offset of @error's fields, or NULL. */
static const char *
field (const GError *error, gsize offset)
{
  if (!has_fields (error->domain))
    return NULL;
  return G_STRUCT_MEMBER (const char *, fields_of (error), offset);
}

const char *
tg_error_get_producer (const GError *error)
{
  g_return_val_if_fail (error != NULL, NULL);
  return field (error, G_STRUCT_OFFSET (TgErrorFields, producer));
}

const char *
tg_error_get_stage (const GError *error)
{
  g_return_val_if_fail (error != NULL, NULL);
  return field (error, G_STRUCT_OFFSET (TgErrorFields, stage));
}

const char *
tg_error_get_binding (const GError *error)
{
  g_return_val_if_fail (error != NULL, NULL);
  return field (error, G_STRUCT_OFFSET (TgErrorFields, binding));
}

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

void
tg__set_error_about (GError **error, const char *producer, const char *stage,
                     const char *binding, GQuark domain, gint code, const char *format,
                     ...)
{
  va_list args;

  if (error == NULL || *error != NULL)
    return;
  va_start (args, format);
  *error = g_error_new_valist (domain, code, format, args);
  va_end (args);
  tg_error_set_fields (*error, producer, stage, binding);
}

gboolean
tg__refuse (GError **error, const char *func, const char *producer, const char *stage,
            const char *binding, GQuark domain, gint code, const char *format, ...)
{
  g_autofree char *what = NULL;
  va_list args;
  GError *e;

  va_start (args, format);
  what = g_strdup_vprintf (format, args);
  va_end (args);
  if (producer == NULL)
    e = g_error_new_literal (domain, code, what);
  else if (stage != NULL)
    e = g_error_new (domain, code, "producer '%s', stage '%s': %s", producer, stage,
                     what);
  else
    e = g_error_new (domain, code, "producer '%s': %s", producer, what);
  tg_error_set_fields (e, producer, stage, binding);
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
