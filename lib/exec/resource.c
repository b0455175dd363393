/* SPDX-License-Identifier: Apache-2.0 */
/* resource.c: the calls that are not stream-ordered, each in a relaxed
 * section, and the live-object counters.  See resource-private.h. */
#include "config.h"
#include "driver-private.h"
#include "resource-private.h"
#include "tsan-private.h"

static gint live[TG_LIVE_N];

void
tg__live_add (TgLiveKind kind, gint delta)
{
  g_atomic_int_add (&live[kind], delta);
}

void
tg_get_live_objects (TgLiveObjects *out)
{
  g_return_if_fail (out != NULL);
  out->producers = g_atomic_int_get (&live[TG_LIVE_PRODUCERS]);
  out->graphs = g_atomic_int_get (&live[TG_LIVE_GRAPHS]);
  out->graph_execs = g_atomic_int_get (&live[TG_LIVE_GRAPH_EXECS]);
  out->streams = g_atomic_int_get (&live[TG_LIVE_STREAMS]);
  out->captures = g_atomic_int_get (&live[TG_LIVE_CAPTURES]);
  out->failed_releases = g_atomic_int_get (&live[TG_LIVE_FAILED_RELEASES]);
  out->idle_streams = g_atomic_int_get (&live[TG_LIVE_IDLE_STREAMS]);
  out->user_objects = g_atomic_int_get (&live[TG_LIVE_USER_OBJECTS]);
}

enum cudaStreamCaptureMode
tg__relaxed_begin (void)
{
  enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  (void)cudaThreadExchangeStreamCaptureMode (&mode);
  return mode;
}

void
tg__relaxed_end (enum cudaStreamCaptureMode saved)
{
  (void)cudaThreadExchangeStreamCaptureMode (&saved);
}

void
tg__relaxed_thread (void)
{
  (void)tg__relaxed_begin ();
}

/* Runs @stmt, a statement holding one CUDA call, in a relaxed section. */
#define RELAXED(stmt)                                                                  \
  G_STMT_START                                                                         \
  {                                                                                    \
    enum cudaStreamCaptureMode saved_ = tg__relaxed_begin ();                          \
    stmt;                                                                              \
    tg__relaxed_end (saved_);                                                          \
  }                                                                                    \
  G_STMT_END

/* A release that failed is logged and counted, never hidden.  The object
 * stays counted live: it may still exist. */
static void
released (cudaError_t status, const char *call, TgLiveKind kind)
{
  if (G_LIKELY (status == cudaSuccess))
    {
      if (kind != TG_LIVE_N)
        tg__live_add (kind, -1);
      return;
    }
  tg__cuda_clear (status);
  tg__live_add (TG_LIVE_FAILED_RELEASES, 1);
  g_warning ("%s failed: %s (%s); the object is leaked", call,
             cudaGetErrorName (status), cudaGetErrorString (status));
}

void
tg__release_failed (GError *error)
{
  tg__live_add (TG_LIVE_FAILED_RELEASES, 1);
  g_warning ("releasing: %s; what it held may be leaked", error->message);
  g_error_free (error);
}

/* Runs one release in a relaxed section. */
#define RELEASE(call, kind)                                                            \
  G_STMT_START                                                                         \
  {                                                                                    \
    cudaError_t status_;                                                               \
    RELAXED (status_ = TG_CUDA_OVERRIDE (call));                                       \
    released (status_, #call, kind);                                                   \
  }                                                                                    \
  G_STMT_END

cudaStream_t
tg__stream_new (GError **error)
{
  cudaStream_t stream = NULL;
  gboolean ok;

  RELAXED (ok = TG_CUDA_OK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking),
                            error));
  if (!ok)
    return NULL;
  tg__live_add (TG_LIVE_STREAMS, 1);
  return stream;
}

void
tg__stream_free (cudaStream_t stream)
{
  if (stream != NULL)
    RELEASE (cudaStreamDestroy (stream), TG_LIVE_STREAMS);
}

/* A new producer's first capture would otherwise create its stream, a cost
 * that the same work captured by hand on the caller's stream has not.  Own
 * captures end before their call returns, so a stream given back holds no
 * work; one left capturing (a thread that exited inside a call) is freed. */
#define POOL_DEVICES 64
#define POOL_STREAMS 8

static struct
{
  GMutex lock;
  guint n[POOL_DEVICES];
  cudaStream_t idle[POOL_DEVICES][POOL_STREAMS];
} pool;

cudaStream_t
tg__stream_lend (int device, GError **error)
{
  cudaStream_t stream = NULL;

  if (device >= 0 && device < POOL_DEVICES)
    {
      tg__mutex_lock (&pool.lock);
      if (pool.n[device] > 0)
        stream = pool.idle[device][--pool.n[device]];
      tg__mutex_unlock (&pool.lock);
    }
  if (stream == NULL)
    return tg__stream_new (error);
  tg__live_add (TG_LIVE_IDLE_STREAMS, -1);
  tg__live_add (TG_LIVE_STREAMS, 1);
  return stream;
}

void
tg__stream_give_back (int device, cudaStream_t stream)
{
  enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
  gboolean kept = FALSE;
  cudaError_t err;

  if (stream == NULL)
    return;
  err = TG_CUDA_CALL (tg__stream_is_capturing (stream, &status));
  tg__cuda_clear (err);
  if (err == cudaSuccess && status == cudaStreamCaptureStatusNone && device >= 0
      && device < POOL_DEVICES)
    {
      tg__mutex_lock (&pool.lock);
      if ((kept = pool.n[device] < POOL_STREAMS))
        pool.idle[device][pool.n[device]++] = stream;
      tg__mutex_unlock (&pool.lock);
    }
  if (!kept)
    {
      tg__stream_free (stream);
      return;
    }
  tg__live_add (TG_LIVE_STREAMS, -1);
  tg__live_add (TG_LIVE_IDLE_STREAMS, 1);
}

gboolean
tg__stream_synchronize (cudaStream_t stream, GError **error)
{
  gboolean ok;

  RELAXED (ok = TG_CUDA_OK (cudaStreamSynchronize (stream), error));
  return ok;
}

gboolean
tg__graph_instantiate (cudaGraph_t graph, cudaGraphExec_t *exec, GError **error)
{
  cudaError_t status;

  RELAXED (status = TG_CUDA_CALL (cudaGraphInstantiate (
               exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch)));
  if (status != cudaSuccess)
    {
      tg__cuda_clear (status);
      tg__set_error (error, TG_CAPTURE_ERROR, TG_CAPTURE_ERROR_FAILED,
                     "cudaGraphInstantiate failed: %s (%s)", cudaGetErrorName (status),
                     cudaGetErrorString (status));
      *exec = NULL;
      return FALSE;
    }
  tg__live_add (TG_LIVE_GRAPH_EXECS, 1);
  return TRUE;
}

gboolean
tg__graph_exec_update (cudaGraphExec_t exec, cudaGraph_t graph)
{
  cudaGraphExecUpdateResultInfo info;
  cudaError_t status;

  RELAXED (status = TG_CUDA_CALL (cudaGraphExecUpdate (exec, graph, &info)));
  tg__cuda_clear (status);
  return status == cudaSuccess;
}

void
tg__graph_exec_free (cudaGraphExec_t exec)
{
  if (exec != NULL)
    RELEASE (cudaGraphExecDestroy (exec), TG_LIVE_GRAPH_EXECS);
}

void
tg__graph_free (cudaGraph_t graph)
{
  if (graph != NULL)
    RELEASE (cudaGraphDestroy (graph), TG_LIVE_GRAPHS);
}

gpointer
tg__host_alloc (gsize size, GError **error)
{
  gpointer ptr = NULL;
  gboolean ok;

  RELAXED (ok = TG_CUDA_OK (cudaMallocHost (&ptr, size), error));
  return ok ? ptr : NULL;
}

void
tg__host_free (gpointer ptr)
{
  if (ptr != NULL)
    RELEASE (cudaFreeHost (ptr), TG_LIVE_N);
}

gpointer
tg__device_alloc (gsize size, GError **error)
{
  gpointer ptr = NULL;
  gboolean ok;

  RELAXED (ok = TG_CUDA_OK (cudaMalloc (&ptr, size), error));
  return ok ? ptr : NULL;
}

void
tg__device_free (gpointer ptr)
{
  if (ptr != NULL)
    RELEASE (cudaFree (ptr), TG_LIVE_N);
}

gpointer
tg__host_alloc_mapped (gsize size, gpointer *device, GError **error)
{
  gpointer ptr = NULL;
  gboolean ok;

  *device = NULL;
  RELAXED (ok = TG_CUDA_OK (cudaHostAlloc (&ptr, size, cudaHostAllocMapped), error)
                && TG_CUDA_OK (cudaHostGetDevicePointer (device, ptr, 0), error));
  if (!ok)
    {
      tg__host_free (ptr);
      *device = NULL;
      return NULL;
    }
  return ptr;
}

gboolean
tg__device_blocks_on_sync (gboolean *blocks, GError **error)
{
  unsigned int flags = 0;
  gboolean ok;

  RELAXED (ok = TG_CUDA_OK (cudaGetDeviceFlags (&flags), error));
  *blocks = ok && (flags & cudaDeviceScheduleMask) == cudaDeviceScheduleBlockingSync;
  return ok;
}

gboolean
tg__pointer_attributes (gconstpointer ptr, struct cudaPointerAttributes *attr,
                        GError **error)
{
  gboolean ok;

  RELAXED (ok = TG_CUDA_OK (cudaPointerGetAttributes (attr, ptr), error));
  return ok;
}
