/* SPDX-License-Identifier: Apache-2.0 */
/* device-private.h: the current device around a call, the device count, and
 * checks that memory belongs to a device.  Private to libtrackgen. */
#ifndef TG_DEVICE_PRIVATE_H
#define TG_DEVICE_PRIVATE_H

#include "error-private.h"

G_BEGIN_DECLS

/* Device switching: enter makes @device current, leave restores the caller's. */
typedef struct
{
  int saved;
  gboolean switched;
} TgDeviceGuard;

/* The number of devices this process sees once it was asked (it never
 * changes), else 0.  Read with tg__device_count(). */
extern gint tg__n_devices;

/* The slow halves of the calls below. */
gboolean tg__device_enter_slow (TgDeviceGuard *guard, int device, GError **error);
void tg__device_restore (TgDeviceGuard *guard);
int tg__device_count_slow (void);

/* Inline, as every call enters and leaves its device: with one device it is
 * the current one, and entering costs one load. */
static inline gboolean
tg__device_enter (TgDeviceGuard *guard, int device, GError **error)
{
  guard->switched = FALSE;
  if (device == 0 && g_atomic_int_get (&tg__n_devices) == 1)
    return TRUE;
  return tg__device_enter_slow (guard, device, error);
}

static inline void
tg__device_leave (TgDeviceGuard *guard)
{
  if (G_UNLIKELY (guard->switched))
    tg__device_restore (guard);
}

/* The number of devices this process sees, asked once (0 when the runtime
 * cannot say: no driver, no device). */
static inline int
tg__device_count (void)
{
  int n = g_atomic_int_get (&tg__n_devices);

  return G_LIKELY (n != 0) ? n : tg__device_count_slow ();
}

/* Checks that @ptr is device memory of @device (or managed memory) holding at
 * least @size bytes from @ptr, as far as the driver knows its allocation:
 * TG_ARGUMENT_ERROR_INVALID, _DEVICE_MISMATCH or _SIZE_MISMATCH naming @what. */
gboolean tg__check_device_buffer (const char *what, gconstpointer ptr, gsize size,
                                  int device, GError **error);

/* Checks that @stream (its capture in state @state) belongs to @device:
 * TG_ARGUMENT_ERROR_DEVICE_MISMATCH otherwise.  The slow half of
 * tg__stream_check() (stream-private.h), when the process sees several
 * devices. */
gboolean tg__device_check_stream (cudaStream_t stream, int device, TgCaptureState state,
                                  GError **error);

/* Whether [a, a + na) and [b, b + nb) share a byte. */
static inline gboolean
tg__ranges_overlap (gconstpointer a, gsize na, gconstpointer b, gsize nb)
{
  guintptr x = (guintptr)a, y = (guintptr)b;

  return x < y + nb && y < x + na;
}

G_END_DECLS

#endif
