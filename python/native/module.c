/* module.c: track_gen._native, the one native module of the Python package,
 * over the three archives.  C on the stable ABI (one build for every CPython
 * >= 3.10), with multi-phase initialization and per-module state, as
 * CPython's Modules/xxlimited.c does, so that nothing lives in C globals and
 * the module can be loaded more than once (subinterpreters, reloads). */
#define Py_LIMITED_API 0x030A0000
#include <Python.h>

#include <trackgen/trackgen.h>

/* What one loaded instance of the module owns. */
typedef struct
{
  /* The string _libtrackgen_version() returns, made once by the archives. */
  PyObject *libtrackgen_version;
} NativeState;

static NativeState *
native_state (PyObject *module)
{
  return PyModule_GetState (module);
}

PyDoc_STRVAR (libtrackgen_version_doc,
              "_libtrackgen_version($module, /)\n--\n\n"
              "The name libtrackgen-exec.a gives to the AUTO policy (\"auto\").\n\n"
              "libtrackgen has no run-time version call yet: this one proves that\n"
              "the archives are linked into the module and answer.");

static PyObject *
native_libtrackgen_version (PyObject *module, PyObject *unused)
{
  PyObject *version = native_state (module)->libtrackgen_version;

  Py_INCREF (version);
  return version;
}

static PyMethodDef native_methods[] = {
  { "_libtrackgen_version", native_libtrackgen_version, METH_NOARGS,
    libtrackgen_version_doc },
  { NULL, NULL, 0, NULL },
};

static int
native_exec (PyObject *module)
{
  NativeState *state = native_state (module);

  state->libtrackgen_version
      = PyUnicode_FromString (tg_policy_to_string (TG_POLICY_AUTO));
  if (state->libtrackgen_version == NULL)
    return -1;
  /* version.h comes from the configure run that built the archives too. */
  return PyModule_AddStringConstant (module, "__version__", TG_VERSION_STRING);
}

static int
native_traverse (PyObject *module, visitproc visit, void *arg)
{
  NativeState *state = native_state (module);

  Py_VISIT (state->libtrackgen_version);
  return 0;
}

static int
native_clear (PyObject *module)
{
  NativeState *state = native_state (module);

  Py_CLEAR (state->libtrackgen_version);
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

PyDoc_STRVAR (native_doc, "libtrackgen's C API for the track_gen package (internal).");

static struct PyModuleDef native_module = {
  .m_base = PyModuleDef_HEAD_INIT,
  .m_name = "track_gen._native",
  .m_doc = native_doc,
  .m_size = sizeof (NativeState),
  .m_methods = native_methods,
  .m_slots = native_slots,
  .m_traverse = native_traverse,
  .m_clear = native_clear,
  .m_free = native_free,
};

/* The only symbol the shared object exports (python/native/native.map). */
PyMODINIT_FUNC PyInit__native (void);

PyMODINIT_FUNC
PyInit__native (void)
{
  return PyModuleDef_Init (&native_module);
}
