/* SPDX-License-Identifier: Apache-2.0 */
/* hostops.c: HostOps, what a HOST stage written in Python receives: a
 * LaunchContext (launch.c) with the host operations a HOST stage uses for
 * every stream operation (TgHostOps).  Valid only during the call. */
#include "native.h"

/* Device memory to copy from or to, and its bytes (-1: not known, an
 * address). */
static int
device_memory (TgpyLaunch *self, PyObject *obj, const char *what, void **ptr,
               Py_ssize_t *size)
{
  TgpyArray a;

  if (tgpy_array (tgpy_state_of (self), obj, what, &a) < 0)
    return -1;
  *ptr = a.ptr;
  *size = a.nbytes != 0 ? (Py_ssize_t)a.nbytes : -1;
  return 0;
}

static TgHostOps *
valid_ops (TgpyLaunch *self)
{
  return tgpy_launch_valid (self) != NULL ? self->ops : NULL;
}

/* Host memory to copy from or to: bytes-like, an object with the array
 * interface (numpy), or an int address with @size (-1).  A bytearray is
 * held exported in *@hold meanwhile: no thread may resize it under the
 * copy. */
static int
host_buffer (TgpyState *state, PyObject *obj, const char *what, gboolean writable,
             void **ptr, Py_ssize_t *size, PyObject **hold)
{
  TgpyArray a;
  int found;

  *hold = NULL;
  if (PyByteArray_Check (obj))
    {
      if ((*hold = PyMemoryView_FromObject (obj)) == NULL)
        return -1;
      *ptr = PyByteArray_AsString (obj);
      *size = PyByteArray_Size (obj);
      return 0;
    }
  if (!writable && PyBytes_Check (obj))
    {
      char *data;
      return PyBytes_AsStringAndSize (obj, &data, size) < 0 ? -1 : (*ptr = data, 0);
    }
  if (PyLong_Check (obj))
    {
      *size = -1;
      return tgpy_address (obj, what, ptr);
    }
  if ((found = tgpy_host_array (state, obj, what, writable, &a)) != 0)
    {
      *ptr = a.ptr;
      *size = (Py_ssize_t)a.nbytes;
      return found < 0 ? -1 : 0;
    }
  tgpy_argument_error (PyExc_TypeError, what,
                       "host memory: pass a bytearray (or bytes to read from), an "
                       "object with __array_interface__ (numpy), or an int address "
                       "with a size");
  return -1;
}

/* A copy of some bytes needs both ends: libtrackgen takes NULL for misuse. */
static int
copy_ends_null (const void *dst, const void *src)
{
  if (dst != NULL && src != NULL)
    return 0;
  tgpy_argument_error (PyExc_ValueError, dst == NULL ? "dst" : "src",
                       "a NULL address; pass the memory to copy %s",
                       dst == NULL ? "to" : "from");
  return -1;
}

/* *@size of a copy between a host buffer of @host_size bytes (the @host_end,
 * "destination" or "source") and device memory of @device_size (-1: an
 * address, unbounded): the host buffer's size when not given (-1).  A size
 * that fits either not is the ValueError naming "size". */
static int
copy_size (gint64 *size, Py_ssize_t host_size, const char *host_end,
           Py_ssize_t device_size, const char *device_end)
{
  if (*size < 0)
    *size = host_size;
  if (*size >= 0 && (host_size < 0 || *size <= host_size)
      && (device_size < 0 || *size <= device_size))
    return 0;
  tgpy_argument_error (PyExc_ValueError, "size",
                       "pass a size that fits the %s (%zd bytes) and the %s (%zd; -1: "
                       "an address)",
                       host_end, host_size, device_end, device_size);
  return -1;
}

#define RUN_OPS(self, ok, call)                                                        \
  G_STMT_START                                                                         \
  {                                                                                    \
    TgpyState *state_ = tgpy_state_of (self);                                          \
    GError *error_ = NULL;                                                             \
    Py_BEGIN_ALLOW_THREADS ok = (call);                                                \
    Py_END_ALLOW_THREADS if (!ok) tgpy_raise (state_, error_, NULL);                   \
  }                                                                                    \
  G_STMT_END

static PyObject *
ops_copy_to_host (TgpyLaunch *self, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "dst", "src", "size", NULL };
  PyObject *dst_obj, *src_obj, *size_obj = Py_None, *hold = NULL;
  Py_ssize_t dst_size, src_size;
  gint64 size;
  TgHostOps *ops = valid_ops (self);
  void *dst, *src;
  gboolean ok = FALSE;

  /* The host buffer last: the device array's conversion runs Python code. */
  if (ops == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "OO|O:copy_to_host", names,
                                       &dst_obj, &src_obj, &size_obj)
      || tgpy_optional_count (size_obj, "size", 0, G_MAXINT64, &size) < 0
      || device_memory (self, src_obj, "src", &src, &src_size) < 0
      || host_buffer (tgpy_state_of (self), dst_obj, "dst", TRUE, &dst, &dst_size,
                      &hold)
             < 0)
    goto out;
  if (copy_size (&size, dst_size, "destination", src_size, "source") < 0)
    goto out;
  if (size > 0 && copy_ends_null (dst, src) < 0)
    goto out;
  RUN_OPS (self, ok, tg_host_ops_copy_to_host (ops, dst, src, (gsize)size, &error_));
out:
  Py_XDECREF (hold);
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *
ops_copy_to_device (TgpyLaunch *self, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "dst", "src", "size", NULL };
  PyObject *dst_obj, *src_obj, *size_obj = Py_None, *hold = NULL;
  Py_ssize_t src_size, dst_size;
  gint64 size;
  TgHostOps *ops = valid_ops (self);
  void *dst, *src;
  gboolean ok = FALSE;

  /* The host buffer last: the device array's conversion runs Python code. */
  if (ops == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "OO|O:copy_to_device", names,
                                       &dst_obj, &src_obj, &size_obj)
      || tgpy_optional_count (size_obj, "size", 0, G_MAXINT64, &size) < 0
      || device_memory (self, dst_obj, "dst", &dst, &dst_size) < 0
      || host_buffer (tgpy_state_of (self), src_obj, "src", FALSE, &src, &src_size,
                      &hold)
             < 0)
    goto out;
  if (copy_size (&size, src_size, "source", dst_size, "destination") < 0)
    goto out;
  if (size > 0 && copy_ends_null (dst, src) < 0)
    goto out;
  /* A copy replayed by a graph reads its source again: keep the object
   * (a bytearray exported, so that its buffer never moves). */
  if (tg_launch_is_capturing (self->launch))
    {
      PyObject *kept = hold != NULL ? hold : src_obj;

      Py_INCREF (kept);
      tg_launch_keep (self->launch, kept, tgpy_release_object);
    }
  RUN_OPS (self, ok, tg_host_ops_copy_to_device (ops, dst, src, (gsize)size, &error_));
out:
  Py_XDECREF (hold);
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *
ops_synchronize (TgpyLaunch *self, PyObject *unused)
{
  TgHostOps *ops = valid_ops (self);
  gboolean ok;

  if (ops == NULL)
    return NULL;
  RUN_OPS (self, ok, tg_host_ops_synchronize (ops, &error_));
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

/* A host function runs on a driver thread: it takes the GIL, and an
 * exception it raises can go nowhere but sys.unraisablehook. */
static void
host_call (PyObject *func)
{
  PyObject *result = PyObject_CallNoArgs (func);

  if (result == NULL)
    PyErr_WriteUnraisable (func);
  Py_XDECREF (result);
}

/* Enqueued eagerly: runs once, and owns its reference. */
static void CUDART_CB
host_once (gpointer data)
{
  PyGILState_STATE gil;

  if (tgpy_is_finalizing ())
    return;
  gil = PyGILState_Ensure ();
  host_call (data);
  Py_DECREF ((PyObject *)data);
  PyGILState_Release (gil);
}

/* Recorded: runs at every replay; the graph keeps the reference. */
static void CUDART_CB
host_replayed (gpointer data)
{
  PyGILState_STATE gil;

  if (tgpy_is_finalizing ())
    return;
  gil = PyGILState_Ensure ();
  host_call (data);
  PyGILState_Release (gil);
}

static PyObject *
ops_enqueue (TgpyLaunch *self, PyObject *func)
{
  TgHostOps *ops = valid_ops (self);
  gboolean captured, ok;

  if (ops == NULL)
    return NULL;
  if (tgpy_callable (func, "func", FALSE) < 0)
    return NULL;
  captured = tg_launch_is_capturing (self->launch);
  Py_INCREF (func);
  if (captured)
    tg_launch_keep (self->launch, func, tgpy_release_object);
  RUN_OPS (
      self, ok,
      tg_host_ops_enqueue (ops, captured ? host_replayed : host_once, func, &error_));
  if (!ok && !captured)
    Py_DECREF (func);
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

static PyMethodDef ops_methods[] = {
  { "copy_to_host", (PyCFunction)(void (*) (void))ops_copy_to_host,
    METH_VARARGS | METH_KEYWORDS,
    "copy_to_host($self, dst, src, size=None)\n"
    "--\n"
    "\n"
    "Copies device memory to host memory and waits for it.\n"
    "\n"
    "Refused under RECORD (it synchronizes).\n"
    "\n"
    "Args:\n"
    "    dst (Any): Host memory: a bytearray, a writable C-contiguous object\n"
    "        with the array interface (numpy), or an int address with *size*.\n"
    "    src (ArrayLike): Device memory.\n"
    "    size (int | None): The bytes to copy, at most what both hold; all of\n"
    "        *dst* by default.\n"
    "\n"
    "Raises:\n"
    "    ValueError: A size past either end, or a read-only *dst*." },
  { "copy_to_device", (PyCFunction)(void (*) (void))ops_copy_to_device,
    METH_VARARGS | METH_KEYWORDS,
    "copy_to_device($self, dst, src, size=None)\n"
    "--\n"
    "\n"
    "Enqueues a copy from host memory to device memory.\n"
    "\n"
    "Under RECORD *src* must be pinned memory, read again at every replay.\n"
    "\n"
    "Args:\n"
    "    dst (ArrayLike): Device memory.\n"
    "    src (Any): Host memory: bytes or a bytearray, a C-contiguous object\n"
    "        with the array interface (numpy), or an int address with *size*.\n"
    "    size (int | None): The bytes to copy, at most what both hold; all of\n"
    "        *src* by default.\n"
    "\n"
    "Raises:\n"
    "    ValueError: A size past either end." },
  { "synchronize", (PyCFunction)ops_synchronize, METH_NOARGS,
    "synchronize($self)\n"
    "--\n"
    "\n"
    "Waits for the stream; refused under RECORD." },
  { "enqueue", (PyCFunction)ops_enqueue, METH_O,
    "enqueue($self, func, /)\n"
    "--\n"
    "\n"
    "Enqueues ``func()`` on the stream: a host node under RECORD, run at every\n"
    "replay.\n"
    "\n"
    "It runs on a CUDA driver thread and must not call CUDA (no torch CUDA\n"
    "operations).\n"
    "\n"
    "Args:\n"
    "    func (Callable[[], Any]): The host function." },
  { NULL },
};

/* ------------------------------------------------------------------------ */
/* The type                                                                  */

static PyType_Slot host_ops_slots[] = {
  { Py_tp_doc, "The host operations a HOST stage uses for every stream operation "
               "(TgHostOps); also a LaunchContext.  Valid only during the call." },
  { Py_tp_methods, ops_methods },
  { 0, NULL },
};

static PyType_Spec host_ops_spec = {
  .name = "track_gen._native.HostOps",
  .basicsize = sizeof (TgpyLaunch),
  .flags = TGPY_TPFLAGS | Py_TPFLAGS_DISALLOW_INSTANTIATION,
  .slots = host_ops_slots,
};

int
tgpy_host_ops_init_type (PyObject *module, TgpyState *state)
{
  state->host_ops_type
      = PyType_FromModuleAndSpec (module, &host_ops_spec, state->launch_type);
  if (state->host_ops_type == NULL
      || PyModule_AddObjectRef (module, "HostOps", state->host_ops_type) < 0)
    return -1;
  return 0;
}
