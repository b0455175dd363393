/* SPDX-License-Identifier: Apache-2.0 */
/* device.c: device selection, the device count, device-memory checks, a
 * stream's device and the device check. */
#include "config.h"
#include "device-kernels-private.h"
#include "device-private.h"
#include "driver-private.h"
#include "resource-private.h"

gint tg__n_devices;

static gboolean
device_validate (int device, GError **error)
{
  int count = 0;

  if (!TG_CUDA_OK (cudaGetDeviceCount (&count), error))
    return FALSE;
  g_atomic_int_set (&tg__n_devices, count);
  if (device < 0 || device >= count)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_OUT_OF_RANGE,
                     "device %d does not exist: this process sees %d CUDA device%s "
                     "(ordinals 0 to %d)",
                     device, count, count == 1 ? "" : "s", count - 1);
      return FALSE;
    }
  return TRUE;
}

gboolean
tg__device_enter_slow (TgDeviceGuard *guard, int device, GError **error)
{
  gpointer primary;

  /* With several devices, the hot path is one thread-local read of the
   * driver's: the device's primary context is current already. */
  primary = tg__primary_context (device);
  if (primary != NULL && tg__current_context () == primary)
    return TRUE;
  if (!TG_CUDA_OK (cudaGetDevice (&guard->saved), error))
    return FALSE;
  if (guard->saved == device)
    return TRUE;
  if (!device_validate (device, error) || !TG_CUDA_OK (cudaSetDevice (device), error))
    return FALSE;
  guard->switched = TRUE;
  return TRUE;
}

void
tg__device_restore (TgDeviceGuard *guard)
{
  (void)cudaSetDevice (guard->saved);
  guard->switched = FALSE;
}

int
tg__device_count_slow (void)
{
  (void)device_validate (0, NULL);
  return g_atomic_int_get (&tg__n_devices);
}

gboolean
tg__check_device_buffer (const char *what, gconstpointer ptr, gsize size, int device,
                         GError **error)
{
  struct cudaPointerAttributes attr;
  gconstpointer base = NULL;
  gsize range = 0, offset;

  if (!tg__pointer_attributes (ptr, &attr, error))
    return FALSE;
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID,
                     "%s: %p is not device memory; pass memory from cudaMalloc on "
                     "device %d",
                     what, ptr, device);
      return FALSE;
    }
  if (attr.type == cudaMemoryTypeDevice && attr.device != device)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_DEVICE_MISMATCH,
                     "%s: %p is memory of device %d, but the work is for device %d; "
                     "pass memory of device %d",
                     what, ptr, attr.device, device, device);
      return FALSE;
    }
  /* The driver knows the allocation behind the pointer: the buffer must fit
   * in what is left of it from @ptr on. */
  if (tg__mem_get_range (ptr, &base, &range) != cudaSuccess)
    return TRUE;
  offset = (const guint8 *)ptr - (const guint8 *)base;
  if (size > range - offset)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                     "%s: %" G_GSIZE_FORMAT " bytes from %p, but its allocation holds "
                     "only %" G_GSIZE_FORMAT " bytes from there; pass the size of the "
                     "memory allocated",
                     what, size, ptr, range - offset);
      return FALSE;
    }
  return TRUE;
}

gboolean
tg_device_check (int device, GError **error)
{
  const guint32 n = 4096, salt = 0x7261636Bu;
  g_autofree guint32 *host = NULL;
  guint32 *dev = NULL;
  cudaStream_t stream = NULL;
  TgDeviceGuard guard;
  gboolean ok = FALSE;

  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!tg__device_enter (&guard, device, error))
    return FALSE;
  host = g_new0 (guint32, n);
  if ((stream = tg__stream_new (error)) == NULL)
    goto out;
  if ((dev = tg__device_alloc (n * sizeof (guint32), error)) == NULL)
    goto out;
  TG_CUDA_GOTO (tg__launch_check_pattern (stream, dev, n, salt), error, out);
  TG_CUDA_GOTO (
      cudaMemcpyAsync (host, dev, n * sizeof (guint32), cudaMemcpyDeviceToHost, stream),
      error, out);
  if (!tg__stream_synchronize (stream, error))
    goto out;
  for (guint32 i = 0; i < n; i++)
    if (host[i] != tg__check_pattern (i, salt))
      {
        tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                       "device %d computed a wrong value at element %u "
                       "(0x%08x, expected 0x%08x): the device or driver is faulty",
                       device, i, host[i], tg__check_pattern (i, salt));
        goto out;
      }
  ok = TRUE;
out:
  tg__device_free (dev);
  tg__stream_free (stream);
  tg__device_leave (&guard);
  return ok;
}

static gboolean
stream_is_special (cudaStream_t stream)
{
  /* The legacy and per-thread handles mean "of the current device". */
  return stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
}

gboolean
tg__device_check_stream (cudaStream_t stream, int device, TgCaptureState state,
                         GError **error)
{
  int stream_device = device;
  cudaError_t status;

  /* With one device every stream is of it (tg__stream_check() skips this
   * call once the count is known). */
  if (stream_is_special (stream) || tg__device_count () == 1
      || state == TG_CAPTURE_INVALIDATED)
    return TRUE;
  status = TG_CUDA_CALL (tg__stream_get_device (stream, device, &stream_device));
  /* Without the driver's answer, the runtime's, which only an idle stream
   * survives. */
  if (status == cudaErrorNotSupported && state == TG_CAPTURE_NONE)
    status = TG_CUDA_CALL (cudaStreamGetDevice (stream, &stream_device));
  else if (status == cudaErrorNotSupported)
    return TRUE;
  if (!tg__cuda_ok (status, "the stream's device", G_STRLOC, error))
    return FALSE;
  if (stream_device != device)
    {
      tg__set_error (error, TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_DEVICE_MISMATCH,
                     "stream %p belongs to device %d, but the work is for device %d; "
                     "pass a stream created on device %d",
                     (void *)stream, stream_device, device, device);
      return FALSE;
    }
  return TRUE;
}
