/* SPDX-License-Identifier: Apache-2.0 */
/* condition.c: Condition, the value a call or a stage's body is guarded by
 * (TgCondition): a device flag's address and the object that holds it,
 * which the condition keeps alive. */
#include "native.h"

#include <string.h>
#include <structmember.h>

typedef struct
{
  PyObject_HEAD void *flag; /* NULL: unconditional */
  PyObject *owner;          /* the array the flag lives in, or None */
} TgpyCondition;

static PyObject *
condition_new (PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "flag", NULL };
  allocfunc alloc = PyType_GetSlot (type, Py_tp_alloc);
  PyObject *flag = Py_None;
  TgpyCondition *self;
  void *ptr = NULL;

  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "|O:Condition", names, &flag))
    return NULL;
  if (flag != Py_None
      && tgpy_int32_array (tgpy_state_of_type (type), flag, "flag", 1, &ptr) < 0)
    return NULL;
  if ((self = (TgpyCondition *)alloc (type, 0)) == NULL)
    return NULL;
  self->flag = ptr;
  Py_INCREF (flag);
  self->owner = flag;
  return (PyObject *)self;
}

static void
condition_dealloc (TgpyCondition *self)
{
  PyTypeObject *type = Py_TYPE (self);
  freefunc free = PyType_GetSlot (type, Py_tp_free);

  Py_XDECREF (self->owner);
  free (self);
  Py_DECREF (type);
}

static PyObject *
condition_get_flag_ptr (TgpyCondition *self, void *closure)
{
  if (self->flag == NULL)
    Py_RETURN_NONE;
  return PyLong_FromVoidPtr (self->flag);
}

static PyObject *
condition_repr (TgpyCondition *self)
{
  if (self->flag == NULL)
    return PyUnicode_FromString ("unconditional()");
  return PyUnicode_FromFormat ("conditional(flag at %p)", self->flag);
}

static PyGetSetDef condition_getset[] = {
  { "flag_ptr", (getter)condition_get_flag_ptr, NULL,
    "The device address of the int32 flag, or None when unconditional.", NULL },
  { NULL },
};

static PyMemberDef condition_members[] = {
  { "flag", T_OBJECT, offsetof (TgpyCondition, owner), READONLY,
    "The flag as it was given (a tensor, an array, an address), or None." },
  { NULL },
};

static PyType_Slot condition_slots[] = {
  { Py_tp_doc,
    "Condition(flag=None)\n--\n\nA condition on device work (TgCondition): "
    "unconditional (flag None), or guarded by an int32 device flag (non-zero "
    "runs).  Keeps the object holding the flag alive." },
  { Py_tp_new, condition_new },
  { Py_tp_dealloc, condition_dealloc },
  { Py_tp_repr, condition_repr },
  { Py_tp_getset, condition_getset },
  { Py_tp_members, condition_members },
  { 0, NULL },
};

static PyType_Spec condition_spec = {
  .name = "track_gen._native.Condition",
  .basicsize = sizeof (TgpyCondition),
  .flags = TGPY_TPFLAGS,
  .slots = condition_slots,
};

int
tgpy_condition (TgpyState *state, PyObject *obj, TgCondition *condition)
{
  PyObject *made;
  int rc;

  if (obj == NULL || obj == Py_None)
    {
      *condition = tg_unconditional ();
      return 0;
    }
  if (PyObject_TypeCheck (obj, (PyTypeObject *)state->condition_type))
    {
      condition->flag = ((TgpyCondition *)obj)->flag;
      return 0;
    }
  /* A flag given directly: conditional(flag). */
  if ((made = PyObject_CallFunctionObjArgs (state->condition_type, obj, NULL)) == NULL)
    return -1;
  condition->flag = ((TgpyCondition *)made)->flag;
  rc = 0;
  Py_DECREF (made);
  return rc;
}

int
tgpy_condition_init_type (PyObject *module, TgpyState *state)
{
  state->condition_type = PyType_FromModuleAndSpec (module, &condition_spec, NULL);
  if (state->condition_type == NULL
      || PyModule_AddObjectRef (module, "Condition", state->condition_type) < 0)
    return -1;
  state->unconditional = PyObject_CallNoArgs (state->condition_type);
  return state->unconditional == NULL ? -1 : 0;
}
