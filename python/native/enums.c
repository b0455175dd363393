/* SPDX-License-Identifier: Apache-2.0 */
/* enums.c: the C headers' enums as Python enum classes (IntEnum, IntFlag for
 * the stage flags), built once from the headers' values: track_gen.exec
 * exports them, and nothing in Python retypes a value. */
#include "native.h"

typedef struct
{
  const char *name;
  long value;
} Member;

#define MEMBER(prefix, name) { #name, prefix##name }

static const Member policy[] = {
  MEMBER (TG_POLICY_, AUTO),
  MEMBER (TG_POLICY_, EAGER),
  MEMBER (TG_POLICY_, REPLAY),
  MEMBER (TG_POLICY_, RECORD),
};

static const Member stage_flags[] = {
  MEMBER (TG_STAGE_, NONE),
  MEMBER (TG_STAGE_, CAPTURE_SAFE),
  MEMBER (TG_STAGE_, LEGACY_STREAM),
};

static const Member capture_state[] = {
  MEMBER (TG_CAPTURE_, NONE),
  MEMBER (TG_CAPTURE_, ACTIVE),
  MEMBER (TG_CAPTURE_, INVALIDATED),
  MEMBER (TG_CAPTURE_, IMPLICIT),
};

static const Member loop_end[] = {
  MEMBER (TG_LOOP_END_, NONE),
  MEMBER (TG_LOOP_END_, CONVERGED),
  MEMBER (TG_LOOP_END_, CAPPED),
  MEMBER (TG_LOOP_END_, SKIPPED),
};

static const Member rebind_outcome[] = {
  MEMBER (TG_REBIND_, NONE),
  MEMBER (TG_REBIND_, UPDATED),
  MEMBER (TG_REBIND_, RECAPTURED),
};

/* CUDA's own enum, as a capture scope is told it. */
static const Member capture_mode[] = {
  { "GLOBAL", cudaStreamCaptureModeGlobal },
  { "THREAD_LOCAL", cudaStreamCaptureModeThreadLocal },
  { "RELAXED", cudaStreamCaptureModeRelaxed },
};

static const Member capture_error[] = {
  MEMBER (TG_CAPTURE_ERROR_, FAILED),
  MEMBER (TG_CAPTURE_ERROR_, NOT_CAPTURABLE),
  MEMBER (TG_CAPTURE_ERROR_, LEGACY_PLUGIN_STREAM),
  MEMBER (TG_CAPTURE_ERROR_, ESCAPED),
};

static const Member argument_error[] = {
  MEMBER (TG_ARGUMENT_ERROR_, INVALID),
  MEMBER (TG_ARGUMENT_ERROR_, OUT_OF_RANGE),
  MEMBER (TG_ARGUMENT_ERROR_, DUPLICATE),
  MEMBER (TG_ARGUMENT_ERROR_, SIZE_MISMATCH),
  MEMBER (TG_ARGUMENT_ERROR_, DEVICE_MISMATCH),
  MEMBER (TG_ARGUMENT_ERROR_, EMPTY),
  MEMBER (TG_ARGUMENT_ERROR_, VERSION),
  MEMBER (TG_ARGUMENT_ERROR_, FAILED),
};

static const Member state_error[] = {
  MEMBER (TG_STATE_ERROR_, POLICY),
  MEMBER (TG_STATE_ERROR_, UNBOUND),
  MEMBER (TG_STATE_ERROR_, BUSY),
  MEMBER (TG_STATE_ERROR_, THREAD),
  MEMBER (TG_STATE_ERROR_, NOT_CAPTURING),
  MEMBER (TG_STATE_ERROR_, NESTING),
  MEMBER (TG_STATE_ERROR_, OVERLAP),
  MEMBER (TG_STATE_ERROR_, FAILED),
  MEMBER (TG_STATE_ERROR_, SEALED),
};

/* Exported by @module (the modules' docs list them there). */
#define ENUM_IN(module, field, kind, name, members, doc)                               \
  { offsetof (TgpyState, field), kind, name, module, members, G_N_ELEMENTS (members),   \
    doc }
#define ENUM(field, kind, name, members, doc)                                          \
  ENUM_IN ("track_gen.exec", field, kind, name, members, doc)

static const struct
{
  size_t offset;
  const char *kind; /* the enum module's class to derive from */
  const char *name;
  const char *module; /* the one that exports it */
  const Member *members;
  gsize n_members;
  const char *doc;
} enums[] = {
  ENUM (policy_enum, "IntEnum", "Policy", policy,
        "How a producer call reaches the GPU (TgPolicy).\n\n"
        "AUTO: RECORD under a capture, else REPLAY when every device stage is "
        "capture-safe, else EAGER.  EAGER: launch every stage on the stream now; "
        "HOST stages run inline.  REPLAY: capture the device stages once into "
        "graphs of the producer's own and launch those; HOST stages run between "
        "them.  RECORD: record every stage into the capture in progress on the "
        "stream."),
  ENUM (stage_flags_enum, "IntFlag", "StageFlags", stage_flags,
        "Declarations a stage makes up front (TgStageFlags).\n\n"
        "NONE: not capture-safe (AUTO runs the producer eagerly).  CAPTURE_SAFE: "
        "the stage only enqueues work on ``ctx.stream``.  LEGACY_STREAM: the stage "
        "launches only on the legacy default stream (a plugin)."),
  ENUM (capture_state_enum, "IntEnum", "CaptureState", capture_state,
        "A stream's capture state as TrackGen sees it (TgCaptureState).\n\n"
        "IMPLICIT: the legacy stream while a blocking stream captures."),
  ENUM (loop_end_enum, "IntEnum", "LoopEnd", loop_end,
        "Why a bounded loop ended: the second int32 of its status (TgLoopEnd)."),
  ENUM (rebind_outcome_enum, "IntEnum", "RebindOutcome", rebind_outcome,
        "How the last rebind of an own graph was absorbed (TgRebindOutcome)."),
  ENUM_IN ("track_gen.interop", capture_mode_enum, "IntEnum", "CaptureMode",
           capture_mode,
           "``cudaStreamCaptureMode`` values, as a capture scope is told them (CUDA's "
           "enum).\n\nThe members' names are torch.cuda.graph's "
           "``capture_error_mode`` names in upper case."),
  ENUM (capture_error_code, "IntEnum", "CaptureErrorCode", capture_error,
        "The codes of CaptureError and its subclasses (TgCaptureError)."),
  ENUM (argument_error_code, "IntEnum", "ArgumentErrorCode", argument_error,
        "The codes of ArgumentError (TgArgumentError)."),
  ENUM (state_error_code, "IntEnum", "StateErrorCode", state_error,
        "The codes of StateError (TgStateError)."),
};

/* enum.<kind>(name, [(member, value), ...], module=module). */
static PyObject *
make_enum (PyObject *enum_module, const char *kind, const char *name,
           const char *module, const Member *members, gsize n, const char *doc)
{
  PyObject *base = PyObject_GetAttrString (enum_module, kind);
  PyObject *list = PyList_New ((Py_ssize_t)n), *args = NULL, *kwargs = NULL;
  PyObject *cls = NULL, *doc_obj = NULL;

  for (gsize i = 0; list != NULL && i < n; i++)
    {
      PyObject *pair = Py_BuildValue ("(sl)", members[i].name, members[i].value);
      if (pair == NULL)
        Py_CLEAR (list);
      else
        PyList_SetItem (list, (Py_ssize_t)i, pair);
    }
  if (base != NULL && list != NULL)
    {
      args = Py_BuildValue ("(sO)", name, list);
      kwargs = Py_BuildValue ("{s:s,s:s}", "module", module, "qualname", name);
    }
  if (args != NULL && kwargs != NULL)
    cls = PyObject_Call (base, args, kwargs);
  if (cls != NULL
      && ((doc_obj = PyUnicode_FromString (doc)) == NULL
          || PyObject_SetAttrString (cls, "__doc__", doc_obj) < 0))
    Py_CLEAR (cls);
  Py_XDECREF (doc_obj);
  Py_XDECREF (args);
  Py_XDECREF (kwargs);
  Py_XDECREF (list);
  Py_XDECREF (base);
  return cls;
}

int
tgpy_enums_init (PyObject *module, TgpyState *state)
{
  PyObject *enum_module = PyImport_ImportModule ("enum");

  if (enum_module == NULL)
    return -1;
  for (gsize i = 0; i < G_N_ELEMENTS (enums); i++)
    {
      PyObject **slot = (PyObject **)((char *)state + enums[i].offset);

      if ((*slot = make_enum (enum_module, enums[i].kind, enums[i].name,
                              enums[i].module, enums[i].members, enums[i].n_members,
                              enums[i].doc))
              == NULL
          || PyModule_AddObjectRef (module, enums[i].name, *slot) < 0)
        {
          Py_DECREF (enum_module);
          return -1;
        }
    }
  Py_DECREF (enum_module);
  return 0;
}

PyObject *
tgpy_enum_value (PyObject *cls, long value)
{
  PyObject *member = PyObject_CallFunction (cls, "l", value);

  /* A value the class lacks (a newer library's) stays an int. */
  if (member == NULL && PyErr_ExceptionMatches (PyExc_ValueError))
    {
      PyErr_Clear ();
      return PyLong_FromLong (value);
    }
  return member;
}
