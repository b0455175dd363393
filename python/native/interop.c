/* SPDX-License-Identifier: Apache-2.0 */
/* interop.c: captures TrackGen did not begin (CaptureScope), and what a
 * graph retains: producers, seed states, any Python object. */
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
  PyObject *stream_obj, *mode_obj = NULL;
  gint64 mode = cudaStreamCaptureModeGlobal;
  cudaStream_t stream;
  GError *error = NULL;
  TgCaptureScope *scope;
  TgpyScope *self;

  if (state == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "O|O:CaptureScope", names,
                                       &stream_obj, &mode_obj)
      || (mode_obj != NULL
          && tgpy_count (mode_obj, "mode (0 global, 1 thread_local, 2 relaxed)",
                         cudaStreamCaptureModeGlobal, cudaStreamCaptureModeRelaxed,
                         &mode)
                 < 0)
      || tgpy_stream (stream_obj, "stream", &stream) < 0)
    return NULL;
  /* A scope belongs to the calling thread: no GIL release around it. */
  if ((scope = tg_capture_scope_begin (stream, (enum cudaStreamCaptureMode)mode, &error))
      == NULL)
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
