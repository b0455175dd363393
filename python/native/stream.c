/* SPDX-License-Identifier: Apache-2.0 */
/* stream.c: the streams of the module's calls: the ambient stream a call
 * that names none hands to libtrackgen's stream rule (torch's or Warp's
 * current stream), the stream functions, and this thread's relaxed
 * sections. */
#include "native.h"

/* ------------------------------------------------------------------------ */
/* The stream of a call that names none (doc/python.md, "Streams")           */

/* torch's current-stream getter, looked up again whenever sys.modules holds
 * another torch: torch._C._cuda_getCurrentRawStream(device) returns the
 * handle (one call, no stream object); else torch.cuda.current_stream(device),
 * whose .cuda_stream is.  Borrowed; NULL (no exception) while torch is not
 * imported or has no CUDA.  Nothing is imported. */
static PyObject *
torch_getter (TgpyState *state)
{
  PyObject *torch = PyDict_GetItemString (PyImport_GetModuleDict (), "torch");
  PyObject *part, *getter = NULL;

  if (torch == NULL || torch == Py_None)
    return NULL;
  if (torch == state->torch)
    return state->torch_stream;
  /* Held: the attribute lookups below may run a module __getattr__ that
   * takes torch out of sys.modules. */
  Py_INCREF (torch);
  state->torch_raw = TRUE;
  if ((part = PyObject_GetAttrString (torch, "_C")) != NULL)
    {
      getter = PyObject_GetAttrString (part, "_cuda_getCurrentRawStream");
      Py_DECREF (part);
    }
  if (getter == NULL)
    {
      PyErr_Clear ();
      state->torch_raw = FALSE;
      if ((part = PyObject_GetAttrString (torch, "cuda")) != NULL)
        {
          getter = PyObject_GetAttrString (part, "current_stream");
          Py_DECREF (part);
        }
      PyErr_Clear ();
    }
  Py_XDECREF (state->torch);
  state->torch = torch;
  Py_XDECREF (state->torch_stream);
  state->torch_stream = getter;
  return getter;
}

/* The cudaStream_t of @handle (a new reference, or NULL with an
 * exception), an int that @framework's current stream gave: 1, or -1 with
 * an exception. */
static int
stream_handle (PyObject *handle, const char *framework, cudaStream_t *stream)
{
  if (handle == NULL)
    return -1;
  if (PyLong_Check (handle))
    *stream = PyLong_AsVoidPtr (handle);
  else
    PyErr_Format (PyExc_TypeError, "%s current stream handle is %R, not an int",
                  framework, handle);
  Py_DECREF (handle);
  return PyErr_Occurred () ? -1 : 1;
}

/* torch's current stream on @device: 1 when found, 0 when torch is not
 * imported (or has no CUDA), -1 with the exception torch raised. */
static int
torch_current_stream (TgpyState *state, int device, cudaStream_t *stream)
{
  PyObject *getter = torch_getter (state), *arg, *result, *handle;
  gboolean raw = state->torch_raw;

  if (getter == NULL)
    return 0;
  if ((arg = PyLong_FromLong (device)) == NULL)
    return -1;
  /* Held for the call, which may put another torch in sys.modules. */
  Py_INCREF (getter);
  result = PyObject_CallFunctionObjArgs (getter, arg, NULL);
  Py_DECREF (getter);
  Py_DECREF (arg);
  if (result == NULL)
    return -1;
  if (raw)
    handle = result;
  else
    {
      handle = PyObject_GetAttrString (result, "cuda_stream");
      Py_DECREF (result);
    }
  return stream_handle (handle, "torch's", stream);
}

/* Warp's device object of CUDA device @device (a new reference): None
 * while Warp is not initialized (wp.init() never ran) or knows no such
 * device, NULL with an exception. */
static PyObject *
warp_device (PyObject *context, int device)
{
  PyObject *runtime = PyObject_GetAttrString (context, "runtime"), *devices, *dev;
  Py_ssize_t n;

  if (runtime == NULL || runtime == Py_None)
    return runtime;
  devices = PyObject_GetAttrString (runtime, "cuda_devices");
  Py_DECREF (runtime);
  if (devices == NULL || (n = PySequence_Size (devices)) < 0)
    dev = NULL;
  else if (device >= n)
    {
      Py_INCREF (Py_None);
      dev = Py_None;
    }
  else
    dev = PySequence_GetItem (devices, device);
  Py_XDECREF (devices);
  return dev;
}

/* Warp's current stream on @device: 1 when found, 0 when warp is not
 * imported or has not set the device up (so no Warp work of the caller's
 * can be there), -1 with the exception Warp raised.  Read from Warp's
 * runtime, never through wp.get_stream(), which would initialize Warp: its
 * set-up breaks a capture in progress. */
static int
warp_current_stream (int device, cudaStream_t *stream)
{
  PyObject *modules = PyImport_GetModuleDict ();
  PyObject *context = PyDict_GetItemString (modules, "warp._src.context");
  PyObject *dev, *attr;
  int found = -1, set_up;

  if (PyDict_GetItemString (modules, "warp") == NULL || context == NULL)
    return 0;
  if ((dev = warp_device (context, device)) == NULL)
    return -1;
  if (dev == Py_None)
    found = 0;
  else if ((attr = PyObject_GetAttrString (dev, "has_stream")) != NULL)
    {
      /* No stream until Warp made the device's context current. */
      set_up = PyObject_IsTrue (attr);
      Py_DECREF (attr);
      if (set_up == 0)
        found = 0;
      else if (set_up > 0 && (attr = PyObject_GetAttrString (dev, "stream")) != NULL)
        {
          found = stream_handle (PyObject_GetAttrString (attr, "cuda_stream"), "Warp's",
                                 stream);
          Py_DECREF (attr);
        }
    }
  Py_DECREF (dev);
  return found;
}

int
tgpy_ambient (TgpyState *state, int device, TgCallStream *call)
{
  int found;

  if (call->stream != TG_STREAM_AUTO)
    return 0;
  /* torch's first: see doc/python.md, "Streams", for why. */
  if ((found = torch_current_stream (state, device, &call->ambient)) != 0)
    call->ambient_name = "torch's current stream";
  else if ((found = warp_current_stream (device, &call->ambient)) != 0)
    call->ambient_name = "Warp's current stream";
  return found < 0 ? -1 : 0;
}

static PyObject *
native_resolve_stream (PyObject *module, PyObject *args)
{
  PyObject *stream_obj = Py_None, *device_obj = NULL;
  int device;
  TgCallStream call = TG_CALL_STREAM (TG_STREAM_AUTO);
  cudaStream_t resolved;
  GError *error = NULL;

  if (!PyArg_ParseTuple (args, "|OO:resolve_stream", &stream_obj, &device_obj)
      || tgpy_stream (stream_obj, "stream", &call.stream) < 0
      || tgpy_device (device_obj, "device", &device) < 0
      || tgpy_ambient (PyModule_GetState (module), device, &call) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  resolved = tg_stream_resolve_full (&call, device, &error);
  Py_END_ALLOW_THREADS;
  if (resolved == NULL)
    return tgpy_raise (PyModule_GetState (module), error, NULL);
  return tgpy_stream_to_object (resolved);
}

static PyObject *
native_default_stream (PyObject *module, PyObject *args)
{
  PyObject *device_obj = NULL;
  int device;
  cudaStream_t stream;
  GError *error = NULL;

  if (!PyArg_ParseTuple (args, "|O:default_stream", &device_obj)
      || tgpy_device (device_obj, "device", &device) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  stream = tg_default_stream (device, &error);
  Py_END_ALLOW_THREADS;
  if (stream == NULL)
    return tgpy_raise (PyModule_GetState (module), error, NULL);
  return tgpy_stream_to_object (stream);
}

static PyObject *
native_stream_handle (PyObject *module, PyObject *obj)
{
  cudaStream_t stream;

  return tgpy_stream (obj, "stream", &stream) < 0 ? NULL
                                                  : tgpy_stream_to_object (stream);
}

/* A relaxed section on this thread (interop/warp.py's scratch()): its
 * allocations pass a global or thread-local capture in progress, which
 * refuses cudaMalloc.  _relaxed_begin() returns the mode to give back to
 * _relaxed_end(); sections nest.  The calls lib's own relaxed sections make,
 * as CUDA errors. */
static PyObject *
exchange_capture_mode (PyObject *module, enum cudaStreamCaptureMode mode)
{
  cudaError_t err = cudaThreadExchangeStreamCaptureMode (&mode);

  if (err != cudaSuccess)
    {
      GError *error = g_error_new (TG_CUDA_ERROR, err,
                                   "cudaThreadExchangeStreamCaptureMode failed: %s",
                                   cudaGetErrorName (err));

      if (cudaPeekAtLastError () == err)
        (void)cudaGetLastError ();
      return tgpy_raise (PyModule_GetState (module), error, NULL);
    }
  return PyLong_FromLong (mode);
}

static PyObject *
native_relaxed_begin (PyObject *module, PyObject *unused)
{
  return exchange_capture_mode (module, cudaStreamCaptureModeRelaxed);
}

static PyObject *
native_relaxed_end (PyObject *module, PyObject *saved)
{
  gint64 mode;

  if (tgpy_count (saved, "saved", cudaStreamCaptureModeGlobal,
                  cudaStreamCaptureModeRelaxed, &mode)
      < 0)
    return NULL;
  return exchange_capture_mode (module, (enum cudaStreamCaptureMode)mode);
}

static PyMethodDef stream_functions[] = {
  { "resolve_stream", native_resolve_stream, METH_VARARGS,
    "resolve_stream(stream=None, device=0)\n--\n\nThe stream a call would use on "
    "*device* (tg_stream_resolve_full(), the framework's current stream as the "
    "ambient one)." },
  { "default_stream", native_default_stream, METH_VARARGS,
    "default_stream(device=0)\n--\n\nTrackGen's default stream of *device*." },
  { "_stream_handle", native_stream_handle, METH_O,
    "_stream_handle(stream, /)\n--\n\nThe cudaStream_t TrackGen reads from *stream* "
    "(None stays None)." },
  { "_relaxed_begin", native_relaxed_begin, METH_NOARGS,
    "_relaxed_begin()\n--\n\nPuts this thread's CUDA calls in relaxed capture mode "
    "(cudaThreadExchangeStreamCaptureMode); returns the mode to give back to "
    "_relaxed_end()." },
  { "_relaxed_end", native_relaxed_end, METH_O,
    "_relaxed_end(saved, /)\n--\n\nGives this thread back the capture mode *saved* "
    "that _relaxed_begin() returned." },
  { NULL },
};

int
tgpy_stream_init (PyObject *module)
{
  return PyModule_AddFunctions (module, stream_functions);
}
