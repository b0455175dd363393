/* resource-private.h: every CUDA object TrackGen creates goes through these
 * wrappers, which count live objects (tg_get_live_objects) and allocate in
 * relaxed capture mode so that lazy creation never breaks a capture that is
 * in progress on this thread.  Private to libtrackgen. */
#ifndef TG_RESOURCE_PRIVATE_H
#define TG_RESOURCE_PRIVATE_H

#include "error-private.h"

G_BEGIN_DECLS

typedef enum
{
  TG_LIVE_PRODUCERS,
  TG_LIVE_GRAPHS,
  TG_LIVE_GRAPH_EXECS,
  TG_LIVE_STREAMS,
  TG_LIVE_CAPTURES,
  TG_LIVE_N
} TgLiveKind;

void tg__live_add (TgLiveKind kind, gint delta);

/* Device switching: enter makes @device current, leave restores the caller's. */
typedef struct
{
  int saved;
  gboolean switched;
} TgDeviceGuard;

gboolean tg__device_enter (TgDeviceGuard *guard, int device, GError **error);
void tg__device_leave (TgDeviceGuard *guard);
/* Checks @stream belongs to @device.  Only for a stream that is not
 * capturing: CUDA refuses cudaStreamGetDevice on a capturing stream, and that
 * refusal invalidates the capture. */
gboolean tg__stream_check_device (cudaStream_t stream, int device, GError **error);

/* A relaxed section lets this thread make calls that a global or
 * thread-local capture forbids (allocations, stream creation). */
enum cudaStreamCaptureMode tg__relaxed_begin (void);
void tg__relaxed_end (enum cudaStreamCaptureMode saved);

/* Non-blocking stream on the current device. */
cudaStream_t tg__stream_new (GError **error);
void tg__stream_free (cudaStream_t stream);

/* Graph instantiation and destruction (counted). */
gboolean tg__graph_instantiate (cudaGraph_t graph, cudaGraphExec_t *exec,
                                GError **error);
void tg__graph_exec_free (cudaGraphExec_t exec);
void tg__graph_free (cudaGraph_t graph);

/* Pinned host memory. */
gpointer tg__host_alloc (gsize size, GError **error);
void tg__host_free (gpointer ptr);

/* Launcher of the device check kernel (device-kernels.cu). */
cudaError_t tg__launch_check_pattern (cudaStream_t stream, guint32 *out, guint32 n,
                                      guint32 salt);

/* The pattern it writes, computed identically on the host. */
static inline TG_HOST_DEVICE guint32
tg__check_pattern (guint32 i, guint32 salt)
{
  guint32 x = i * 0x9E3779B1u ^ salt;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  return x;
}

G_END_DECLS

#endif
