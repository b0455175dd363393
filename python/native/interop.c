/* SPDX-License-Identifier: Apache-2.0 */
/* interop.c: captures TrackGen did not begin (CaptureScope), and what a
 * graph retains: producers, seed states, any Python object.  Plus the
 * module's stream and diagnostics functions. */
#include "native.h"

/* ------------------------------------------------------------------------ */
/* CaptureScope                                                              */

typedef struct
{
  PyObject_HEAD TgCaptureScope *scope; /* NULL once freed */
} TgpyScope;

static PyObject *
scope_new (PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "stream", "mode", NULL };
  TgpyState *state = tgpy_state_of_type (type);
  allocfunc alloc = PyType_GetSlot (type, Py_tp_alloc);
  PyObject *stream_obj;
  int mode = cudaStreamCaptureModeGlobal;
  cudaStream_t stream;
  GError *error = NULL;
  TgCaptureScope *scope;
  TgpyScope *self;

  if (state == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "O|i:CaptureScope", names,
                                       &stream_obj, &mode)
      || tgpy_stream (stream_obj, "stream", &stream) < 0)
    return NULL;
  if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed)
    return tgpy_argument_error (PyExc_ValueError, "mode",
                                "%d is not a capture mode (0 global, 1 thread_local, 2 "
                                "relaxed)",
                                mode);
  /* A scope belongs to the calling thread: no GIL release around it. */
  if ((scope = tg_capture_scope_begin (stream, mode, &error)) == NULL)
    return tgpy_raise (state, error, NULL);
  if ((self = (TgpyScope *)alloc (type, 0)) == NULL)
    {
      tg_capture_scope_free (scope);
      return NULL;
    }
  self->scope = scope;
  return (PyObject *)self;
}

static PyObject *
scope_end (TgpyScope *self, PyObject *unused)
{
  GError *error = NULL;

  if (self->scope == NULL)
    Py_RETURN_NONE;
  if (!tg_capture_scope_end (self->scope, &error))
    return tgpy_raise (tgpy_state_of (self), error, NULL);
  g_clear_pointer (&self->scope, tg_capture_scope_free);
  Py_RETURN_NONE;
}

static PyObject *
scope_get_capture_id (TgpyScope *self, void *closure)
{
  if (self->scope == NULL)
    Py_RETURN_NONE;
  return PyLong_FromUnsignedLongLong (tg_capture_scope_get_capture_id (self->scope));
}

static void
scope_dealloc (TgpyScope *self)
{
  PyTypeObject *type = Py_TYPE (self);
  freefunc free = PyType_GetSlot (type, Py_tp_free);

  /* Ended on its own thread, or left registered with a critical. */
  if (self->scope != NULL)
    tg_capture_scope_free (self->scope);
  free (self);
  Py_DECREF (type);
}

static PyMethodDef scope_methods[] = {
  { "end", (PyCFunction)scope_end, METH_NOARGS,
    "end($self)\n--\n\nEnds the registration (tg_capture_scope_end()), on the "
    "thread that began it; ending twice is a no-op." },
  { NULL },
};

static PyGetSetDef scope_getset[] = {
  { "capture_id", (getter)scope_get_capture_id, NULL,
    "The id of the capture registered, or None once ended.", NULL },
  { NULL },
};

static PyType_Slot scope_slots[] = {
  { Py_tp_doc, "CaptureScope(stream, mode=0)\n--\n\nRegisters the capture in progress "
               "on *stream* for the calling thread (tg_capture_scope_begin()): calls "
               "that name no stream record into it, and every producer recorded into "
               "it is retained by its graph.  *mode* is the mode it was begun with." },
  { Py_tp_new, scope_new },
  { Py_tp_dealloc, scope_dealloc },
  { Py_tp_methods, scope_methods },
  { Py_tp_getset, scope_getset },
  { 0, NULL },
};

static PyType_Spec scope_spec = {
  .name = "track_gen._native.CaptureScope",
  .basicsize = sizeof (TgpyScope),
  .flags = TGPY_TPFLAGS,
  .slots = scope_slots,
};

/* ------------------------------------------------------------------------ */
/* Retention                                                                 */

/* Ties @obj to @graph, or, @by_stream, to the graph of the capture on
 * @stream: a producer or seed state through its C object (the reference
 * the graph holds is libtrackgen's), anything else as a Python reference
 * dropped on TrackGen's reaper thread. */
static gboolean
retain_one (TgpyState *state, gboolean by_stream, cudaGraph_t graph,
            cudaStream_t stream, PyObject *obj, GError **error)
{
  GDestroyNotify release = tgpy_release_object;
  gpointer data = obj;

  if (PyObject_TypeCheck (obj, (PyTypeObject *)state->producer_type))
    {
      TgProducer *p = tgpy_producer_get (state, obj);
      if (p == NULL)
        return FALSE;
      data = tg_producer_ref (p);
      release = (GDestroyNotify)tg_producer_unref;
    }
  else if (PyObject_TypeCheck (obj, (PyTypeObject *)state->seed_state_type))
    {
      TgSeedState *s = tgpy_seed_state_get (state, obj);
      if (s == NULL)
        return FALSE;
      data = tg_seed_state_ref (s);
      release = (GDestroyNotify)tg_seed_state_unref;
    }
  else
    Py_INCREF (obj);
  return !by_stream ? tg_retain_full (graph, data, release, error)
                    : tg_retain_capture_full (stream, data, release, error);
}

/* Ties args[1:] to @graph, or, @by_stream, to the graph of the capture on
 * @stream (retain() and retain_capture()). */
static PyObject *
retain_all (TgpyState *state, gboolean by_stream, cudaGraph_t graph,
            cudaStream_t stream, PyObject *args)
{
  GError *error = NULL;

  for (Py_ssize_t i = 1; i < PyTuple_Size (args); i++)
    {
      if (!retain_one (state, by_stream, graph, stream, PyTuple_GetItem (args, i),
                       &error))
        return error != NULL ? tgpy_raise (state, error, NULL) : NULL;
    }
  Py_RETURN_NONE;
}

static PyObject *
native_retain (PyObject *module, PyObject *args)
{
  cudaGraph_t graph;

  if (PyTuple_Size (args) < 1)
    return tgpy_argument_error (PyExc_TypeError, "graph", "missing");
  /* A NULL graph is libtrackgen's refusal. */
  if (tgpy_address (PyTuple_GetItem (args, 0), "graph", (void **)&graph) < 0)
    return NULL;
  return retain_all (PyModule_GetState (module), FALSE, graph, NULL, args);
}

/* The graph of the capture active on @stream, or NULL: asked only of an
 * active capture (the query is refused on the legacy stream joined to a
 * capture), leaving an error the caller had pending alone. */
static cudaGraph_t
active_graph (cudaStream_t stream)
{
  enum cudaStreamCaptureStatus status;
  cudaGraph_t graph = NULL;
  cudaError_t err
      = cudaStreamGetCaptureInfo (stream, &status, NULL, &graph, NULL, NULL, NULL);

  if (err == cudaSuccess)
    return graph;
  if (cudaPeekAtLastError () == err)
    (void)cudaGetLastError ();
  return NULL;
}

static PyObject *
native_retain_capture (PyObject *module, PyObject *args)
{
  TgpyState *state = PyModule_GetState (module);
  TgCaptureState capture = TG_CAPTURE_NONE;
  cudaGraph_t graph = NULL;
  GError *error = NULL;
  cudaStream_t stream;

  if (PyTuple_Size (args) < 1)
    return tgpy_argument_error (PyExc_TypeError, "stream", "missing");
  if (tgpy_stream (PyTuple_GetItem (args, 0), "stream", &stream) < 0)
    return NULL;
  if (!tg_stream_get_capture_state (stream, &capture, NULL, &error))
    return tgpy_raise (state, error, NULL);
  if (capture == TG_CAPTURE_ACTIVE)
    graph = active_graph (stream);
  if (graph == NULL)
    {
      g_set_error (&error, TG_STATE_ERROR, TG_STATE_ERROR_NOT_CAPTURING,
                   "stream %p has no capture in progress to retain into: call it "
                   "inside the capture (inside torch.cuda.graph)",
                   (void *)stream);
      return tgpy_raise (state, error, NULL);
    }
  /* By the stream: what one capture retains shares its one user object. */
  return retain_all (state, TRUE, NULL, stream, args);
}

/* What the owner of a graph holds for it instead of a CUDA user object
 * (tg_retained_new()): a capsule, its TgRetained NULL once handed back.  One
 * dropped unreleased keeps its references for the life of the process: the
 * graph may still run. */
#define RETAINED_NAME "track_gen._native.Retained"

static void
retained_capsule_free (PyObject *capsule)
{
  g_free (PyCapsule_GetPointer (capsule, RETAINED_NAME));
}

static PyObject *
native_retained_new (PyObject *module, PyObject *stream_obj)
{
  TgRetained **held = g_new0 (TgRetained *, 1);
  PyObject *capsule = PyCapsule_New (held, RETAINED_NAME, retained_capsule_free);
  cudaStream_t stream;
  GError *error = NULL;

  /* The capsule first: once TrackGen holds for the capture, nothing fails. */
  if (capsule == NULL)
    {
      g_free (held);
      return NULL;
    }
  if (tgpy_stream (stream_obj, "stream", &stream) < 0)
    {
      Py_DECREF (capsule);
      return NULL;
    }
  if ((*held = tg_retained_new (stream, &error)) == NULL)
    {
      Py_DECREF (capsule);
      return tgpy_raise (PyModule_GetState (module), error, NULL);
    }
  return capsule;
}

static PyObject *
native_retained_release (PyObject *module, PyObject *args)
{
  PyObject *capsule, *stream_obj;
  TgRetained **held;
  cudaStream_t stream;
  GError *error = NULL;

  if (!PyArg_ParseTuple (args, "OO:retained_release", &capsule, &stream_obj)
      || (held = PyCapsule_GetPointer (capsule, RETAINED_NAME)) == NULL
      || tgpy_stream (stream_obj, "stream", &stream) < 0)
    return NULL;
  if (*held == NULL)
    return tgpy_argument_error (PyExc_ValueError, "retained", "already released");
  if (!tg_retained_release (*held, stream, &error))
    return tgpy_raise (PyModule_GetState (module), error, NULL);
  *held = NULL;
  Py_RETURN_NONE;
}

/* The capture state of a stream: (state, capture id, graph or None). */
static PyObject *
native_capture_info (PyObject *module, PyObject *stream_obj)
{
  cudaStream_t stream;
  TgCaptureState capture = TG_CAPTURE_NONE;
  unsigned long long id = 0;
  cudaGraph_t graph = NULL;
  GError *error = NULL;

  if (tgpy_stream (stream_obj, "stream", &stream) < 0)
    return NULL;
  if (!tg_stream_get_capture_state (stream, &capture, &id, &error))
    return tgpy_raise (PyModule_GetState (module), error, NULL);
  if (capture == TG_CAPTURE_ACTIVE)
    graph = active_graph (stream);
  return Py_BuildValue (
      "(NKN)",
      tgpy_enum_value (((TgpyState *)PyModule_GetState (module))->capture_state_enum,
                       capture),
      id, graph != NULL ? PyLong_FromVoidPtr (graph) : (Py_INCREF (Py_None), Py_None));
}

static PyObject *
native_is_registered (PyObject *module, PyObject *stream_obj)
{
  cudaStream_t stream;

  if (tgpy_stream (stream_obj, "stream", &stream) < 0)
    return NULL;
  return PyBool_FromLong (tg_capture_is_registered (stream));
}

static PyObject *
native_release_wait (PyObject *module, PyObject *args)
{
  PyObject *timeout = Py_None;
  gint64 us;
  gboolean done;

  if (!PyArg_ParseTuple (args, "|O:release_wait", &timeout)
      || tgpy_timeout (timeout, "timeout", &us) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  done = tg_release_wait (us);
  Py_END_ALLOW_THREADS;
  return PyBool_FromLong (done);
}

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
  Py_INCREF (torch);
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

  if (getter == NULL)
    return 0;
  if ((arg = PyLong_FromLong (device)) == NULL)
    return -1;
  result = PyObject_CallFunctionObjArgs (getter, arg, NULL);
  Py_DECREF (arg);
  if (result == NULL)
    return -1;
  if (state->torch_raw)
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

/* ------------------------------------------------------------------------ */
/* Streams, devices, diagnostics                                             */

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
  return PyLong_FromVoidPtr (resolved);
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
  return PyLong_FromVoidPtr (stream);
}

static PyObject *
native_device_check (PyObject *module, PyObject *args)
{
  PyObject *device_obj = NULL;
  int device;
  GError *error = NULL;
  gboolean ok;

  if (!PyArg_ParseTuple (args, "|O:device_check", &device_obj)
      || tgpy_device (device_obj, "device", &device) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  ok = tg_device_check (device, &error);
  Py_END_ALLOW_THREADS;
  if (!ok)
    return tgpy_raise (PyModule_GetState (module), error, NULL);
  Py_RETURN_NONE;
}

static PyObject *
native_live_objects (PyObject *module, PyObject *unused)
{
  TgLiveObjects l;

  tg_get_live_objects (&l);
  return Py_BuildValue ("(iiiiiiii)", l.producers, l.graphs, l.graph_execs, l.streams,
                        l.captures, l.failed_releases, l.idle_streams, l.user_objects);
}

static PyObject *
native_set_nvtx (PyObject *module, PyObject *on)
{
  int truth = PyObject_IsTrue (on);

  if (truth < 0)
    return NULL;
  tg_set_nvtx (truth);
  Py_RETURN_NONE;
}

static PyObject *
native_get_nvtx (PyObject *module, PyObject *unused)
{
  return PyBool_FromLong (tg_get_nvtx ());
}

static PyObject *
native_effective_seed (PyObject *module, PyObject *args)
{
  PyObject *seed_obj, *epoch_obj;
  guint64 seed, epoch;

  if (!PyArg_ParseTuple (args, "OO:effective_seed", &seed_obj, &epoch_obj)
      || tgpy_uint (seed_obj, "seed", G_MAXUINT64, &seed) < 0
      || tgpy_uint (epoch_obj, "epoch", G_MAXUINT32, &epoch) < 0)
    return NULL;
  return PyLong_FromUnsignedLongLong (tg_effective_seed (seed, (guint32)epoch));
}

static PyObject *
native_mix64 (PyObject *module, PyObject *z)
{
  guint64 v;

  /* An int of 64 bits, checked as every integer of the package is. */
  if (tgpy_uint (z, "z", G_MAXUINT64, &v) < 0)
    return NULL;
  return PyLong_FromUnsignedLongLong (tg_mix64 (v));
}

static PyObject *
native_env_seed (PyObject *module, PyObject *args)
{
  PyObject *base_obj, *env_obj;
  guint64 base, env;

  if (!PyArg_ParseTuple (args, "OO:env_seed", &base_obj, &env_obj)
      || tgpy_uint (base_obj, "base_seed", G_MAXUINT64, &base) < 0
      || tgpy_uint (env_obj, "env", G_MAXUINT32, &env) < 0)
    return NULL;
  return PyLong_FromUnsignedLongLong (tg_env_seed (base, (guint32)env));
}

static PyObject *
native_array_info (PyObject *module, PyObject *args)
{
  PyObject *obj;
  const char *what = "array";
  TgpyArray a;

  if (!PyArg_ParseTuple (args, "O|s:array_info", &obj, &what)
      || tgpy_array (PyModule_GetState (module), obj, what, &a) < 0)
    return NULL;
  return Py_BuildValue ("(Nnsi)", PyLong_FromVoidPtr (a.ptr), (Py_ssize_t)a.nbytes,
                        a.dtype, a.device);
}

/* For tests and diagnostics: the nodes of a graph, its top level. */
static PyObject *
native_graph_n_nodes (PyObject *module, PyObject *graph_obj)
{
  cudaGraph_t graph;
  size_t n = 0;
  cudaError_t err;

  if (tgpy_address (graph_obj, "graph", (void **)&graph) < 0)
    return NULL;
  if (graph == NULL)
    return tgpy_argument_error (PyExc_ValueError, "graph", "NULL");
  if ((err = cudaGraphGetNodes (graph, NULL, &n)) != cudaSuccess)
    {
      if (cudaPeekAtLastError () == err)
        (void)cudaGetLastError ();
      PyErr_Format (PyExc_RuntimeError, "cudaGraphGetNodes failed: %s",
                    cudaGetErrorName (err));
      return NULL;
    }
  return PyLong_FromSize_t (n);
}

static PyObject *
native_stream_handle (PyObject *module, PyObject *obj)
{
  cudaStream_t stream;

  return tgpy_stream (obj, "stream", &stream) < 0 ? NULL
                                                  : tgpy_stream_to_object (stream);
}

/* A reference never dropped: @obj lives until the process exits, and its
 * destructor never runs (interop/torch.py's memory pools). */
static PyObject *
native_keep_until_exit (PyObject *module, PyObject *obj)
{
  Py_INCREF (obj);
  Py_INCREF (obj);
  return obj;
}

static PyObject *
native_policy_name (PyObject *module, PyObject *arg)
{
  gint64 p;

  if (tgpy_count (arg, "policy", TG_POLICY_AUTO, TG_POLICY_RECORD, &p) < 0)
    return NULL;
  return PyUnicode_FromString (tg_policy_to_string ((TgPolicy)p));
}

static PyMethodDef interop_functions[] = {
  { "retain", native_retain, METH_VARARGS,
    "retain(graph, *objects)\n--\n\nTies each object to the cudaGraph_t *graph* (an "
    "int) until the graph and its executable graphs are destroyed (tg_retain(), "
    "tg_retain_full()); the references are dropped on TrackGen's reaper thread." },
  { "retain_capture", native_retain_capture, METH_VARARGS,
    "retain_capture(stream, *objects)\n--\n\nLike retain(), for the graph of the "
    "capture in progress on *stream*, all of them sharing that graph's one CUDA user "
    "object, or held by its owner (tg_retain_capture_full()); StateError when it has "
    "none." },
  { "retained_new", native_retained_new, METH_O,
    "retained_new(stream, /)\n--\n\nTakes over what TrackGen ties to the graph of the "
    "capture in progress on *stream* (None: the innermost registered one), so that the "
    "graph holds no CUDA user object, which costs GPU time at every replay "
    "(tg_retained_new()).  Call it right after the capture began; hand the result "
    "back with retained_release() once the graph is deleted." },
  { "retained_release", native_retained_release, METH_VARARGS,
    "retained_release(retained, stream, /)\n--\n\nReleases what *retained* holds once "
    "the work enqueued on *stream* so far has run (tg_retained_release()): pass the "
    "stream the graph was last replayed on, not capturing." },
  { "capture_info", native_capture_info, METH_O,
    "capture_info(stream, /)\n--\n\n(state, capture id, graph or None) of *stream*, "
    "state a CaptureState (tg_stream_get_capture_state()); never disturbs a capture." },
  { "is_registered", native_is_registered, METH_O,
    "is_registered(stream, /)\n--\n\nWhether *stream*'s capture is registered on this "
    "thread (None: the innermost registered one) (tg_capture_is_registered())." },
  { "release_wait", native_release_wait, METH_VARARGS,
    "release_wait(timeout=None)\n--\n\nWaits until every reference graphs held was "
    "released, at most *timeout* seconds (>= 0; None or inf: for ever) "
    "(tg_release_wait()); True when none is left." },
  { "resolve_stream", native_resolve_stream, METH_VARARGS,
    "resolve_stream(stream=None, device=0)\n--\n\nThe stream a call would use on "
    "*device* (tg_stream_resolve_full(), the framework's current stream as the "
    "ambient one)." },
  { "default_stream", native_default_stream, METH_VARARGS,
    "default_stream(device=0)\n--\n\nTrackGen's default stream of *device*." },
  { "device_check", native_device_check, METH_VARARGS,
    "device_check(device=0)\n--\n\nRuns TrackGen's kernels once on *device* and checks "
    "them (tg_device_check())." },
  { "set_nvtx", native_set_nvtx, METH_O,
    "set_nvtx(on, /)\n--\n\ntg_set_nvtx(): NVTX ranges on or off." },
  { "get_nvtx", native_get_nvtx, METH_NOARGS,
    "get_nvtx()\n--\n\ntg_get_nvtx(): whether NVTX ranges are on." },
  { "live_objects", native_live_objects, METH_NOARGS,
    "live_objects()\n--\n\n(producers, graphs, graph_execs, streams, captures, "
    "failed_releases, idle_streams, user_objects) (tg_get_live_objects())." },
  { "effective_seed", native_effective_seed, METH_VARARGS,
    "effective_seed(seed, epoch)\n--\n\ntg_effective_seed(): the seed keying "
    "generation "
    "*epoch* of an env seeded *seed*, bit-identical to the device." },
  { "mix64", native_mix64, METH_O,
    "mix64(z, /)\n--\n\ntg_mix64(): SplitMix64's finalizer, a bijection of 64-bit "
    "integers." },
  { "env_seed", native_env_seed, METH_VARARGS,
    "env_seed(base_seed, env)\n--\n\ntg_env_seed(): env *env*'s seed in a population "
    "seeded *base_seed*." },
  { "array_info", native_array_info, METH_VARARGS,
    "array_info(array, what='array', /)\n--\n\n(address, nbytes, dtype, device) of a "
    "device array as TrackGen reads it (nbytes 0, dtype \"\" and device -1 when "
    "unknown); errors name the argument *what*." },
  { "_graph_n_nodes", native_graph_n_nodes, METH_O,
    "_graph_n_nodes(graph, /)\n--\n\nThe number of nodes at the top level of the "
    "cudaGraph_t *graph* (an int)." },
  { "_stream_handle", native_stream_handle, METH_O,
    "_stream_handle(stream, /)\n--\n\nThe cudaStream_t TrackGen reads from *stream* "
    "(None stays None)." },
  { "_keep_until_exit", native_keep_until_exit, METH_O,
    "_keep_until_exit(obj, /)\n--\n\nReturns *obj*, kept alive until the process "
    "exits: its destructor never runs." },
  { "policy_name", native_policy_name, METH_O,
    "policy_name(policy, /)\n--\n\ntg_policy_to_string()." },
  { NULL },
};

int
tgpy_interop_init (PyObject *module, TgpyState *state)
{
  state->scope_type = PyType_FromModuleAndSpec (module, &scope_spec, NULL);
  if (state->scope_type == NULL
      || PyModule_AddObjectRef (module, "CaptureScope", state->scope_type) < 0)
    return -1;
  return PyModule_AddFunctions (module, interop_functions);
}
