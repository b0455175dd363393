/* SPDX-License-Identifier: Apache-2.0 */
/* errors.c: GErrors as Python exceptions, and Python exceptions raised in
 * callbacks as GErrors.  The classes live in track_gen/_errors.py; each
 * instance carries the GError's domain (its quark's name), code, message,
 * and the producer, stage and binding fields libtrackgen set. */
#include "native.h"

#include <stdarg.h>

GQuark
tgpy_python_error_quark (void)
{
  /* Once per process, under the GIL: every caller holds it. */
  static GQuark q;

  /* With fields, so that libtrackgen names the producer and the stage of a
   * Python stage's error as it does for its own. */
  if (q == 0)
    q = tg_error_domain_register ("tg-python-error-quark");
  return q;
}

/* The stash of the native call running libtrackgen on this thread. */
static _Thread_local PyObject *stash;

void
tgpy_call_begin (TgpyCall *call)
{
  call->outer = stash;
  stash = NULL;
}

/* The exception raised now, normalized, with its traceback (new reference). */
static PyObject *
fetch (void)
{
  PyObject *type, *value, *traceback;

  PyErr_Fetch (&type, &value, &traceback);
  PyErr_NormalizeException (&type, &value, &traceback);
  if (traceback != NULL)
    PyException_SetTraceback (value, traceback);
  Py_XDECREF (type);
  Py_XDECREF (traceback);
  return value;
}

/* An int attribute of @obj, or @fallback. */
static long
int_attr (PyObject *obj, const char *name, long fallback)
{
  PyObject *v = PyObject_GetAttrString (obj, name);
  long n = fallback;

  if (v != NULL && PyLong_Check (v))
    n = PyLong_AsLong (v);
  Py_XDECREF (v);
  PyErr_Clear ();
  return n;
}

void
tgpy_exception_stash (GError **error)
{
  PyObject *exc = fetch ();
  PyObject *text = exc != NULL ? PyObject_Str (exc) : NULL;
  PyObject *domain = exc != NULL ? PyObject_GetAttrString (exc, "domain") : NULL;
  PyObject *type_name
      = exc != NULL ? PyObject_GetAttrString ((PyObject *)Py_TYPE (exc), "__name__")
                    : NULL;
  const char *message = text != NULL ? PyUnicode_AsUTF8AndSize (text, NULL) : NULL;
  const char *name
      = type_name != NULL ? PyUnicode_AsUTF8AndSize (type_name, NULL) : NULL;
  GQuark quark = tgpy_python_error_quark ();
  gint code = 0;

  PyErr_Clear ();
  /* TrackGen's own error, raised through a nested call: keep what it is. */
  if (domain != NULL && PyUnicode_Check (domain))
    {
      quark = g_quark_from_string (PyUnicode_AsUTF8AndSize (domain, NULL));
      code = (gint)int_attr (exc, "code", 0);
    }
  PyErr_Clear ();
  if (error != NULL && *error == NULL)
    {
      if (quark == tgpy_python_error_quark ())
        *error = g_error_new (quark, code, "%s: %s", name != NULL ? name : "exception",
                              message != NULL ? message : "");
      else
        *error = g_error_new_literal (quark, code, message != NULL ? message : "");
    }
  /* The first exception of a call is its cause; later ones are dropped. */
  if (stash == NULL)
    stash = exc;
  else
    Py_XDECREF (exc);
  Py_XDECREF (text);
  Py_XDECREF (type_name);
  Py_XDECREF (domain);
}

/* The class for @error's domain and code. */
static PyObject *
error_class (TgpyState *state, const GError *error)
{
  if (error->domain == TG_CAPTURE_ERROR)
    switch (error->code)
      {
      case TG_CAPTURE_ERROR_NOT_CAPTURABLE:
      case TG_CAPTURE_ERROR_ESCAPED:
        return state->not_capturable_error;
      case TG_CAPTURE_ERROR_LEGACY_PLUGIN_STREAM:
        return state->legacy_error;
      default:
        return state->capture_error;
      }
  if (error->domain == TG_CUDA_ERROR)
    return state->cuda_error;
  if (error->domain == TG_ARGUMENT_ERROR)
    return state->argument_error;
  if (error->domain == TG_STATE_ERROR)
    return state->state_error;
  if (error->domain == tgpy_python_error_quark ())
    return state->stage_error;
  return state->error;
}

/* libtrackgen's messages name its C API; a Python caller reads the names
 * it calls instead.  Longer names first: "TG_POLICY_" ends the list. */
static const struct
{
  const char *c, *python;
} python_names[] = {
  { "tg_producer_declare_binding()", "producer.declare_binding()" },
  { "tg_producer_bind()", "producer.bind()" },
  { "tg_host_ops_enqueue()", "ops.enqueue()" },
  { "tg_launch_get_stream()", "ctx.stream" },
  { "tg_seed_state_snapshot()", "SeedState.snapshot()" },
  { "tg_capture_scope_begin()", "track_gen.interop.torch.registered()" },
  { "TG_STAGE_CAPTURE_SAFE", "capture_safe=True" },
  { "stream: TG_STREAM_AUTO", "stream: None" },
  { "TG_STREAM_AUTO", "stream=None" },
  { "TG_POLICY_", "Policy." },
};

/* @message with the C API's names replaced by Python's (g_free it). */
static char *
python_message (const char *message)
{
  GString *s = g_string_new (message);

  for (gsize i = 0; i < G_N_ELEMENTS (python_names); i++)
    g_string_replace (s, python_names[i].c, python_names[i].python, 0);
  return g_string_free (s, FALSE);
}

/* @error's code: a member of its domain's code enum (an int for CUDA's
 * codes and other domains). */
static PyObject *
error_code (TgpyState *state, const GError *error)
{
  PyObject *cls = error->domain == TG_CAPTURE_ERROR    ? state->capture_error_code
                  : error->domain == TG_ARGUMENT_ERROR ? state->argument_error_code
                  : error->domain == TG_STATE_ERROR    ? state->state_error_code
                                                       : NULL;

  return cls != NULL ? tgpy_enum_value (cls, error->code) : PyLong_FromLong (error->code);
}

/* The TrackGen exception for @error (consumed): a new reference, or NULL
 * with the exception set. */
static PyObject *
exception_new (TgpyState *state, GError *error)
{
  PyObject *code, *exc;
  char *message;

  code = error_code (state, error);
  message = python_message (error->message);
  /* The fields as libtrackgen set them: never parsed from the message. */
  exc = code == NULL ? NULL
                     : PyObject_CallFunction (error_class (state, error), "ssOzzz", message,
                                              g_quark_to_string (error->domain), code,
                                              tg_error_get_producer (error),
                                              tg_error_get_stage (error),
                                              tg_error_get_binding (error));

  g_free (message);
  Py_XDECREF (code);
  g_error_free (error);
  return exc;
}

PyObject *
tgpy_raise (TgpyState *state, GError *error, PyObject *cause)
{
  PyObject *exc;

  /* A call libtrackgen refused as misuse (a critical, no GError): a bug of
   * this module's checks, raised rather than crashed on. */
  if (error == NULL)
    error = g_error_new_literal (TG_STATE_ERROR, TG_STATE_ERROR_FAILED,
                                 "libtrackgen refused the call as a misuse (see the "
                                 "critical it logged): track_gen should have refused "
                                 "it first; please report this");
  exc = exception_new (state, error);
  if (exc != NULL)
    {
      if (cause != NULL)
        PyException_SetCause (exc, cause); /* steals it */
      PyErr_SetObject ((PyObject *)Py_TYPE (exc), exc);
      Py_DECREF (exc);
    }
  else
    Py_XDECREF (cause);
  return NULL;
}

int
tgpy_call_end (TgpyState *state, TgpyCall *call, gboolean ok, GError *error)
{
  PyObject *raised = stash;

  stash = call->outer;
  if (!ok)
    {
      tgpy_raise (state, error, raised);
      return -1;
    }
  g_clear_error (&error);
  if (raised == NULL)
    return 0;
  /* The call succeeded, but a callback raised (a warning made an error). */
  PyErr_SetObject ((PyObject *)Py_TYPE (raised), raised);
  Py_DECREF (raised);
  return -1;
}

void
tgpy_error_about (TgpyState *state, const char *producer, const char *binding)
{
  PyObject *type, *exc, *traceback;
  const struct
  {
    const char *field, *value;
  } fields[] = { { "producer", producer }, { "binding", binding } };

  PyErr_Fetch (&type, &exc, &traceback);
  PyErr_NormalizeException (&type, &exc, &traceback);
  if (exc != NULL && PyObject_IsInstance (exc, state->error) == 1)
    for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
      {
        PyObject *old = PyObject_GetAttrString (exc, fields[i].field);
        PyObject *value = old == Py_None ? PyUnicode_FromString (fields[i].value) : NULL;

        if (value != NULL)
          PyObject_SetAttrString (exc, fields[i].field, value);
        Py_XDECREF (value);
        Py_XDECREF (old);
      }
  PyErr_Clear ();
  PyErr_Restore (type, exc, traceback);
}

PyObject *
tgpy_argument_error (PyObject *type, const char *what, const char *format, ...)
{
  va_list args;
  char *message;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  PyErr_Format (type, "%s: %s", what, message);
  g_free (message);
  return NULL;
}

/* _error(code, message, producer=None, stage=None, binding=None): the
 * exception Python code of the package raises, made as the module makes
 * libtrackgen's: its class, domain and code from @code (a member of
 * CaptureErrorCode, ArgumentErrorCode or StateErrorCode; a plain int is a
 * CUDA error's code), so no domain or class is chosen in Python. */
static PyObject *
native_error (PyObject *module, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "code", "message", "producer", "stage", "binding", NULL };
  TgpyState *state = PyModule_GetState (module);
  const char *message, *producer = NULL, *stage = NULL, *binding = NULL;
  PyObject *code;
  GQuark domain;
  GError *error;
  long value;

  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "Os|zzz:_error", names, &code,
                                    &message, &producer, &stage, &binding))
    return NULL;
  if (PyObject_TypeCheck (code, (PyTypeObject *)state->capture_error_code))
    domain = TG_CAPTURE_ERROR;
  else if (PyObject_TypeCheck (code, (PyTypeObject *)state->argument_error_code))
    domain = TG_ARGUMENT_ERROR;
  else if (PyObject_TypeCheck (code, (PyTypeObject *)state->state_error_code))
    domain = TG_STATE_ERROR;
  else if (PyLong_CheckExact (code))
    domain = TG_CUDA_ERROR;
  else
    return PyErr_Format (PyExc_TypeError,
                         "code: a CaptureErrorCode, ArgumentErrorCode or StateErrorCode "
                         "member, or an int (a CUDA error's code), not %R",
                         (PyObject *)Py_TYPE (code));
  if ((value = PyLong_AsLong (code)) == -1 && PyErr_Occurred ())
    return NULL;
  error = g_error_new_literal (domain, (gint)value, message);
  tg_error_set_fields (error, producer, stage, binding);
  return exception_new (state, error);
}

static PyMethodDef error_functions[] = {
  { "_error", (PyCFunction)(void (*) (void))native_error, METH_VARARGS | METH_KEYWORDS,
    "_error(code, message, producer=None, stage=None, binding=None)\n--\n\n"
    "The TrackGenError subclass instance for *code* (a member of CaptureErrorCode, "
    "ArgumentErrorCode or StateErrorCode, or an int for CudaError), with its domain, "
    "code and fields set as libtrackgen's errors have them." },
  { NULL },
};

int
tgpy_errors_init (PyObject *module)
{
  return PyModule_AddFunctions (module, error_functions);
}
