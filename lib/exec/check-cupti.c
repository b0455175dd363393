/* SPDX-License-Identifier: Apache-2.0 */
/* check-cupti.c: checked mode's side in CUPTI: loading it with dlopen,
 * subscribing to the runtime's and the driver's calls that enqueue device
 * work or order streams (those alone), and noting, in
 * the callback, every call of a stage's thread that enqueues device work or
 * orders streams (check.c checks the notes).
 *
 * The callback makes no CUDA call: CUPTI runs it inside the driver's call,
 * where a query of a stream's capture could disturb that capture or
 * re-enter the callback.  It only copies what the check needs: the call's
 * name, the stream, the event, the kernel's name. */
#include "config.h"
#include "check-private.h"

_Thread_local TgCheckFrame tg__check_frame;

#if !HAVE_CUPTI_H
/* A toolkit without CUPTI's headers: the mode cannot be turned on. */
gboolean
tg__check_cupti_on (GError **error)
{
  tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                 "checked mode needs NVIDIA's CUPTI, and this libtrackgen was built "
                 "without its headers (cupti.h): build it with a CUDA toolkit that "
                 "has them (TG_CUPTI_PATH cannot help)");
  return FALSE;
}

void
tg__check_cupti_off (void)
{
}
#else
/* With the parameter structs of every call (generated_cuda_meta.h). */
#include <cupti.h>
#include <dlfcn.h>

/* cuda.h maps these names onto their current forms; CUPTI reports the
 * older forms under these names (a library may still reach them through
 * cuGetProcAddress with an older version).  This file calls none of them. */
#undef cuStreamWaitValue32
#undef cuStreamWaitValue64
#undef cuStreamWriteValue32
#undef cuStreamWriteValue64
#undef cuStreamBatchMemOp
#undef cuStreamBeginCapture
#undef cuMemPrefetchAsync
#undef cuMemcpyHtoDAsync
#undef cuMemcpyDtoHAsync
#undef cuMemcpyDtoDAsync
#undef cuMemcpyHtoAAsync
#undef cuMemcpyAtoHAsync
#undef cuMemcpy2DAsync
#undef cuMemcpy3DAsync
#undef cuMemcpyBatchAsync
#undef cuMemcpy3DBatchAsync

/* CUPTI, once loaded; check.c serializes every use. */
typedef CUptiResult (*SubscribeFunc) (CUpti_SubscriberHandle *, CUpti_CallbackFunc,
                                      void *);
typedef CUptiResult (*UnsubscribeFunc) (CUpti_SubscriberHandle);
typedef CUptiResult (*EnableCallbackFunc) (uint32_t, CUpti_SubscriberHandle,
                                           CUpti_CallbackDomain, CUpti_CallbackId);
typedef CUptiResult (*ResultStringFunc) (CUptiResult, const char **);

static struct
{
  void *library;
  SubscribeFunc subscribe;
  UnsubscribeFunc unsubscribe;
  EnableCallbackFunc enable_callback;
  ResultStringFunc result_string;
  CUpti_SubscriberHandle subscriber;
} cupti;

/* Noting, in the callback. */

static void
note (TgCheckFrame *f, TgNoteKind kind, const CUpti_CallbackData *cb, void *stream,
      gboolean per_thread, void *event)
{
  TgNote n = { kind, cb->functionName, (cudaStream_t)stream, (cudaEvent_t)event, NULL };

  /* CUDA reads a null stream as the legacy one, or for the _ptsz/_ptds
   * forms as the thread's own. */
  if (n.stream == NULL && kind != TG_NOTE_SYNC_EVENT && kind != TG_NOTE_SYNC_ALL)
    n.stream = per_thread ? cudaStreamPerThread : cudaStreamLegacy;
  if (kind == TG_NOTE_WORK && cb->symbolName != NULL)
    n.kernel = g_strdup (cb->symbolName);
  g_array_append_val (f->notes, n);
}

/* The calls that enqueue work: X (name, the field of its parameters that
 * names the stream) for a driver call and its per-thread form name_ptsz;
 * X (name, per-thread name, field) for a runtime call, X1 (name, field)
 * for one without a per-thread form. */
/* clang-format off */
#define DRIVER_WORK(X)                   \
  X (cuLaunchKernel, hStream)            \
  X (cuLaunchCooperativeKernel, hStream) \
  X (cuLaunchHostFunc, hStream)          \
  X (cuGraphLaunch, hStream)             \
  X (cuStreamAddCallback, hStream)       \
  X (cuMemcpyAsync, hStream)             \
  X (cuMemcpyHtoDAsync_v2, hStream)      \
  X (cuMemcpyDtoHAsync_v2, hStream)      \
  X (cuMemcpyDtoDAsync_v2, hStream)      \
  X (cuMemcpyHtoAAsync_v2, hStream)      \
  X (cuMemcpyAtoHAsync_v2, hStream)      \
  X (cuMemcpy2DAsync_v2, hStream)        \
  X (cuMemcpy3DAsync_v2, hStream)        \
  X (cuMemcpyPeerAsync, hStream)         \
  X (cuMemcpy3DPeerAsync, hStream)       \
  X (cuMemsetD8Async, hStream)           \
  X (cuMemsetD16Async, hStream)          \
  X (cuMemsetD32Async, hStream)          \
  X (cuMemsetD2D8Async, hStream)         \
  X (cuMemsetD2D16Async, hStream)        \
  X (cuMemsetD2D32Async, hStream)        \
  X (cuMemAllocAsync, hStream)           \
  X (cuMemFreeAsync, hStream)            \
  X (cuMemAllocFromPoolAsync, hStream)   \
  X (cuMemPrefetchAsync_v2, hStream)     \
  X (cuStreamWaitValue32_v2, stream)     \
  X (cuStreamWaitValue64_v2, stream)     \
  X (cuStreamWriteValue32_v2, stream)    \
  X (cuStreamWriteValue64_v2, stream)    \
  X (cuStreamBatchMemOp_v2, stream)       \
  X (cuStreamWaitValue32, stream)        \
  X (cuStreamWaitValue64, stream)        \
  X (cuStreamWriteValue32, stream)       \
  X (cuStreamWriteValue64, stream)       \
  X (cuStreamBatchMemOp, stream)         \
  X (cuMemPrefetchAsync, hStream)        \
  X (cuStreamAttachMemAsync, hStream)    \
  X (cuSignalExternalSemaphoresAsync, stream) \
  X (cuWaitExternalSemaphoresAsync, stream)   \
  X (cuMemMapArrayAsync, hStream)        \
  X (cuGraphicsMapResources, hStream)    \
  X (cuGraphicsUnmapResources, hStream)

/* The older ABI's forms of the asynchronous copies, which have no per-thread
 * form: X1 (name, field). */
#define DRIVER_WORK_OLD(X1)          \
  X1 (cuMemcpyHtoDAsync, hStream)    \
  X1 (cuMemcpyDtoHAsync, hStream)    \
  X1 (cuMemcpyDtoDAsync, hStream)    \
  X1 (cuMemcpyHtoAAsync, hStream)    \
  X1 (cuMemcpyAtoHAsync, hStream)    \
  X1 (cuMemcpy2DAsync, hStream)      \
  X1 (cuMemcpy3DAsync, hStream)      \
  X1 (cuLaunchGridAsync, hStream)

/* Synchronous copies and sets, on the null stream: X (name) for a driver
 * call and its name_ptds; X (name, per-thread name) and X1 (name) for the
 * runtime's. */
#define DRIVER_DONE(X)       \
  X (cuMemcpy)               \
  X (cuMemcpyHtoD_v2)        \
  X (cuMemcpyDtoH_v2)        \
  X (cuMemcpyDtoD_v2)        \
  X (cuMemcpyDtoA_v2)        \
  X (cuMemcpyAtoD_v2)        \
  X (cuMemcpyHtoA_v2)        \
  X (cuMemcpyAtoH_v2)        \
  X (cuMemcpyAtoA_v2)        \
  X (cuMemcpy2D_v2)          \
  X (cuMemcpy2DUnaligned_v2) \
  X (cuMemcpy3D_v2)          \
  X (cuMemcpyPeer)           \
  X (cuMemcpy3DPeer)         \
  X (cuMemsetD8_v2)          \
  X (cuMemsetD16_v2)         \
  X (cuMemsetD32_v2)         \
  X (cuMemsetD2D8_v2)        \
  X (cuMemsetD2D16_v2)       \
  X (cuMemsetD2D32_v2)

#define RUNTIME_WORK(X, X1)                                                             \
  X (cudaLaunchKernel_v7000, cudaLaunchKernel_ptsz_v7000, stream)                       \
  X (cudaLaunchCooperativeKernel_v9000, cudaLaunchCooperativeKernel_ptsz_v9000, stream) \
  X (cudaLaunchHostFunc_v10000, cudaLaunchHostFunc_ptsz_v10000, stream)                 \
  X (cudaGraphLaunch_v10000, cudaGraphLaunch_ptsz_v10000, stream)                       \
  X (cudaStreamAddCallback_v5000, cudaStreamAddCallback_ptsz_v7000, stream)             \
  X (cudaMemcpyAsync_v3020, cudaMemcpyAsync_ptsz_v7000, stream)                         \
  X (cudaMemcpy2DAsync_v3020, cudaMemcpy2DAsync_ptsz_v7000, stream)                     \
  X (cudaMemcpy3DAsync_v3020, cudaMemcpy3DAsync_ptsz_v7000, stream)                     \
  X (cudaMemcpyToArrayAsync_v3020, cudaMemcpyToArrayAsync_ptsz_v7000, stream)           \
  X (cudaMemcpyFromArrayAsync_v3020, cudaMemcpyFromArrayAsync_ptsz_v7000, stream)       \
  X (cudaMemcpy2DToArrayAsync_v3020, cudaMemcpy2DToArrayAsync_ptsz_v7000, stream)       \
  X (cudaMemcpy2DFromArrayAsync_v3020, cudaMemcpy2DFromArrayAsync_ptsz_v7000, stream)   \
  X (cudaMemcpyToSymbolAsync_v3020, cudaMemcpyToSymbolAsync_ptsz_v7000, stream)         \
  X (cudaMemcpyFromSymbolAsync_v3020, cudaMemcpyFromSymbolAsync_ptsz_v7000, stream)     \
  X1 (cudaMemcpyPeerAsync_v4000, stream)                                                \
  X (cudaMemcpy3DPeerAsync_v4000, cudaMemcpy3DPeerAsync_ptsz_v7000, stream)             \
  X (cudaMemsetAsync_v3020, cudaMemsetAsync_ptsz_v7000, stream)                         \
  X (cudaMemset2DAsync_v3020, cudaMemset2DAsync_ptsz_v7000, stream)                     \
  X (cudaMemset3DAsync_v3020, cudaMemset3DAsync_ptsz_v7000, stream)                     \
  X (cudaMallocAsync_v11020, cudaMallocAsync_ptsz_v11020, hStream)                      \
  X (cudaFreeAsync_v11020, cudaFreeAsync_ptsz_v11020, hStream)                          \
  X (cudaMallocFromPoolAsync_v11020, cudaMallocFromPoolAsync_ptsz_v11020, stream)       \
  X (cudaMemPrefetchAsync_v12020, cudaMemPrefetchAsync_ptsz_v12020, stream)             \
  X (cudaStreamAttachMemAsync_v6000, cudaStreamAttachMemAsync_ptsz_v7000, stream)       \
  X (cudaSignalExternalSemaphoresAsync_v11020,                                          \
     cudaSignalExternalSemaphoresAsync_ptsz_v11020, stream)                             \
  X (cudaWaitExternalSemaphoresAsync_v11020,                                            \
     cudaWaitExternalSemaphoresAsync_ptsz_v11020, stream)                               \
  X1 (cudaGraphicsMapResources_v3020, stream)                                           \
  X1 (cudaGraphicsUnmapResources_v3020, stream)

#define RUNTIME_DONE(X, X1)                                               \
  X (cudaMemcpy_v3020, cudaMemcpy_ptds_v7000)                             \
  X (cudaMemcpy2D_v3020, cudaMemcpy2D_ptds_v7000)                         \
  X (cudaMemcpy3D_v3020, cudaMemcpy3D_ptds_v7000)                         \
  X (cudaMemcpyToArray_v3020, cudaMemcpyToArray_ptds_v7000)               \
  X (cudaMemcpyFromArray_v3020, cudaMemcpyFromArray_ptds_v7000)           \
  X (cudaMemcpy2DToArray_v3020, cudaMemcpy2DToArray_ptds_v7000)           \
  X (cudaMemcpy2DFromArray_v3020, cudaMemcpy2DFromArray_ptds_v7000)       \
  X (cudaMemcpyArrayToArray_v3020, cudaMemcpyArrayToArray_ptds_v7000)     \
  X (cudaMemcpy2DArrayToArray_v3020, cudaMemcpy2DArrayToArray_ptds_v7000) \
  X (cudaMemcpyToSymbol_v3020, cudaMemcpyToSymbol_ptds_v7000)             \
  X (cudaMemcpyFromSymbol_v3020, cudaMemcpyFromSymbol_ptds_v7000)         \
  X1 (cudaMemcpyPeer_v4000)                                               \
  X (cudaMemcpy3DPeer_v4000, cudaMemcpy3DPeer_ptds_v7000)                 \
  X (cudaMemset_v3020, cudaMemset_ptds_v7000)                             \
  X (cudaMemset2D_v3020, cudaMemset2D_ptds_v7000)                         \
  X (cudaMemset3D_v3020, cudaMemset3D_ptds_v7000)
/* clang-format on */

/* The calls CUDA 12.8 added (Warp 1.19 copies with cuMemcpyBatchAsync's
 * form of then); an older toolkit misses these. */
#if CUDA_VERSION >= 12080
#define DRIVER_WORK_12080(X)                                                           \
  X (cuMemcpyBatchAsync, hStream) X (cuMemcpy3DBatchAsync, hStream)                     \
  X (cuMemBatchDecompressAsync, stream)
#else
#define DRIVER_WORK_12080(X)
#endif

/* The calls CUDA 13 added: CUDA 13's <<<>>> calls __cudaLaunchKernel, whose
 * parameters are cudaLaunchKernel's (crt/device_functions.h; CUPTI's headers
 * give them no struct of their own).  An older toolkit misses these. */
#if CUDA_VERSION >= 13000
typedef cudaLaunchKernel_v7000_params __cudaLaunchKernel_v13000_params;
#define DRIVER_WORK_13(X)                                                              \
  X (cuMemcpyBatchAsync_v2, hStream) X (cuMemcpy3DBatchAsync_v2, hStream)               \
  X (cuMemPrefetchBatchAsync, hStream) X (cuMemDiscardBatchAsync, hStream)              \
  X (cuMemDiscardAndPrefetchBatchAsync, hStream)
#define DRIVER_SYNC_13 case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2:
#define RUNTIME_WORK_13(X)                                                             \
  X (cudaMemcpyBatchAsync_v13000, cudaMemcpyBatchAsync_ptsz_v13000, stream)            \
  X (cudaMemcpy3DBatchAsync_v13000, cudaMemcpy3DBatchAsync_ptsz_v13000, stream)        \
  X (__cudaLaunchKernel_v13000, __cudaLaunchKernel_ptsz_v13000, stream)                 \
  X (cudaMemPrefetchBatchAsync_v13000, cudaMemPrefetchBatchAsync_ptsz_v13000, stream)  \
  X (cudaMemDiscardBatchAsync_v13000, cudaMemDiscardBatchAsync_ptsz_v13000, stream)    \
  X (cudaMemDiscardAndPrefetchBatchAsync_v13000,                                       \
     cudaMemDiscardAndPrefetchBatchAsync_ptsz_v13000, stream)
#else
#define DRIVER_WORK_13(X)
#define DRIVER_SYNC_13
#define RUNTIME_WORK_13(X)
#endif

#define P(name) ((const name##_params *)cb->functionParams)

/* A call and its per-thread form, noted as @kind with the stream and the
 * event (or NULL) its parameters name; a call with no per-thread form.
 * With no @cb, nothing is noted: the switch only says which calls it notes
 * (those whose callbacks are enabled). */
#define CASE_PAIR(kind, prefix, name, pt_name, stream, event)                          \
  case prefix##name:                                                                   \
  case prefix##pt_name:                                                                \
    if (cb != NULL)                                                                    \
      note (f, kind, cb, stream, cbid == prefix##pt_name, event);                      \
    return TRUE;
#define CASE_ONE(kind, prefix, name, stream)                                           \
  case prefix##name:                                                                   \
    if (cb != NULL)                                                                    \
      note (f, kind, cb, stream, FALSE, NULL);                                         \
    return TRUE;

#define DRIVER_PAIR(kind, name, stream, event)                                         \
  CASE_PAIR (kind, CUPTI_DRIVER_TRACE_CBID_, name, name##_ptsz, P (name)->stream, event)
#define DRIVER_CASE_WORK(name, field) DRIVER_PAIR (TG_NOTE_WORK, name, field, NULL)
#define DRIVER_CASE_WORK1(name, field)                                                 \
  CASE_ONE (TG_NOTE_WORK, CUPTI_DRIVER_TRACE_CBID_, name, P (name)->field)
#define DRIVER_CASE_DONE(name)                                                         \
  CASE_PAIR (TG_NOTE_DONE, CUPTI_DRIVER_TRACE_CBID_, name, name##_ptds, NULL, NULL)

/* Notes driver call @cbid in @f, from @cb; whether it is one checked mode
 * notes (with no @cb, only that). */
static gboolean
note_driver (TgCheckFrame *f, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
  switch (cbid)
    {
      DRIVER_WORK (DRIVER_CASE_WORK)
      DRIVER_WORK_OLD (DRIVER_CASE_WORK1)
      DRIVER_WORK_12080 (DRIVER_CASE_WORK)
      DRIVER_WORK_13 (DRIVER_CASE_WORK)
      DRIVER_DONE (DRIVER_CASE_DONE)
      DRIVER_PAIR (TG_NOTE_WORK, cuLaunchKernelEx, config->hStream, NULL)
      DRIVER_PAIR (TG_NOTE_RECORD, cuEventRecord, hStream, P (cuEventRecord)->hEvent)
      DRIVER_PAIR (TG_NOTE_RECORD, cuEventRecordWithFlags, hStream,
                   P (cuEventRecordWithFlags)->hEvent)
      DRIVER_PAIR (TG_NOTE_WAIT, cuStreamWaitEvent, hStream,
                   P (cuStreamWaitEvent)->hEvent)
      DRIVER_PAIR (TG_NOTE_BEGIN, cuStreamBeginCapture_v2, hStream, NULL)
      DRIVER_PAIR (TG_NOTE_BEGIN, cuStreamBeginCapture, hStream, NULL)
      DRIVER_PAIR (TG_NOTE_BEGIN, cuStreamBeginCaptureToGraph, hStream, NULL)
      DRIVER_PAIR (TG_NOTE_END, cuStreamEndCapture, hStream, NULL)
      DRIVER_PAIR (TG_NOTE_SYNC, cuStreamSynchronize, hStream, NULL)
    case CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize:
      if (cb != NULL)
        note (f, TG_NOTE_SYNC_EVENT, cb, NULL, FALSE, P (cuEventSynchronize)->hEvent);
      return TRUE;
    case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize:
      DRIVER_SYNC_13
      if (cb != NULL)
        note (f, TG_NOTE_SYNC_ALL, cb, NULL, FALSE, NULL);
      return TRUE;
    default:
      return FALSE;
    }
}

#define RUNTIME_PAIR(kind, name, pt_name, stream, event)                               \
  CASE_PAIR (kind, CUPTI_RUNTIME_TRACE_CBID_, name, pt_name, P (name)->stream, event)
#define RUNTIME_CASE_WORK(name, pt_name, field)                                        \
  RUNTIME_PAIR (TG_NOTE_WORK, name, pt_name, field, NULL)
#define RUNTIME_CASE_WORK1(name, field)                                                \
  CASE_ONE (TG_NOTE_WORK, CUPTI_RUNTIME_TRACE_CBID_, name, P (name)->field)
#define RUNTIME_CASE_DONE(name, pt_name)                                               \
  CASE_PAIR (TG_NOTE_DONE, CUPTI_RUNTIME_TRACE_CBID_, name, pt_name, NULL, NULL)
#define RUNTIME_CASE_DONE1(name)                                                       \
  CASE_ONE (TG_NOTE_DONE, CUPTI_RUNTIME_TRACE_CBID_, name, NULL)

/* Notes runtime call @cbid as note_driver() does a driver call. */
static gboolean
note_runtime (TgCheckFrame *f, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
  switch (cbid)
    {
      RUNTIME_WORK (RUNTIME_CASE_WORK, RUNTIME_CASE_WORK1)
      RUNTIME_DONE (RUNTIME_CASE_DONE, RUNTIME_CASE_DONE1)
      RUNTIME_WORK_13 (RUNTIME_CASE_WORK)
      RUNTIME_PAIR (TG_NOTE_WORK, cudaLaunchKernelExC_v11060,
                    cudaLaunchKernelExC_ptsz_v11060, config->stream, NULL)
      RUNTIME_PAIR (TG_NOTE_RECORD, cudaEventRecord_v3020, cudaEventRecord_ptsz_v7000,
                    stream, P (cudaEventRecord_v3020)->event)
      RUNTIME_PAIR (TG_NOTE_RECORD, cudaEventRecordWithFlags_v11010,
                    cudaEventRecordWithFlags_ptsz_v11010, stream,
                    P (cudaEventRecordWithFlags_v11010)->event)
      RUNTIME_PAIR (TG_NOTE_WAIT, cudaStreamWaitEvent_v3020,
                    cudaStreamWaitEvent_ptsz_v7000, stream,
                    P (cudaStreamWaitEvent_v3020)->event)
      RUNTIME_PAIR (TG_NOTE_BEGIN, cudaStreamBeginCapture_v10000,
                    cudaStreamBeginCapture_ptsz_v10000, stream, NULL)
      RUNTIME_PAIR (TG_NOTE_BEGIN, cudaStreamBeginCaptureToGraph_v12030,
                    cudaStreamBeginCaptureToGraph_ptsz_v12030, stream, NULL)
      RUNTIME_PAIR (TG_NOTE_END, cudaStreamEndCapture_v10000,
                    cudaStreamEndCapture_ptsz_v10000, stream, NULL)
      RUNTIME_PAIR (TG_NOTE_SYNC, cudaStreamSynchronize_v3020,
                    cudaStreamSynchronize_ptsz_v7000, stream, NULL)
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020:
      if (cb != NULL)
        note (f, TG_NOTE_SYNC_EVENT, cb, NULL, FALSE,
              P (cudaEventSynchronize_v3020)->event);
      return TRUE;
    case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020:
      if (cb != NULL)
        note (f, TG_NOTE_SYNC_ALL, cb, NULL, FALSE, NULL);
      return TRUE;
    default:
      return FALSE;
    }
}

/* Every call of every thread that checked mode notes comes here while the
 * mode is on (only their callbacks are enabled: every call of a process
 * passing CUPTI made a checked REPLAY 7x slower); only the thread of a
 * running stage notes anything.  A runtime call's own driver calls are
 * noted as the runtime call (whether CUPTI reports them or not); those of
 * a runtime call it does not note (one whose parameters CUPTI does not
 * give, as cudaMemPrefetchAsync's CUDA 8 form) are noted themselves. */
static void CUPTIAPI
on_call (void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
         const void *data)
{
  const CUpti_CallbackData *cb = data;
  TgCheckFrame *f = &tg__check_frame;

  if (f->depth == 0)
    return;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
    {
      if (cb->callbackSite == CUPTI_API_EXIT)
        {
          if (f->in_runtime > 0)
            f->in_runtime--;
          return;
        }
      if (f->in_runtime++ == 0 && cb->functionParams != NULL)
        note_runtime (f, cbid, cb);
    }
  else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && f->in_runtime == 0
           && cb->callbackSite == CUPTI_API_ENTER && cb->functionParams != NULL)
    note_driver (f, cbid, cb);
}

/* Loading CUPTI, on demand. */

#define CUPTI_SONAME "libcupti.so.13"

#ifndef TG_CUPTI_DIRS
#define TG_CUPTI_DIRS ""
#endif

static const char fix[]
    = "install the CUDA toolkit's CUPTI or the nvidia-cuda-cupti wheel, or point "
      "TG_CUPTI_PATH at " CUPTI_SONAME " (or its folder)";

/* TG_CUPTI_PATH alone when set; else the library by name (already loaded,
 * LD_LIBRARY_PATH, ldconfig), then in the toolkit TrackGen was built with. */
static void *
open_library (GError **error)
{
  const char *path = g_getenv ("TG_CUPTI_PATH");
  g_auto (GStrv) dirs = NULL;
  g_autoptr (GString) tried = NULL;
  void *library;

  if (path != NULL && *path != '\0')
    {
      g_autofree char *file = g_file_test (path, G_FILE_TEST_IS_DIR)
                                  ? g_build_filename (path, CUPTI_SONAME, NULL)
                                  : g_strdup (path);

      library = dlopen (file, RTLD_NOW | RTLD_LOCAL);
      if (library == NULL)
        tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                       "checked mode needs NVIDIA's CUPTI, and TG_CUPTI_PATH=%s cannot "
                       "be loaded (%s): %s",
                       path, dlerror (), fix);
      return library;
    }
  library = dlopen (CUPTI_SONAME, RTLD_NOW | RTLD_LOCAL);
  tried = g_string_new (library == NULL ? dlerror () : "");
  dirs = g_strsplit (TG_CUPTI_DIRS, ":", -1);
  for (guint i = 0; library == NULL && dirs[i] != NULL; i++)
    {
      g_autofree char *file = g_build_filename (dirs[i], CUPTI_SONAME, NULL);

      if (*dirs[i] != '\0' && (library = dlopen (file, RTLD_NOW | RTLD_LOCAL)) == NULL)
        g_string_append_printf (tried, "; %s", dlerror ());
    }
  if (library == NULL)
    tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                   "checked mode needs NVIDIA's CUPTI, and " CUPTI_SONAME
                   " was not found (%s): %s",
                   tried->str, fix);
  return library;
}

static const char *
result_name (CUptiResult result)
{
  const char *name = NULL;

  if (cupti.result_string == NULL
      || cupti.result_string (result, &name) != CUPTI_SUCCESS)
    return "unknown CUPTI result";
  return name;
}

static gboolean
cupti_load (GError **error)
{
  void *library;

  if (cupti.library != NULL)
    return TRUE;
  if ((library = open_library (error)) == NULL)
    return FALSE;
  cupti.subscribe = (SubscribeFunc)dlsym (library, "cuptiSubscribe");
  cupti.unsubscribe = (UnsubscribeFunc)dlsym (library, "cuptiUnsubscribe");
  cupti.enable_callback = (EnableCallbackFunc)dlsym (library, "cuptiEnableCallback");
  cupti.result_string = (ResultStringFunc)dlsym (library, "cuptiGetResultString");
  if (cupti.subscribe == NULL || cupti.unsubscribe == NULL
      || cupti.enable_callback == NULL || cupti.result_string == NULL)
    {
      tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                     "checked mode: the CUPTI loaded lacks the callback API "
                     "(cuptiSubscribe): %s",
                     fix);
      /* CUPTI is never unloaded: a library that ran may hold threads. */
      return FALSE;
    }
  cupti.library = library;
  return TRUE;
}

/* Enables the callback of call @id, counting it in *@n (when given): one a
 * CUPTI older than the headers TrackGen was built with does not know, it
 * cannot report either. */
static CUptiResult
enable (CUpti_CallbackDomain domain, CUpti_CallbackId id, guint *n)
{
  CUptiResult r = cupti.enable_callback (1, cupti.subscriber, domain, id);

  if (n != NULL)
    *n += r == CUPTI_SUCCESS;
  return r == CUPTI_ERROR_INVALID_PARAMETER ? CUPTI_SUCCESS : r;
}

gboolean
tg__check_cupti_on (GError **error)
{
  CUptiResult r;
  guint n_driver = 0;

  if (cupti.subscriber != NULL)
    return TRUE;
  if (!cupti_load (error))
    return FALSE;
  r = cupti.subscribe (&cupti.subscriber, on_call, NULL);
  if (r != CUPTI_SUCCESS)
    {
      cupti.subscriber = NULL;
      tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                     "checked mode: cuptiSubscribe failed (%s): CUPTI takes one "
                     "subscriber, so a profiler or debugger that uses it (Nsight "
                     "Systems, Nsight Compute, cuda-gdb, torch.profiler) excludes "
                     "checked mode, and CUPTI needs the NVIDIA driver; TG_CUPTI_PATH "
                     "names the CUPTI to use",
                     result_name (r));
      return FALSE;
    }
  for (CUpti_CallbackId id = 0; r == CUPTI_SUCCESS && id < CUPTI_RUNTIME_TRACE_CBID_SIZE;
       id++)
    if (note_runtime (NULL, id, NULL))
      r = enable (CUPTI_CB_DOMAIN_RUNTIME_API, id, NULL);
  for (CUpti_CallbackId id = 0; r == CUPTI_SUCCESS && id < CUPTI_DRIVER_TRACE_CBID_SIZE;
       id++)
    if (note_driver (NULL, id, NULL))
      r = enable (CUPTI_CB_DOMAIN_DRIVER_API, id, &n_driver);
  /* A CUPTI that knows none of the driver's calls would check nothing. */
  if (r == CUPTI_SUCCESS && n_driver == 0)
    r = CUPTI_ERROR_INVALID_PARAMETER;
  if (r != CUPTI_SUCCESS)
    {
      cupti.unsubscribe (cupti.subscriber);
      cupti.subscriber = NULL;
      tg__set_error (error, TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                     "checked mode: cuptiEnableCallback failed (%s)", result_name (r));
      return FALSE;
    }
  return TRUE;
}

void
tg__check_cupti_off (void)
{
  if (cupti.subscriber != NULL)
    cupti.unsubscribe (cupti.subscriber);
  cupti.subscriber = NULL;
}
#endif
