/* SPDX-License-Identifier: Apache-2.0 */
/* launch.c: LaunchContext, what a stage written in Python receives (HOST
 * stages receive its subclass HostOps, hostops.c), and the trampolines
 * through which libtrackgen calls such stages and their bodies.  A context
 * is valid only during the call that made it: afterwards its methods
 * raise. */
#include "native.h"

const TgLaunch *
tgpy_launch_valid (TgpyLaunch *self)
{
  const char *kind = PyObject_TypeCheck (
                         (PyObject *)self,
                         (PyTypeObject *)tgpy_state_of (self)->host_ops_type)
                         ? "HostOps"
                         : "LaunchContext";

  /* Another thread could use it as the stage returns, and the launch goes:
   * the stage's captures are its thread's too. */
  if (self->launch != NULL && self->thread != PyThread_get_thread_ident ())
    {
      tgpy_raise (tgpy_state_of (self),
                  g_error_new (TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                               "this %s belongs to a stage running on another thread; "
                               "use it on that thread, during the stage's call",
                               kind),
                  NULL);
      return NULL;
    }
  if (self->launch == NULL)
    tgpy_raise (tgpy_state_of (self),
                g_error_new (TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                             "this %s belongs to a stage call that returned; use the "
                             "one a stage receives, during that call only",
                             kind),
                NULL);
  return self->launch;
}

void
tgpy_launch_invalidate (PyObject *obj)
{
  ((TgpyLaunch *)obj)->launch = NULL;
  ((TgpyLaunch *)obj)->ops = NULL;
}

static PyObject *
launch_alloc (PyObject *type, const TgLaunch *launch, TgHostOps *ops, PyObject *owners)
{
  allocfunc alloc = PyType_GetSlot ((PyTypeObject *)type, Py_tp_alloc);
  TgpyLaunch *self = (TgpyLaunch *)alloc ((PyTypeObject *)type, 0);

  if (self == NULL)
    return NULL;
  self->launch = launch;
  self->ops = ops;
  self->thread = PyThread_get_thread_ident ();
  Py_XINCREF (owners);
  self->owners = owners;
  return (PyObject *)self;
}

PyObject *
tgpy_launch_new (TgpyState *state, const TgLaunch *launch, PyObject *owners)
{
  return launch_alloc (state->launch_type, launch, NULL, owners);
}

PyObject *
tgpy_host_ops_new (TgpyState *state, TgHostOps *ops, PyObject *owners)
{
  return launch_alloc (state->host_ops_type, tg_host_ops_get_launch (ops), ops, owners);
}

static void
launch_dealloc (TgpyLaunch *self)
{
  PyTypeObject *type = Py_TYPE (self);
  freefunc free = PyType_GetSlot (type, Py_tp_free);

  Py_XDECREF (self->owners);
  free (self);
  Py_DECREF (type);
}

/* ------------------------------------------------------------------------ */
/* Properties                                                                */

#define GETTER(name, expr)                                                             \
  static PyObject *launch_get_##name (TgpyLaunch *self, void *closure)                 \
  {                                                                                    \
    const TgLaunch *launch = tgpy_launch_valid (self);                                 \
    return launch == NULL ? NULL : (expr);                                             \
  }

GETTER (device, PyLong_FromLong (tg_launch_get_device (launch)))
GETTER (stream, tgpy_stream_to_object (tg_launch_get_stream (launch)))
GETTER (policy, tgpy_enum_value (tgpy_state_of (self)->policy_enum,
                                 tg_launch_get_policy (launch)))
GETTER (is_capturing, PyBool_FromLong (tg_launch_is_capturing (launch)))
GETTER (capture_id, PyLong_FromUnsignedLongLong (tg_launch_get_capture_id (launch)))
GETTER (depth, PyLong_FromUnsignedLong (tg_launch_get_depth (launch)))
GETTER (record_pass, PyLong_FromUnsignedLong (tg_launch_get_record_pass (launch)))
GETTER (producer_name,
        PyUnicode_FromString (tg_producer_get_name (tg_launch_get_producer (launch))))

static PyObject *
launch_get_capture_graph (TgpyLaunch *self, void *closure)
{
  const TgLaunch *launch = tgpy_launch_valid (self);
  cudaGraph_t graph;

  if (launch == NULL)
    return NULL;
  if ((graph = tg_launch_get_capture_graph (launch)) == NULL)
    Py_RETURN_NONE;
  return PyLong_FromVoidPtr (graph);
}

static PyObject *
launch_get_stage_name (TgpyLaunch *self, void *closure)
{
  const TgLaunch *launch = tgpy_launch_valid (self);
  const char *name;

  if (launch == NULL)
    return NULL;
  if ((name = tg_launch_get_stage_name (launch)) == NULL)
    Py_RETURN_NONE;
  return PyUnicode_FromString (name);
}

static PyGetSetDef launch_getset[] = {
  { "device", (getter)launch_get_device, NULL, "The CUDA device the work runs on.",
    NULL },
  { "stream", (getter)launch_get_stream, NULL,
    "The stream to enqueue on, an int cudaStream_t; the resolved stream, the "
    "producer's own capture stream, or a condition's body stream; 0 for the "
    "legacy default stream.",
    NULL },
  { "policy", (getter)launch_get_policy, NULL, "The resolved Policy (an int).", NULL },
  { "is_capturing", (getter)launch_get_is_capturing, NULL,
    "Whether work enqueued now is captured, not run.", NULL },
  { "capture_id", (getter)launch_get_capture_id, NULL,
    "The id of the capture work is recorded into, or 0.", NULL },
  { "capture_graph", (getter)launch_get_capture_graph, NULL,
    "The cudaGraph_t work is captured into (an int), or None.", NULL },
  { "depth", (getter)launch_get_depth, NULL,
    "0 at top level, n inside n nested conditions or loops.", NULL },
  { "record_pass", (getter)launch_get_record_pass, NULL,
    "Under RECORD, 1 in the trial capture, 2 in the second pass into the caller's "
    "capture (only stage functions whose own work holds a condition, a loop, a "
    "switch or an allocation, and bodies of loops they decide, run there); 0 "
    "under EAGER and REPLAY.",
    NULL },
  { "stage_name", (getter)launch_get_stage_name, NULL, "The running stage's name.",
    NULL },
  { "producer_name", (getter)launch_get_producer_name, NULL, "The producer's name.",
    NULL },
  { NULL },
};

/* ------------------------------------------------------------------------ */
/* Bindings                                                                  */

/* The binding @name's address.  A declared binding is bound with at least
 * one byte, so a size of 0 says the stage did not declare it. */
static int
binding (TgpyLaunch *self, PyObject *name, void **ptr, gsize *size)
{
  const TgLaunch *launch = tgpy_launch_valid (self);
  const char *s;

  if (launch == NULL)
    return -1;
  if (tgpy_name (name, "name", FALSE, &s) < 0)
    return -1;
  *size = tg_launch_get_binding_size (launch, s);
  *ptr = *size == 0 ? NULL : tg_launch_get_binding (launch, s);
  if (*ptr == NULL)
    {
      PyErr_Format (PyExc_KeyError,
                    "stage '%s' did not declare binding '%s': declare it with "
                    "Producer.declare_binding()",
                    tg_launch_get_stage_name (launch), s);
      return -1;
    }
  return 0;
}

static PyObject *
launch_binding (TgpyLaunch *self, PyObject *name)
{
  PyObject *owner;
  void *ptr;
  gsize size;

  if (binding (self, name, &ptr, &size) < 0)
    return NULL;
  /* The object that was bound (a tensor), else its address. */
  owner = self->owners != NULL ? PyDict_GetItem (self->owners, name) : NULL;
  if (owner != NULL && owner != Py_None)
    {
      Py_INCREF (owner);
      return owner;
    }
  return PyLong_FromVoidPtr (ptr);
}

static PyObject *
launch_binding_ptr (TgpyLaunch *self, PyObject *name)
{
  void *ptr;
  gsize size;

  return binding (self, name, &ptr, &size) < 0 ? NULL : PyLong_FromVoidPtr (ptr);
}

static PyObject *
launch_binding_size (TgpyLaunch *self, PyObject *name)
{
  void *ptr;
  gsize size;

  return binding (self, name, &ptr, &size) < 0 ? NULL : PyLong_FromSize_t (size);
}

static PyObject *
launch_keep (TgpyLaunch *self, PyObject *obj)
{
  const TgLaunch *launch = tgpy_launch_valid (self);

  if (launch == NULL)
    return NULL;
  Py_INCREF (obj);
  tg_launch_keep (launch, obj, tgpy_release_object);
  Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------ */
/* Bodies: conditions, switches, loops inside a stage                        */

/* What a body trampoline is given: the callables (then/else, the cases, the
 * loop body) and the context of the stage that runs them, alive during the
 * native call that runs them. */
typedef struct
{
  PyObject *funcs; /* a tuple */
  TgpyLaunch *parent;
  /* LaunchContext: a body is never given host operations, even inside a
   * HOST stage (HostOps inherits if_, switch and while_). */
  PyObject *ctx_type;
} Bodies;

/* Calls @func with a context for @launch, made like @parent; FALSE with
 * the exception stashed when it raised. */
static gboolean
call_python (PyObject *func, PyObject *ctx_type, const TgLaunch *launch, TgHostOps *ops,
             PyObject *owners, GError **error)
{
  PyGILState_STATE gil = PyGILState_Ensure ();
  PyObject *runner = tgpy_state_of_type ((PyTypeObject *)ctx_type)->runner;
  PyObject *ctx = launch_alloc (ctx_type, launch, ops, owners);
  PyObject *result = NULL;
  gboolean ok;

  /* Held for the call: the stage may drop the producer's reference to
   * itself (set_stage_else, close), or set another runner. */
  Py_INCREF (func);
  Py_XINCREF (runner);
  if (ctx != NULL)
    result = runner != NULL ? PyObject_CallFunctionObjArgs (runner, func, ctx, NULL)
                            : PyObject_CallFunctionObjArgs (func, ctx, NULL);
  Py_XDECREF (runner);
  Py_DECREF (func);
  ok = result != NULL;

  if (ctx != NULL)
    tgpy_launch_invalidate (ctx);
  Py_XDECREF (ctx);
  Py_XDECREF (result);
  if (!ok)
    tgpy_exception_stash (error);
  PyGILState_Release (gil);
  return ok;
}

static gboolean
body_call (Bodies *b, Py_ssize_t i, const TgLaunch *launch, GError **error)
{
  return call_python (PyTuple_GetItem (b->funcs, i), b->ctx_type, launch, NULL,
                      b->parent->owners, error);
}

static gboolean
body_then (const TgLaunch *launch, gpointer data, GError **error)
{
  return body_call (data, 0, launch, error);
}

static gboolean
body_else (const TgLaunch *launch, gpointer data, GError **error)
{
  return body_call (data, 1, launch, error);
}

/* Every case of a switch: the case number comes from the launch. */
static gboolean
body_case (const TgLaunch *launch, gpointer data, GError **error)
{
  return body_call (data, tg_launch_get_case (launch), launch, error);
}

/* The tuple of the bodies @funcs, arguments named @names, each checked to
 * be callable (otherwise NULL when absent): a new reference, or NULL with
 * TypeError naming the argument. */
static PyObject *
bodies_tuple (Py_ssize_t n, PyObject *const *funcs, const char *const *names)
{
  PyObject *tuple;

  for (Py_ssize_t i = 0; i < n; i++)
    if (tgpy_callable (funcs[i], names[i], FALSE) < 0)
      return NULL;
  if ((tuple = PyTuple_New (n)) == NULL)
    return NULL;
  for (Py_ssize_t i = 0; i < n; i++)
    {
      Py_INCREF (funcs[i]);
      PyTuple_SetItem (tuple, i, funcs[i]);
    }
  return tuple;
}

/* Runs @run with the GIL released, bracketed for the bodies' exceptions. */
#define RUN_BODIES(self, ok, call)                                                     \
  G_STMT_START                                                                         \
  {                                                                                    \
    TgpyState *state_ = tgpy_state_of (self);                                          \
    GError *error_ = NULL;                                                             \
    TgpyCall bracket_;                                                                 \
    tgpy_call_begin (&bracket_);                                                       \
    Py_BEGIN_ALLOW_THREADS ok = (call);                                                \
    Py_END_ALLOW_THREADS if (tgpy_call_end (state_, &bracket_, ok, error_) < 0) ok     \
        = FALSE;                                                                       \
  }                                                                                    \
  G_STMT_END

static PyObject *
launch_if (TgpyLaunch *self, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "condition", "then", "otherwise", NULL };
  PyObject *cond = NULL, *then = NULL, *otherwise = Py_None;
  const TgLaunch *launch = tgpy_launch_valid (self);
  TgCondition condition;
  Bodies b = { NULL, self, tgpy_state_of (self)->launch_type };
  gboolean ok;

  if (launch == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "OO|O:if_", names, &cond, &then,
                                       &otherwise)
      || tgpy_condition (tgpy_state_of (self), cond, &condition) < 0)
    return NULL;
  if ((b.funcs = bodies_tuple (otherwise == Py_None ? 1 : 2,
                               (PyObject *const[]){ then, otherwise },
                               (const char *const[]){ "then", "otherwise" }))
      == NULL)
    return NULL;
  if (otherwise == Py_None)
    RUN_BODIES (self, ok, tg_launch_if (launch, condition, body_then, &b, &error_));
  else
    RUN_BODIES (
        self, ok,
        tg_launch_if_else (launch, condition, body_then, body_else, &b, &error_));
  Py_DECREF (b.funcs);
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *
launch_switch (TgpyLaunch *self, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "index", "cases", NULL };
  PyObject *index_obj = NULL, *cases = NULL;
  const TgLaunch *launch = tgpy_launch_valid (self);
  Bodies b = { NULL, self, tgpy_state_of (self)->launch_type };
  TgDeviceFunc *funcs;
  void *index;
  Py_ssize_t n;
  gboolean ok;

  if (launch == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "OO:switch", names, &index_obj,
                                       &cases)
      || tgpy_int32_array (tgpy_state_of (self), index_obj, "index", 1, &index) < 0
      || tgpy_callable_tuple (cases, "cases", &b.funcs) < 0)
    return NULL;
  /* No case is libtrackgen's refusal (n_cases). */
  n = PyTuple_Size (b.funcs);
  funcs = g_new (TgDeviceFunc, n);
  for (Py_ssize_t i = 0; i < n; i++)
    funcs[i] = body_case;
  RUN_BODIES (self, ok, tg_launch_switch (launch, index, (guint)n, funcs, &b, &error_));
  g_free (funcs);
  Py_DECREF (b.funcs);
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *
launch_while (TgpyLaunch *self, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "flag", "max_iters", "status", "body", NULL };
  PyObject *flag_obj = NULL, *max_iters_obj, *status_obj = NULL, *body = NULL;
  const TgLaunch *launch = tgpy_launch_valid (self);
  Bodies b = { NULL, self, tgpy_state_of (self)->launch_type };
  guint64 max_iters;
  void *flag, *status;
  gboolean ok;

  if (launch == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "OOOO:while_", names, &flag_obj,
                                       &max_iters_obj, &status_obj, &body)
      || tgpy_uint (max_iters_obj, "max_iters", G_MAXUINT, &max_iters) < 0
      || tgpy_int32_array (tgpy_state_of (self), flag_obj, "flag", 1, &flag) < 0
      || tgpy_int32_array (tgpy_state_of (self), status_obj, "status",
                           sizeof (TgLoopStatus) / sizeof (gint32), &status)
             < 0)
    return NULL;
  if ((b.funcs = bodies_tuple (1, &body, (const char *const[]){ "body" })) == NULL)
    return NULL;
  RUN_BODIES (
      self, ok,
      tg_launch_while (launch, flag, (guint)max_iters, status, body_then, &b, &error_));
  Py_DECREF (b.funcs);
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

static PyMethodDef launch_methods[] = {
  { "binding", (PyCFunction)launch_binding, METH_O,
    "binding($self, name, /)\n"
    "--\n"
    "\n"
    "The object bound under a name (tg_launch_get_binding()).\n"
    "\n"
    "Args:\n"
    "    name (str): A binding the stage declared.\n"
    "\n"
    "Returns:\n"
    "    Any: The object bound (a tensor, an array), or its address when an int\n"
    "    was bound." },
  { "binding_ptr", (PyCFunction)launch_binding_ptr, METH_O,
    "binding_ptr($self, name, /)\n"
    "--\n"
    "\n"
    "The device address bound under a name.\n"
    "\n"
    "Args:\n"
    "    name (str): A binding the stage declared.\n"
    "\n"
    "Returns:\n"
    "    int: The address." },
  { "binding_size", (PyCFunction)launch_binding_size, METH_O,
    "binding_size($self, name, /)\n"
    "--\n"
    "\n"
    "The size bound under a name.\n"
    "\n"
    "Args:\n"
    "    name (str): A binding the stage declared.\n"
    "\n"
    "Returns:\n"
    "    int: The bytes bound, at least what the stage declared." },
  { "keep", (PyCFunction)launch_keep, METH_O,
    "keep($self, obj, /)\n"
    "--\n"
    "\n"
    "Keeps an object alive as long as the graph holding this stage's work may\n"
    "run (tg_launch_keep()): until the own graph is captured again (REPLAY), the\n"
    "caller's graph is destroyed (RECORD), or the call returns (EAGER).\n"
    "\n"
    "Args:\n"
    "    obj (Any): The object, such as a temporary the work uses." },
  { "if_", (PyCFunction)(void (*) (void))launch_if, METH_VARARGS | METH_KEYWORDS,
    "if_($self, condition, then, otherwise=None)\n"
    "--\n"
    "\n"
    "Runs ``then(ctx)`` when a device flag is non-zero, else ``otherwise(ctx)``\n"
    "(tg_launch_if(), tg_launch_if_else()).\n"
    "\n"
    "An IF node under a capture, one readback eagerly.\n"
    "\n"
    "Args:\n"
    "    condition (Condition | ArrayLike): The condition, or an int32 device\n"
    "        flag.\n"
    "    then (Callable[[LaunchContext], Any]): The body run when it is\n"
    "        non-zero.\n"
    "    otherwise (Callable[[LaunchContext], Any] | None): The body run when it\n"
    "        is 0." },
  { "switch", (PyCFunction)(void (*) (void))launch_switch, METH_VARARGS | METH_KEYWORDS,
    "switch($self, index, cases)\n"
    "--\n"
    "\n"
    "Runs ``cases[i](ctx)``, ``i`` the int32 at *index* on the device; nothing\n"
    "when ``i`` is out of range (tg_launch_switch()).\n"
    "\n"
    "Args:\n"
    "    index (ArrayLike): An int32 device array; its first element decides.\n"
    "    cases (Sequence[Callable[[LaunchContext], Any]]): The bodies, at least\n"
    "        one.\n"
    "\n"
    "Raises:\n"
    "    ArgumentError: No case (libtrackgen's refusal, naming n_cases)." },
  { "while_", (PyCFunction)(void (*) (void))launch_while, METH_VARARGS | METH_KEYWORDS,
    "while_($self, flag, max_iters, status, body)\n"
    "--\n"
    "\n"
    "Runs ``body(ctx)`` while a device flag is non-zero, at most *max_iters*\n"
    "times (tg_launch_while()).\n"
    "\n"
    "Args:\n"
    "    flag (ArrayLike): An int32 device array the body updates.\n"
    "    max_iters (int): The most iterations of one run, 1 to ``2**31 - 1``.\n"
    "    status (ArrayLike): Two int32 that each run fills with the iterations\n"
    "        and the :class:`~track_gen.exec.LoopEnd`.\n"
    "    body (Callable[[LaunchContext], Any]): The body.\n"
    "\n"
    "Raises:\n"
    "    ArgumentError: *max_iters* out of range (libtrackgen's refusal).\n"
    "    OverflowError: *max_iters* negative or past a C unsigned int." },
  { NULL },
};

/* ------------------------------------------------------------------------ */
/* Stages written in Python                                                   */

static PyObject *
module_state_type (PyObject *module, gboolean host)
{
  TgpyState *state = PyModule_GetState (module);

  return host ? state->host_ops_type : state->launch_type;
}

gboolean
tgpy_stage_device (const TgLaunch *launch, gpointer data, GError **error)
{
  TgpyStage *stage = data;

  return call_python (stage->func, module_state_type (stage->module, FALSE), launch,
                      NULL, stage->owners, error);
}

gboolean
tgpy_stage_else (const TgLaunch *launch, gpointer data, GError **error)
{
  TgpyStage *stage = data;
  PyGILState_STATE gil = PyGILState_Ensure ();
  /* Read under the GIL: set_stage_else() from another thread swaps it. */
  PyObject *func = stage->else_func;
  gboolean ok = TRUE;

  if (func != NULL)
    {
      Py_INCREF (func);
      ok = call_python (func, module_state_type (stage->module, FALSE), launch, NULL,
                        stage->owners, error);
      Py_DECREF (func);
    }
  PyGILState_Release (gil);
  return ok;
}

gboolean
tgpy_stage_host (TgHostOps *ops, gpointer data, GError **error)
{
  TgpyStage *stage = data;

  return call_python (stage->func, module_state_type (stage->module, TRUE),
                      tg_host_ops_get_launch (ops), ops, stage->owners, error);
}

static void
stage_free_with_gil (TgpyStage *stage)
{
  Py_XDECREF (stage->func);
  Py_XDECREF (stage->else_func);
  Py_XDECREF (stage->owners);
  Py_XDECREF (stage->module);
}

void
tgpy_stage_free (gpointer data)
{
  TgpyStage *stage = data;

  /* Called when the producer is freed: maybe on TrackGen's reaper thread. */
  if (!tgpy_is_finalizing ())
    {
      PyGILState_STATE gil = PyGILState_Ensure ();
      stage_free_with_gil (stage);
      PyGILState_Release (gil);
    }
  g_free (stage);
}

/* ------------------------------------------------------------------------ */
/* The types                                                                 */

static PyType_Slot launch_slots[] = {
  { Py_tp_doc,
    "What a stage receives during a call (TgLaunch): its device, stream, "
    "policy, capture and bindings, and the conditions, switches and loops it "
    "may run around parts of its work.  Valid only during the call." },
  { Py_tp_dealloc, launch_dealloc },
  { Py_tp_getset, launch_getset },
  { Py_tp_methods, launch_methods },
  { 0, NULL },
};

static PyType_Spec launch_spec = {
  .name = "track_gen._native.LaunchContext",
  .basicsize = sizeof (TgpyLaunch),
  /* HostOps derives from it. */
  .flags = TGPY_TPFLAGS | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
  .slots = launch_slots,
};

int
tgpy_launch_init_types (PyObject *module, TgpyState *state)
{
  state->launch_type = PyType_FromModuleAndSpec (module, &launch_spec, NULL);
  if (state->launch_type == NULL)
    return -1;
  if (PyModule_AddObjectRef (module, "LaunchContext", state->launch_type) < 0)
    return -1;
  return 0;
}
