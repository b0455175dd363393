/* SPDX-License-Identifier: Apache-2.0 */
/* producer-bindings.c: a Producer's bindings: bind, its rebind handler, and
 * what is bound.  The objects bound to the producer (tensors, arrays) are kept
 * in a dict that the C producer owns through its rebind handler's data, so
 * they live as long as the producer does -- also when a graph that retained
 * the producer outlives the Python object.  An object rebound after the
 * producer was captured is retired, not dropped: graphs of the caller that
 * recorded it may still use it. */
#include "producer-private.h"

/* A rebind seen by tgpy_producer_on_rebind() during this thread's bind. */
static _Thread_local gboolean rebound;

void
tgpy_producer_binds_free (gpointer data)
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
gboolean
tgpy_producer_on_rebind (TgProducer *producer, const char *binding, gpointer old_ptr,
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

/* ------------------------------------------------------------------------ */
/* Bindings                                                                  */

PyObject *
tgpy_producer_bind (PyObject *obj, PyObject *args, PyObject *kwargs)
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
      || tgpy_optional_count (size_obj, "size", 0, G_MAXINT64, &size) < 0
      || tgpy_producer_open (obj) == NULL)
    return NULL;
  if (array_obj == Py_None)
    a = (TgpyArray){ NULL, 0, "", -1 };
  else
    {
      char *what = g_strdup_printf ("binding '%s' of producer '%s'", name, self->name);
      int rc = tgpy_array (state, array_obj, what, &a);

      if (rc == 0 && dtype != NULL)
        rc = tgpy_array_dtype_check (state, array_obj, what, &a, dtype);
      g_free (what);
      if (rc < 0)
        {
          tgpy_error_about (state, self->name, name);
          return NULL;
        }
    }
  if (size < 0)
    size = (gint64)a.nbytes;
  else if (a.nbytes != 0 && (guint64)size > a.nbytes)
    {
      GError *e = g_error_new (TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_SIZE_MISMATCH,
                               "binding '%s' of producer '%s': size=%" G_GINT64_FORMAT
                               " bytes, but the array holds %zu; pass at most its size",
                               name, self->name, size, a.nbytes);

      tg_error_set_fields (e, self->name, NULL, name);
      return tgpy_raise (state, e, NULL);
    }
  if (a.ptr != NULL && size == 0)
    return tgpy_argument_error (PyExc_ValueError, "size",
                                "the size of an int address is not known: pass size=");
  if (tgpy_producer_open (obj) == NULL) /* the array's interface closed it */
    return NULL;
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

PyObject *
tgpy_producer_get_binding (PyObject *obj, PyObject *name_obj)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  const char *name;
  gpointer ptr;
  gsize size = 0;

  if (self == NULL || tgpy_name (name_obj, "name", FALSE, &name) < 0)
    return NULL;
  TGPY_WITHOUT_GIL (self, held, ptr = tg_producer_get_binding (held, name, &size));
  if (ptr == NULL)
    Py_RETURN_NONE;
  return Py_BuildValue ("(Nn)", PyLong_FromVoidPtr (ptr), (Py_ssize_t)size);
}

PyObject *
tgpy_producer_binding_owner (PyObject *obj, PyObject *name)
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
