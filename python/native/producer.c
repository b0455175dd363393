/* SPDX-License-Identifier: Apache-2.0 */
/* producer.c: Producer, one Python object per TgProducer: the type, its life
 * and attributes, and its method table, which holds its stage builders
 * (producer-stages.c), its bindings (producer-bindings.c) and its calls
 * (producer-calls.c).  Stages written in Python are TgpyStage trampolines. */
#include "producer-private.h"

#include <structmember.h>

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
  tg_producer_set_rebind_handler (producer, tgpy_producer_on_rebind, b,
                                  tgpy_producer_binds_free);
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
  TGPY_WITHOUT_GIL (self, held, n = tg_producer_get_n_stages (held));
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
  { "_bind", (PyCFunction)(void (*) (void))tgpy_producer_bind,
    METH_VARARGS | METH_KEYWORDS,
    "_bind($self, name, array, size=None, dtype=None)\n--\n\ntg_producer_bind(); None "
    "unbinds; an array that carries a dtype other than *dtype* is refused." },
  { "get_binding", tgpy_producer_get_binding, METH_O,
    "get_binding($self, name, /)\n--\n\n(address, size) bound as *name*, or None." },
  { "binding_owner", tgpy_producer_binding_owner, METH_O,
    "binding_owner($self, name, /)\n--\n\nThe object bound as *name*, or None." },
  { "set_stream", tgpy_producer_set_stream, METH_O,
    "set_stream($self, stream, /)\n--\n\nBinds the stream that calls passing None use "
    "(tg_producer_set_stream()); None unbinds." },
  { "run", (PyCFunction)(void (*) (void))tgpy_producer_run,
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
  { "resolve", (PyCFunction)(void (*) (void))tgpy_producer_resolve,
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
  { "_runner_stats", tgpy_producer_runner_stats, METH_NOARGS,
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
  { "stream", tgpy_producer_get_stream, NULL,
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
