/* SPDX-License-Identifier: Apache-2.0 */
/* producer.c: Producer, one Python object per TgProducer: the type, its
 * bindings and its calls (its stage builders are producer-stages.c, stages
 * written in Python TgpyStage trampolines).  The objects bound to the producer
 * (tensors, arrays) are kept in a dict that the C producer owns through its
 * rebind handler's data, so they live as long as the producer does -- also
 * when a graph that retained the producer outlives the Python object.  An
 * object rebound after the producer was captured is retired, not dropped:
 * graphs of the caller that recorded it may still use it. */
#include "producer-private.h"

#include <string.h>
#include <structmember.h>

/* A rebind seen by on_rebind() during this thread's bind. */
static _Thread_local gboolean rebound;

static void
binds_free (gpointer data)
{
  Binds *b = data;

  if (!tgpy_is_finalizing ())
    {
      PyGILState_STATE gil = PyGILState_Ensure ();
      Py_XDECREF (b->owners);
      Py_XDECREF (b->retired);
      Py_XDECREF (b->warning);
      PyGILState_Release (gil);
    }
  g_free (b);
}

/* Called by tg_producer_bind() for a rebind after capture: a Python warning
 * (RebindAfterCaptureWarning), which warnings filters may make an error. */
static gboolean
on_rebind (TgProducer *producer, const char *binding, gpointer old_ptr,
           gpointer new_ptr, gpointer data)
{
  Binds *b = data;
  PyGILState_STATE gil = PyGILState_Ensure ();
  char *message = g_strdup_printf (
      "binding '%s' of producer '%s' changed from %p to %p after the producer was "
      "captured: its own graphs are updated at the next call, and every graph of "
      "yours that recorded it (a torch.cuda.graph) still uses the old buffer and must "
      "be captured again",
      binding, tg_producer_get_name (producer), old_ptr, new_ptr);

  rebound = TRUE;
  if (PyErr_WarnEx (b->warning, message, 2) < 0)
    tgpy_exception_stash (NULL);
  g_free (message);
  PyGILState_Release (gil);
  return TRUE;
}

TgProducer *
tgpy_producer_get (TgpyState *state, PyObject *obj)
{
  if (!PyObject_TypeCheck (obj, (PyTypeObject *)state->producer_type))
    {
      PyErr_Format (PyExc_TypeError, "expected a track_gen Producer, not %R",
                    (PyObject *)Py_TYPE (obj));
      return NULL;
    }
  return tgpy_producer_open (obj) != NULL ? ((TgpyProducer *)obj)->producer : NULL;
}

/* Gives @self the producer (transfer full) and its Python side. */
static int
attach (TgpyProducer *self, TgpyState *state, TgProducer *producer)
{
  Binds *b = g_new0 (Binds, 1);

  if ((b->owners = PyDict_New ()) == NULL || (b->retired = PyList_New (0)) == NULL)
    {
      Py_XDECREF (b->owners);
      g_free (b);
      tg_producer_unref (producer);
      return -1;
    }
  Py_INCREF (state->rebind_warning);
  b->warning = state->rebind_warning;
  self->producer = producer;
  self->name = g_strdup (tg_producer_get_name (producer));
  self->binds = b;
  self->stages = g_ptr_array_new ();
  /* The handler's data lives as long as the C producer. */
  tg_producer_set_rebind_handler (producer, on_rebind, b, binds_free);
  return 0;
}

static PyObject *
producer_new (PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "name", "device", NULL };
  TgpyState *state = tgpy_state_of_type (type);
  allocfunc alloc = PyType_GetSlot (type, Py_tp_alloc);
  const char *name = NULL;
  PyObject *name_obj, *device_obj = NULL;
  int device;
  TgpyProducer *self;

  /* tg_producer_new() takes a NULL or empty name as misuse. */
  if (state == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "O|O:Producer", names, &name_obj,
                                       &device_obj)
      || tgpy_name (name_obj, "name", FALSE, &name) < 0
      || tgpy_device (device_obj, "device", &device) < 0)
    return NULL;
  if ((self = (TgpyProducer *)alloc (type, 0)) == NULL)
    return NULL;
  if (attach (self, state, tg_producer_new (name, device)) < 0)
    {
      Py_DECREF (self);
      return NULL;
    }
  return (PyObject *)self;
}

PyObject *
tgpy_producer_wrap (TgpyState *state, PyTypeObject *type, TgProducer *producer)
{
  allocfunc alloc = PyType_GetSlot (type, Py_tp_alloc);
  TgpyProducer *self = (TgpyProducer *)alloc (type, 0);

  if (self == NULL)
    {
      tg_producer_unref (producer);
      return NULL;
    }
  if (attach (self, state, producer) < 0)
    {
      Py_DECREF (self);
      return NULL;
    }
  return (PyObject *)self;
}

/* Drops the producer; it lives on in graphs that retained it. */
static void
detach (TgpyProducer *self)
{
  TgProducer *p = self->producer;

  if (p == NULL)
    return;
  self->producer = NULL;
  self->binds = NULL;
  g_clear_pointer (&self->stages, g_ptr_array_unref);
  /* The last reference frees CUDA resources and calls the stages' destroy
   * notifies, which take the GIL this thread holds. */
  tg_producer_unref (p);
}

static int
producer_traverse (TgpyProducer *self, visitproc visit, void *arg)
{
  Py_VISIT ((PyObject *)Py_TYPE (self));
  /* The callables the C producer's stages hold: a stage that is a bound
   * method of the producer's own subclass is a cycle through C. */
  if (self->producer != NULL)
    for (guint i = 0; i < self->stages->len; i++)
      {
        TgpyStage *stage = self->stages->pdata[i];
        Py_VISIT (stage->func);
        Py_VISIT (stage->else_func);
      }
  return 0;
}

static int
producer_clear (TgpyProducer *self)
{
  detach (self);
  return 0;
}

static void
producer_dealloc (TgpyProducer *self)
{
  PyTypeObject *type = Py_TYPE (self);
  freefunc free = PyType_GetSlot (type, Py_tp_free);

  PyObject_GC_UnTrack (self);
  if (self->weakrefs != NULL)
    PyObject_ClearWeakRefs ((PyObject *)self);
  detach (self);
  g_free (self->name);
  free (self);
  Py_DECREF (type);
}

/* ------------------------------------------------------------------------ */
/* Bindings                                                                  */

static PyObject *
producer_bind (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "name", "array", "size", "dtype", NULL };
  TgpyProducer *self = tgpy_producer_open (obj);
  TgpyState *state = tgpy_state_of (obj);
  PyObject *name_obj, *array_obj, *size_obj = Py_None, *owner, *old;
  TgProducer *producer;
  Binds *b;
  gint64 size;
  const char *name, *dtype = NULL;
  GError *error = NULL;
  TgpyArray a;
  TgpyCall call;
  gboolean ok;

  /* tg_producer_bind() takes an empty name as misuse. */
  if (self == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "OO|Oz:bind", names, &name_obj,
                                       &array_obj, &size_obj, &dtype)
      || tgpy_name (name_obj, "name", FALSE, &name) < 0
      || tgpy_optional_count (size_obj, "size", 0, G_MAXINT64, &size) < 0)
    return NULL;
  if (array_obj == Py_None)
    a = (TgpyArray){ NULL, 0, "", -1 };
  else
    {
      char *what = g_strdup_printf ("binding '%s' of producer '%s'", name,
                                    tg_producer_get_name (self->producer));
      int rc = tgpy_array (state, array_obj, what, &a);

      if (rc == 0 && dtype != NULL)
        rc = tgpy_array_dtype_check (state, array_obj, what, &a, dtype);
      g_free (what);
      if (rc < 0)
        {
          tgpy_error_about (state, tg_producer_get_name (self->producer), name);
          return NULL;
        }
    }
  if (size < 0)
    size = (gint64)a.nbytes;
  else if (a.nbytes != 0 && (guint64)size > a.nbytes)
    {
      GError *e
          = g_error_new (TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                         "binding '%s' of producer '%s': size=%" G_GINT64_FORMAT
                         " bytes, but the array holds %zu; pass at most its size",
                         name, tg_producer_get_name (self->producer), size, a.nbytes);

      tg_error_set_fields (e, tg_producer_get_name (self->producer), NULL, name);
      return tgpy_raise (state, e, NULL);
    }
  if (a.ptr != NULL && size == 0)
    return tgpy_argument_error (PyExc_ValueError, "size",
                                "the size of an int address is not known: pass size=");
  rebound = FALSE;
  /* Held, with its Binds, for the call: the rebind warning runs Python code,
   * and another thread may close the producer meanwhile. */
  producer = tg_producer_ref (self->producer);
  b = self->binds;
  tgpy_call_begin (&call);
  Py_BEGIN_ALLOW_THREADS;
  ok = tg_producer_bind (producer, name, a.ptr, (gsize)size, &error);
  Py_END_ALLOW_THREADS;
  if (ok)
    {
      PyObject *key = PyUnicode_FromString (name);

      /* The old object: still needed by graphs that recorded it after a
       * rebind, else no longer. */
      old = key != NULL ? PyDict_GetItem (b->owners, key) : NULL;
      if (old != NULL && rebound && old != Py_None)
        ok = PyList_Append (b->retired, old) == 0;
      owner = PyLong_Check (array_obj) ? Py_None : array_obj;
      if (ok && key != NULL)
        ok = (array_obj == Py_None ? (old == NULL ? 0 : PyDict_DelItem (b->owners, key))
                                   : PyDict_SetItem (b->owners, key, owner))
             == 0;
      Py_XDECREF (key);
      if (!ok)
        {
          tg_producer_unref (producer);
          (void)tgpy_call_end (state, &call, TRUE, NULL);
          return NULL;
        }
    }
  tg_producer_unref (producer);
  if (tgpy_call_end (state, &call, ok, error) < 0)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *
producer_get_binding (PyObject *obj, PyObject *name_obj)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  const char *name;
  gpointer ptr;
  gsize size = 0;

  if (self == NULL || tgpy_name (name_obj, "name", FALSE, &name) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  ptr = tg_producer_get_binding (self->producer, name, &size);
  Py_END_ALLOW_THREADS;
  if (ptr == NULL)
    Py_RETURN_NONE;
  return Py_BuildValue ("(Nn)", PyLong_FromVoidPtr (ptr), (Py_ssize_t)size);
}

static PyObject *
producer_binding_owner (PyObject *obj, PyObject *name)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  PyObject *owner;
  const char *s;

  if (self == NULL || tgpy_name (name, "name", FALSE, &s) < 0)
    return NULL;
  owner = PyDict_GetItem (self->binds->owners, name);
  if (owner == NULL)
    Py_RETURN_NONE;
  Py_INCREF (owner);
  return owner;
}

/* ------------------------------------------------------------------------ */
/* Streams, calls, counters                                                  */

static PyObject *
producer_set_stream (PyObject *obj, PyObject *stream_obj)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  cudaStream_t stream;
  GError *error = NULL;
  gboolean ok;

  if (self == NULL || tgpy_stream (stream_obj, "stream", &stream) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  ok = tg_producer_set_stream (self->producer, stream, &error);
  Py_END_ALLOW_THREADS;
  if (!ok)
    return tgpy_raise (tgpy_state_of (obj), error, NULL);
  Py_RETURN_NONE;
}

static PyObject *
producer_get_stream (PyObject *obj, void *closure)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  cudaStream_t stream;

  if (self == NULL)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  stream = tg_producer_get_stream (self->producer);
  Py_END_ALLOW_THREADS;
  return tgpy_stream_to_object (stream);
}

/* run and resolve take (stream=None, policy=0, condition=None), positional
 * or by keyword, parsed by hand: run is the hot path of REPLAY.  The policy
 * is converted to a C int; libtrackgen refuses one that is no TgPolicy. */
static int
call_args (TgpyState *state, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
           cudaStream_t *stream, TgPolicy *policy, TgCondition *condition)
{
  static const char *const names[] = { "stream", "policy", "condition" };
  PyObject *values[3] = { NULL, NULL, NULL };
  gint64 p = TG_POLICY_AUTO;

  if (nargs > 3)
    {
      PyErr_SetString (PyExc_TypeError,
                       "at most 3 arguments: stream, policy, condition");
      return -1;
    }
  for (Py_ssize_t i = 0; i < nargs; i++)
    values[i] = args[i];
  if (kwnames != NULL)
    for (Py_ssize_t k = 0; k < PyTuple_Size (kwnames); k++)
      {
        const char *key = PyUnicode_AsUTF8AndSize (PyTuple_GetItem (kwnames, k), NULL);
        guint i = 0;

        while (i < 3 && strcmp (key, names[i]) != 0)
          i++;
        if (i == 3 || values[i] != NULL)
          {
            PyErr_Format (PyExc_TypeError, "%s keyword argument '%s'",
                          i == 3 ? "unexpected" : "repeated", key);
            return -1;
          }
        values[i] = args[nargs + k];
      }
  if (tgpy_stream (values[0], "stream", stream) < 0)
    return -1;
  if (values[1] != NULL && values[1] != Py_None
      && tgpy_count (values[1], "policy", G_MININT, G_MAXINT, &p) < 0)
    return -1;
  *policy = (TgPolicy)p;
  return tgpy_condition (state, values[2], condition);
}

/* run and resolve are METH_METHOD: the hot path reads the module state
 * from the class that defines them, with no walk up a subclass's bases. */
static PyObject *
producer_run (PyObject *obj, PyTypeObject *defining_class, PyObject *const *args,
              Py_ssize_t nargs, PyObject *kwnames)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  TgProducer *producer;
  TgpyState *state = PyType_GetModuleState (defining_class);
  TgCallStream stream = TG_CALL_STREAM (TG_STREAM_AUTO);
  TgPolicy policy;
  TgCondition condition;
  GError *error = NULL;
  TgpyCall call;
  gboolean ok;

  if (self == NULL
      || call_args (state, args, nargs, kwnames, &stream.stream, &policy, &condition)
             < 0
      || tgpy_ambient (state, tg_producer_get_device (self->producer), &stream) < 0)
    return NULL;
  /* Held for the call: a stage that closes its own producer (or another
   * thread that does) frees it only once the call is over. */
  producer = tg_producer_ref (self->producer);
  tgpy_call_begin (&call);
  Py_BEGIN_ALLOW_THREADS;
  ok = tg_producer_run_full (producer, &stream, policy, condition, &error);
  Py_END_ALLOW_THREADS;
  /* The last reference calls the stages' destroy notifies: under the GIL. */
  tg_producer_unref (producer);
  if (tgpy_call_end (state, &call, ok, error) < 0)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *
producer_resolve (PyObject *obj, PyTypeObject *defining_class, PyObject *const *args,
                  Py_ssize_t nargs, PyObject *kwnames)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  TgpyState *state = PyType_GetModuleState (defining_class);
  TgCallStream stream = TG_CALL_STREAM (TG_STREAM_AUTO);
  cudaStream_t resolved = NULL;
  TgPolicy policy, decided = TG_POLICY_AUTO;
  TgCondition condition;
  GError *error = NULL;
  gboolean ok;

  if (self == NULL
      || call_args (state, args, nargs, kwnames, &stream.stream, &policy, &condition)
             < 0
      || tgpy_ambient (state, tg_producer_get_device (self->producer), &stream) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  ok = tg_producer_resolve_full (self->producer, &stream, policy, condition, &decided,
                                 &resolved, &error);
  Py_END_ALLOW_THREADS;
  if (!ok)
    return tgpy_raise (state, error, NULL);
  return Py_BuildValue ("(NN)", tgpy_enum_value (state->policy_enum, decided),
                        tgpy_stream_to_object (resolved));
}

static PyObject *
producer_runner_stats (PyObject *obj, PyObject *unused)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  TgRunnerStats s;

  if (self == NULL)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  tg_producer_get_runner_stats (self->producer, &s);
  Py_END_ALLOW_THREADS;
  return Py_BuildValue (
      "(IKKKKKN)", s.n_segments, (unsigned long long)s.n_captures,
      (unsigned long long)s.n_replays, (unsigned long long)s.n_updates,
      (unsigned long long)s.n_recaptures, (unsigned long long)s.n_rebinds,
      tgpy_enum_value (tgpy_state_of (obj)->rebind_outcome_enum, s.last_rebind));
}

static PyObject *
producer_close (PyObject *obj, PyObject *unused)
{
  detach ((TgpyProducer *)obj);
  Py_RETURN_NONE;
}

static PyObject *
producer_get_name (PyObject *obj, void *closure)
{
  TgpyProducer *self = tgpy_producer_open (obj);

  return self == NULL ? NULL
                      : PyUnicode_FromString (tg_producer_get_name (self->producer));
}

static PyObject *
producer_get_device (PyObject *obj, void *closure)
{
  TgpyProducer *self = tgpy_producer_open (obj);

  return self == NULL ? NULL
                      : PyLong_FromLong (tg_producer_get_device (self->producer));
}

static PyObject *
producer_get_n_stages (PyObject *obj, void *closure)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  guint n;

  if (self == NULL)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  n = tg_producer_get_n_stages (self->producer);
  Py_END_ALLOW_THREADS;
  return PyLong_FromUnsignedLong (n);
}

static PyObject *
producer_get_closed (PyObject *obj, void *closure)
{
  return PyBool_FromLong (((TgpyProducer *)obj)->producer == NULL);
}

static PyObject *
producer_get_handle (PyObject *obj, void *closure)
{
  TgpyProducer *self = tgpy_producer_open (obj);

  return self == NULL ? NULL : PyLong_FromVoidPtr (self->producer);
}

static PyMethodDef producer_methods[] = {
  { "_add_stage", (PyCFunction)(void (*) (void))tgpy_producer_add_stage,
    METH_VARARGS | METH_KEYWORDS,
    "_add_stage($self, name, func, flags=0, host=False)\n--\n\n"
    "tg_producer_add_device_stage() or _add_host_stage()." },
  { "_add_loop_stage", (PyCFunction)(void (*) (void))tgpy_producer_add_loop_stage,
    METH_VARARGS | METH_KEYWORDS,
    "_add_loop_stage($self, name, body, flag_binding, status_binding, max_iters, "
    "flags=0)\n--\n\n"
    "tg_producer_add_loop_stage()." },
  { "_add_switch_stage", (PyCFunction)(void (*) (void))tgpy_producer_add_switch_stage,
    METH_VARARGS | METH_KEYWORDS,
    "_add_switch_stage($self, name, cases, index_binding, flags=0)\n--\n\n"
    "tg_producer_add_switch_stage()." },
  { "_declare_binding", tgpy_producer_declare_binding, METH_VARARGS,
    "_declare_binding($self, stage, name, "
    "min_size)\n--\n\ntg_producer_declare_binding()." },
  { "set_stage_condition", tgpy_producer_set_stage_condition, METH_VARARGS,
    "set_stage_condition($self, stage, flag_binding)\n--\n\nGuards stage *stage* by "
    "the int32 "
    "bound as *flag_binding* (None removes the guard): an IF node under a capture, a "
    "readback eagerly (tg_producer_set_stage_condition())." },
  { "set_stage_else", tgpy_producer_set_stage_else, METH_VARARGS,
    "set_stage_else($self, stage, func)\n--\n\nGives the guarded stage *stage* "
    "(written in "
    "Python) an else branch, ``func(ctx)``, run when its flag is 0; None removes it "
    "(tg_producer_set_stage_else())." },
  { "_bind", (PyCFunction)(void (*) (void))producer_bind, METH_VARARGS | METH_KEYWORDS,
    "_bind($self, name, array, size=None, dtype=None)\n--\n\ntg_producer_bind(); None "
    "unbinds; an array that carries a dtype other than *dtype* is refused." },
  { "get_binding", producer_get_binding, METH_O,
    "get_binding($self, name, /)\n--\n\n(address, size) bound as *name*, or None." },
  { "binding_owner", producer_binding_owner, METH_O,
    "binding_owner($self, name, /)\n--\n\nThe object bound as *name*, or None." },
  { "set_stream", producer_set_stream, METH_O,
    "set_stream($self, stream, /)\n--\n\nBinds the stream that calls passing None use "
    "(tg_producer_set_stream()); None unbinds." },
  { "run", (PyCFunction)(void (*) (void))producer_run,
    METH_METHOD | METH_FASTCALL | METH_KEYWORDS,
    /* No text signature: inspect cannot evaluate Policy.AUTO, so the first
     * line, which help() and Sphinx show as it is, is the signature. */
    "run(stream=None, policy=Policy.AUTO, condition=None)\n\n"
    "Runs the producer (tg_producer_run()).\n\n"
    "The work is launched eagerly, replayed from the producer's own graph, or\n"
    "recorded into the capture in progress on the stream, with the same\n"
    "results; *policy* and the stream's capture state decide which.  The GIL\n"
    "is released while it runs.\n\n"
    "Args:\n"
    "    stream (StreamLike): Where the work goes.  None follows the stream\n"
    "        rule (:func:`~track_gen.exec.resolve_stream`; torch's current\n"
    "        stream once torch is imported, else Warp's once warp is); an int\n"
    "        is a cudaStream_t (0 is the legacy default stream); a torch\n"
    "        stream is its handle.\n"
    "    policy (Policy): AUTO decides from the stream and the stages;\n"
    "        EAGER, REPLAY and RECORD insist and raise where they cannot apply.\n"
    "    condition (Condition | ArrayLike | None): Guards the whole call by a\n"
    "        device flag: a :class:`~track_gen.exec.Condition`, or an int32\n"
    "        device array.\n\n"
    "Raises:\n"
    "    CaptureError: The capture was lost (FAILED), or a refusal that left\n"
    "        it intact (:class:`~track_gen.exec.NotCapturableError`,\n"
    "        :class:`~track_gen.exec.LegacyPluginStreamError`).\n"
    "    ArgumentError: An argument is wrong at run time (a stream of\n"
    "        another device, a flag that is not int32).\n"
    "    StateError: The state refuses the call (a binding not bound, a\n"
    "        policy the stream's capture state refuses).\n"
    "    CudaError: A CUDA call failed.\n"
    "    StageError: A stage written in Python raised; its exception is the\n"
    "        cause.\n" },
  { "resolve", (PyCFunction)(void (*) (void))producer_resolve,
    METH_METHOD | METH_FASTCALL | METH_KEYWORDS,
    "resolve(stream=None, policy=Policy.AUTO, condition=None)\n\n"
    "The policy and the stream a run would use, without running\n"
    "(tg_producer_resolve()).\n\n"
    "Args:\n"
    "    stream (StreamLike): As :meth:`run` takes it.\n"
    "    policy (Policy): As :meth:`run` takes it.\n"
    "    condition (Condition | ArrayLike | None): As :meth:`run` takes it.\n\n"
    "Returns:\n"
    "    tuple[Policy, int]: The policy the call would take and its stream.\n" },
  { "_runner_stats", producer_runner_stats, METH_NOARGS,
    "_runner_stats($self)\n--\n\ntg_producer_get_runner_stats() as a tuple." },
  { "close", producer_close, METH_NOARGS,
    "close($self)\n--\n\nDrops this object's reference to the C producer now; graphs "
    "that "
    "retained it keep it alive.  Later calls raise ValueError." },
  { NULL },
};

static PyGetSetDef producer_getset[] = {
  { "name", producer_get_name, NULL, "The producer's name.", NULL },
  { "device", producer_get_device, NULL, "The producer's CUDA device.", NULL },
  { "n_stages", producer_get_n_stages, NULL, "The number of stages.", NULL },
  { "stream", producer_get_stream, NULL,
    "The bound stream (an int), or None when none is bound.", NULL },
  { "closed", producer_get_closed, NULL, "Whether close() was called.", NULL },
  { "_handle", producer_get_handle, NULL, "The TgProducer * (an int).", NULL },
  { NULL },
};

static PyMemberDef producer_members[] = {
  { "__weaklistoffset__", T_PYSSIZET, offsetof (TgpyProducer, weakrefs), READONLY,
    NULL },
  { NULL },
};

static PyType_Slot producer_slots[] = {
  { Py_tp_doc, "Producer(name, device=0)\n--\n\nA producer of device work "
               "(TgProducer): ordered stages run by one call, eagerly, replayed from "
               "its own graph, or recorded into the caller's capture." },
  { Py_tp_new, producer_new },
  { Py_tp_dealloc, producer_dealloc },
  { Py_tp_traverse, producer_traverse },
  { Py_tp_clear, producer_clear },
  { Py_tp_methods, producer_methods },
  { Py_tp_getset, producer_getset },
  { Py_tp_members, producer_members },
  { 0, NULL },
};

static PyType_Spec producer_spec = {
  .name = "track_gen._native.Producer",
  .basicsize = sizeof (TgpyProducer),
  .flags = TGPY_TPFLAGS | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
  .slots = producer_slots,
};

int
tgpy_producer_init_type (PyObject *module, TgpyState *state)
{
  state->producer_type = PyType_FromModuleAndSpec (module, &producer_spec, NULL);
  if (state->producer_type == NULL
      || PyModule_AddObjectRef (module, "Producer", state->producer_type) < 0)
    return -1;
  return 0;
}
