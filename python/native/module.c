/* SPDX-License-Identifier: Apache-2.0 */
/* module.c: track_gen._native, the one native module of the Python package,
 * over the three archives.  C on the stable ABI (one build for every CPython
 * >= 3.10), with multi-phase initialization and per-module state, as
 * CPython's Modules/xxlimited.c does: the types and the exception classes
 * live in the module's state, never in C globals. */
#include "native.h"

static TgpyState *
state_of_module (PyObject *module)
{
  return PyModule_GetState (module);
}

/* The classes of track_gen/_errors.py, which imports nothing of ours. */
static int
load_errors (TgpyState *state)
{
  static const struct
  {
    const char *name;
    size_t offset;
  } classes[] = {
    { "TrackGenError", offsetof (TgpyState, error) },
    { "CaptureError", offsetof (TgpyState, capture_error) },
    { "NotCapturableError", offsetof (TgpyState, not_capturable_error) },
    { "LegacyPluginStreamError", offsetof (TgpyState, legacy_error) },
    { "CudaError", offsetof (TgpyState, cuda_error) },
    { "ArgumentError", offsetof (TgpyState, argument_error) },
    { "StateError", offsetof (TgpyState, state_error) },
    { "StageError", offsetof (TgpyState, stage_error) },
    { "RebindAfterCaptureWarning", offsetof (TgpyState, rebind_warning) },
  };
  PyObject *errors = PyImport_ImportModule ("track_gen._errors");

  /* The domains are registered with their fields before any error of theirs
   * is made: errors.c remakes a raised TrackGenError's GError from its
   * domain's name, which must not find the domain unregistered. */
  tg_capture_error_quark ();
  tg_cuda_error_quark ();
  tg_argument_error_quark ();
  tg_state_error_quark ();
  tgpy_python_error_quark ();
  if (errors == NULL)
    return -1;
  for (size_t i = 0; i < G_N_ELEMENTS (classes); i++)
    {
      PyObject **slot = (PyObject **)((char *)state + classes[i].offset);
      if ((*slot = PyObject_GetAttrString (errors, classes[i].name)) == NULL)
        {
          Py_DECREF (errors);
          return -1;
        }
    }
  Py_DECREF (errors);
  return 0;
}

static PyObject *
native_at_exit (PyObject *module, PyObject *unused)
{
  tgpy_finalizing ();
  Py_RETURN_NONE;
}

/* Once the interpreter finalizes, releases from TrackGen's reaper thread
 * must not take the GIL: an atexit hook says when. */
static int
register_at_exit (PyObject *module)
{
  PyObject *atexit = PyImport_ImportModule ("atexit");
  PyObject *hook = PyObject_GetAttrString (module, "_at_exit");
  PyObject *r = NULL;

  if (atexit != NULL && hook != NULL)
    r = PyObject_CallMethod (atexit, "register", "O", hook);
  Py_XDECREF (atexit);
  Py_XDECREF (hook);
  Py_XDECREF (r);
  return r != NULL ? 0 : -1;
}

static PyObject *
native_set_stage_runner (PyObject *module, PyObject *runner)
{
  TgpyState *state = state_of_module (module);
  PyObject *old;

  if (tgpy_callable (runner, "runner", TRUE) < 0)
    return NULL;
  /* The old runner let go last: its release may run a stage. */
  old = state->runner;
  state->runner = runner != Py_None ? runner : NULL;
  Py_XINCREF (state->runner);
  Py_XDECREF (old);
  Py_RETURN_NONE;
}

static PyObject *
native_set_checks (PyObject *module, PyObject *on)
{
  GError *error = NULL;
  gboolean truth;

  if (tgpy_bool (on, "on", &truth) < 0)
    return NULL;
  if (!tg_set_checks (truth, &error))
    return tgpy_raise (state_of_module (module), error, NULL);
  Py_RETURN_NONE;
}

static PyObject *
native_get_checks (PyObject *module, PyObject *unused)
{
  return PyBool_FromLong (tg_get_checks ());
}

static PyMethodDef native_methods[] = {
  { "set_checks", native_set_checks, METH_O,
    "set_checks(on, /)\n--\n\ntg_set_checks(): checked mode on or off." },
  { "get_checks", native_get_checks, METH_NOARGS,
    "get_checks()\n--\n\ntg_get_checks(): whether checked mode is on." },
  { "_at_exit", native_at_exit, METH_NOARGS,
    "_at_exit()\n--\n\nTells the module that the interpreter is finalizing." },
  { "_set_stage_runner", native_set_stage_runner, METH_O,
    "_set_stage_runner(runner, /)\n--\n\nMakes ``runner(func, ctx)`` call every "
    "stage, body and host stage written in Python; None calls ``func(ctx)``." },
  { NULL, NULL, 0, NULL },
};

static int
native_exec (PyObject *module)
{
  TgpyState *state = state_of_module (module);
  PyObject *legacy;
  int r;

  if (load_errors (state) < 0 || tgpy_enums_init (module, state) < 0
      || tgpy_producer_init_type (module, state) < 0
      || tgpy_launch_init_types (module, state) < 0
      || tgpy_host_ops_init_type (module, state) < 0
      || tgpy_condition_init_type (module, state) < 0
      || tgpy_seeds_init_type (module, state) < 0 || tgpy_seed_math_init (module) < 0
      || tgpy_interop_init (module, state) < 0 || tgpy_tracks_init (module, state) < 0
      || tgpy_stream_init (module) < 0 || tgpy_functions_init (module) < 0
      || tgpy_errors_init (module) < 0 || register_at_exit (module) < 0)
    return -1;
  /* version.h comes from the configure run that built the archives too. */
  if (PyModule_AddStringConstant (module, "__version__", TG_VERSION_STRING) < 0
      || PyModule_AddObjectRef (module, "UNCONDITIONAL", state->unconditional) < 0)
    return -1;
  /* CUDA's name for the legacy stream, beside NULL (track_gen.interop.torch). */
  legacy = PyLong_FromVoidPtr (cudaStreamLegacy);
  r = legacy != NULL ? PyModule_AddObjectRef (module, "_STREAM_LEGACY", legacy) : -1;
  Py_XDECREF (legacy);
  return r;
}

#define STATE_OBJECTS(X)                                                               \
  X (error)                                                                            \
  X (capture_error)                                                                    \
  X (not_capturable_error)                                                             \
  X (legacy_error)                                                                     \
  X (cuda_error)                                                                       \
  X (argument_error)                                                                   \
  X (state_error)                                                                      \
  X (stage_error)                                                                      \
  X (rebind_warning)                                                                   \
  X (producer_type)                                                                    \
  X (launch_type)                                                                      \
  X (host_ops_type)                                                                    \
  X (condition_type)                                                                   \
  X (seed_state_type)                                                                  \
  X (scope_type)                                                                       \
  X (unconditional)                                                                    \
  X (policy_enum)                                                                      \
  X (stage_flags_enum)                                                                 \
  X (capture_state_enum)                                                               \
  X (loop_end_enum)                                                                    \
  X (rebind_outcome_enum)                                                              \
  X (capture_mode_enum)                                                                \
  X (capture_error_code)                                                               \
  X (argument_error_code)                                                              \
  X (state_error_code)                                                                 \
  X (runner)                                                                           \
  X (torch)                                                                            \
  X (torch_stream)

static int
native_traverse (PyObject *module, visitproc visit, void *arg)
{
  TgpyState *state = state_of_module (module);

#define VISIT(field) Py_VISIT (state->field);
  STATE_OBJECTS (VISIT)
#undef VISIT
  return 0;
}

static int
native_clear (PyObject *module)
{
  TgpyState *state = state_of_module (module);

#define CLEAR(field) Py_CLEAR (state->field);
  STATE_OBJECTS (CLEAR)
#undef CLEAR
  return 0;
}

static void
native_free (void *module)
{
  native_clear (module);
}

static PyModuleDef_Slot native_slots[] = {
  { Py_mod_exec, native_exec },
  { 0, NULL },
};

PyDoc_STRVAR (native_doc, "libtrackgen's C API for the track_gen package (internal): "
                          "track_gen.exec, track_gen.seeds and track_gen.interop "
                          "give it its public shape.");

static struct PyModuleDef native_module = {
  PyModuleDef_HEAD_INIT,         .m_name = "track_gen._native", .m_doc = native_doc,
  .m_size = sizeof (TgpyState),  .m_methods = native_methods,   .m_slots = native_slots,
  .m_traverse = native_traverse, .m_clear = native_clear,       .m_free = native_free,
};

/* The only symbol the shared object exports (python/native/native.map). */
PyMODINIT_FUNC PyInit__native (void);

PyMODINIT_FUNC
PyInit__native (void)
{
  return PyModuleDef_Init (&native_module);
}
