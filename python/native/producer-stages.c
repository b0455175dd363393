/* SPDX-License-Identifier: Apache-2.0 */
/* producer-stages.c: Producer's stage builders: stages written in Python
 * (TgpyStage trampolines), their conditions, else branches and declared
 * bindings.  The refusals are libtrackgen's GErrors. */
#include "producer-private.h"

/* The index of a stage libtrackgen added, or its refusal raised. */
static PyObject *
stage_index (guint index, GError *error, TgpyStage *stage, TgpyProducer *self)
{
  if (index == G_MAXUINT)
    {
      /* Refused: libtrackgen kept nothing. */
      tgpy_stage_free (stage);
      return tgpy_raise (tgpy_state_of (self), error, NULL);
    }
  /* Another thread closed the producer meanwhile: the stage is the C
   * producer's, gone with it or kept by its graphs. */
  if (tgpy_producer_open ((PyObject *)self) == NULL)
    return NULL;
  g_ptr_array_add (self->stages, stage);
  return PyLong_FromUnsignedLong (index);
}

/* A stage of @func: a callable, or for a switch the tuple of its cases,
 * checked by the caller. */
static TgpyStage *
stage_new (TgpyProducer *self, PyObject *func, gboolean host)
{
  TgpyStage *stage = g_new0 (TgpyStage, 1);

  Py_INCREF (func);
  stage->func = func;
  Py_INCREF (self->binds->owners);
  stage->owners = self->binds->owners;
  stage->module
      = PyType_GetModule ((PyTypeObject *)tgpy_state_of (self)->producer_type);
  Py_XINCREF (stage->module);
  stage->host = host;
  return stage;
}

/* Stage flags (StageFlags) from @obj, NULL for none. */
static int
stage_flags (PyObject *obj, TgStageFlags *flags)
{
  guint64 v = 0;

  if (obj != NULL && tgpy_uint (obj, "flags", G_MAXUINT32, &v) < 0)
    return -1;
  *flags = (TgStageFlags)v;
  return 0;
}

/* A stage index from @obj. */
static int
stage_arg (PyObject *obj, guint *index)
{
  gint64 v;

  if (tgpy_count (obj, "stage", 0, G_MAXINT32, &v) < 0)
    return -1;
  *index = (guint)v;
  return 0;
}

PyObject *
tgpy_producer_add_stage (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "name", "func", "flags", "host", NULL };
  TgpyProducer *self = tgpy_producer_open (obj);
  const char *name;
  PyObject *name_obj, *func, *flags_obj = NULL;
  TgStageFlags flags;
  int host = 0;
  TgpyStage *stage;
  GError *error = NULL;
  guint index;

  if (self == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "OO|Op:add_stage", names,
                                       &name_obj, &func, &flags_obj, &host)
      || tgpy_name (name_obj, "name", TRUE, &name) < 0
      || stage_flags (flags_obj, &flags) < 0 || tgpy_callable (func, "func", FALSE) < 0
      || tgpy_producer_open (obj) == NULL)
    return NULL;
  stage = stage_new (self, func, host);
  TGPY_WITHOUT_GIL (
      self, held,
      index = host ? tg_producer_add_host_stage (held, name, flags, tgpy_stage_host,
                                                 stage, tgpy_stage_free, &error)
                   : tg_producer_add_device_stage (held, name, flags, tgpy_stage_device,
                                                   stage, tgpy_stage_free, &error));
  return stage_index (index, error, stage, self);
}

PyObject *
tgpy_producer_add_loop_stage (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = {
    "name", "body", "flag_binding", "status_binding", "max_iters", "flags", NULL
  };
  TgpyProducer *self = tgpy_producer_open (obj);
  TgLoopSpec loop = { 0 };
  const char *name;
  PyObject *name_obj, *body, *flag_obj, *status_obj, *max_iters_obj, *flags_obj = NULL;
  TgStageFlags flags;
  guint64 max_iters;
  TgpyStage *stage;
  GError *error = NULL;
  guint index;

  /* libtrackgen refuses a cap it cannot run (0, past 2**31 - 1). */
  if (self == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "OOOOO|O:add_loop_stage", names,
                                       &name_obj, &body, &flag_obj, &status_obj,
                                       &max_iters_obj, &flags_obj)
      || tgpy_name (name_obj, "name", TRUE, &name) < 0
      || tgpy_name (flag_obj, "flag_binding", TRUE, &loop.flag_binding) < 0
      || tgpy_name (status_obj, "status_binding", TRUE, &loop.status_binding) < 0
      || tgpy_uint (max_iters_obj, "max_iters", G_MAXUINT32, &max_iters) < 0
      || stage_flags (flags_obj, &flags) < 0 || tgpy_callable (body, "body", FALSE) < 0
      || tgpy_producer_open (obj) == NULL)
    return NULL;
  loop.max_iters = (guint)max_iters;
  stage = stage_new (self, body, FALSE);
  TGPY_WITHOUT_GIL (self, held,
                    index = tg_producer_add_loop_stage (held, name, flags, &loop,
                                                        tgpy_stage_device, stage,
                                                        tgpy_stage_free, &error));
  return stage_index (index, error, stage, self);
}

/* Every case of a switch stage: the case number comes from the launch. */
static gboolean
switch_case (const TgLaunch *launch, gpointer data, GError **error)
{
  TgpyStage *stage = data;
  gboolean ok;
  TgpyStage one = *stage;
  PyGILState_STATE gil = PyGILState_Ensure ();

  one.func = PyTuple_GetItem (stage->func, tg_launch_get_case (launch));
  PyGILState_Release (gil);
  ok = tgpy_stage_device (launch, &one, error);
  return ok;
}

PyObject *
tgpy_producer_add_switch_stage (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "name", "cases", "index_binding", "flags", NULL };
  TgpyProducer *self = tgpy_producer_open (obj);
  TgSwitchSpec sw = { 0 };
  const char *name;
  PyObject *name_obj, *cases, *index_obj, *tuple, *flags_obj = NULL;
  TgStageFlags flags;
  TgDeviceFunc *funcs;
  TgpyStage *stage;
  GError *error = NULL;
  guint index;

  if (self == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "OOO|O:add_switch_stage", names,
                                       &name_obj, &cases, &index_obj, &flags_obj)
      || tgpy_name (name_obj, "name", TRUE, &name) < 0
      || tgpy_name (index_obj, "index_binding", TRUE, &sw.index_binding) < 0
      || stage_flags (flags_obj, &flags) < 0
      || tgpy_callable_tuple (cases, "cases", &tuple) < 0)
    return NULL;
  if (tgpy_producer_open (obj) == NULL)
    {
      Py_DECREF (tuple);
      return NULL;
    }
  sw.n_cases = (guint)PyTuple_Size (tuple);
  /* The stage's func is the tuple of cases. */
  stage = stage_new (self, tuple, FALSE);
  Py_DECREF (tuple);
  funcs = g_new (TgDeviceFunc, sw.n_cases);
  for (guint i = 0; i < sw.n_cases; i++)
    funcs[i] = switch_case;
  sw.cases = funcs;
  TGPY_WITHOUT_GIL (self, held,
                    index = tg_producer_add_switch_stage (held, name, flags, &sw, stage,
                                                          tgpy_stage_free, &error));
  g_free (funcs);
  return stage_index (index, error, stage, self);
}

/* The Python stage at @index, or NULL with an exception. */
static TgpyStage *
python_stage (TgpyProducer *self, guint index)
{
  /* Stage indices are dense; self->stages lists Python stages in the order
   * they were added, which is their index order only for producers made in
   * Python: a wrapped C producer's stages are not there. */
  guint n = tg_producer_get_n_stages (self->producer);

  if (index >= n || self->stages->len != n)
    {
      PyErr_Format (PyExc_ValueError,
                    "stage %u: not a stage written in Python (the producer has %u "
                    "stages, %u of them in Python)",
                    index, n, self->stages->len);
      return NULL;
    }
  return self->stages->pdata[index];
}

PyObject *
tgpy_producer_declare_binding (PyObject *obj, PyObject *args)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  PyObject *stage_obj, *name_obj, *min_size_obj;
  guint stage;
  const char *name;
  gint64 min_size;
  GError *error = NULL;
  gboolean ok;

  if (self == NULL
      || !PyArg_ParseTuple (args, "OOO:declare_binding", &stage_obj, &name_obj,
                            &min_size_obj)
      || stage_arg (stage_obj, &stage) < 0
      || tgpy_name (name_obj, "name", TRUE, &name) < 0
      || tgpy_count (min_size_obj, "min_size", 0, G_MAXINT64, &min_size) < 0
      || tgpy_producer_open (obj) == NULL)
    return NULL;
  /* A size of 0 is libtrackgen's to refuse. */
  TGPY_WITHOUT_GIL (
      self, held,
      ok = tg_producer_declare_binding (held, stage, name, (gsize)min_size, &error));
  if (!ok)
    return tgpy_raise (tgpy_state_of (self), error, NULL);
  Py_RETURN_NONE;
}

PyObject *
tgpy_producer_set_stage_condition (PyObject *obj, PyObject *args)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  PyObject *stage_obj, *flag_obj;
  guint stage;
  const char *flag_binding = NULL;
  GError *error = NULL;
  gboolean ok;

  if (self == NULL
      || !PyArg_ParseTuple (args, "OO:set_stage_condition", &stage_obj, &flag_obj)
      || stage_arg (stage_obj, &stage) < 0
      || (flag_obj != Py_None
          && tgpy_name (flag_obj, "flag_binding", TRUE, &flag_binding) < 0)
      || tgpy_producer_open (obj) == NULL)
    return NULL;
  TGPY_WITHOUT_GIL (
      self, held,
      ok = tg_producer_set_stage_condition (held, stage, flag_binding, &error));
  if (!ok)
    return tgpy_raise (tgpy_state_of (self), error, NULL);
  Py_RETURN_NONE;
}

PyObject *
tgpy_producer_set_stage_else (PyObject *obj, PyObject *args)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  PyObject *index_obj, *func, *old;
  TgProducer *held;
  guint index;
  TgpyStage *stage;
  GError *error = NULL;
  gboolean ok;

  if (self == NULL || !PyArg_ParseTuple (args, "OO:set_stage_else", &index_obj, &func)
      || stage_arg (index_obj, &index) < 0 || tgpy_producer_open (obj) == NULL
      || (stage = python_stage (self, index)) == NULL)
    return NULL;
  if (tgpy_callable (func, "func", TRUE) < 0)
    return NULL;
  /* Held until the stage's branch is set: another thread's close() frees
   * the stage with the producer. */
  held = tg_producer_ref (self->producer);
  Py_BEGIN_ALLOW_THREADS;
  ok = tg_producer_set_stage_else (held, index,
                                   func != Py_None ? tgpy_stage_else : NULL, &error);
  Py_END_ALLOW_THREADS;
  old = stage->else_func;
  if (ok)
    {
      stage->else_func = func != Py_None ? func : NULL;
      Py_XINCREF (stage->else_func);
    }
  tg_producer_unref (held);
  if (!ok)
    return tgpy_raise (tgpy_state_of (self), error, NULL);
  /* The old branch let go last: its __del__ may close the producer. */
  Py_XDECREF (old);
  Py_RETURN_NONE;
}
