/* SPDX-License-Identifier: Apache-2.0 */
/* functions.c: the module's small functions, each one libtrackgen call or
 * one converter: devices, NVTX, live objects, policy names, arrays as
 * TrackGen reads them, and the converters the pure-Python modules share
 * (every range stays checked in convert.c). */
#include "native.h"

static PyObject *
native_device_check (PyObject *module, PyObject *args)
{
  PyObject *device_obj = NULL;
  int device;
  GError *error = NULL;
  gboolean ok;

  if (!PyArg_ParseTuple (args, "|O:device_check", &device_obj)
      || tgpy_device (device_obj, "device", &device) < 0)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  ok = tg_device_check (device, &error);
  Py_END_ALLOW_THREADS;
  if (!ok)
    return tgpy_raise (PyModule_GetState (module), error, NULL);
  Py_RETURN_NONE;
}

static PyObject *
native_live_objects (PyObject *module, PyObject *unused)
{
  TgLiveObjects l;

  tg_get_live_objects (&l);
  return Py_BuildValue ("(iiiiiiii)", l.producers, l.graphs, l.graph_execs, l.streams,
                        l.captures, l.failed_releases, l.idle_streams, l.user_objects);
}

static PyObject *
native_set_nvtx (PyObject *module, PyObject *on)
{
  gboolean truth;

  if (tgpy_bool (on, "on", &truth) < 0)
    return NULL;
  tg_set_nvtx (truth);
  Py_RETURN_NONE;
}

static PyObject *
native_get_nvtx (PyObject *module, PyObject *unused)
{
  return PyBool_FromLong (tg_get_nvtx ());
}

static PyObject *
native_array_info (PyObject *module, PyObject *args)
{
  PyObject *obj;
  const char *what = "array";
  TgpyArray a;

  if (!PyArg_ParseTuple (args, "O|s:array_info", &obj, &what)
      || tgpy_array (PyModule_GetState (module), obj, what, &a) < 0)
    return NULL;
  return Py_BuildValue ("(Nnsi)", PyLong_FromVoidPtr (a.ptr), (Py_ssize_t)a.nbytes,
                        a.dtype, a.device);
}

/* For tests and diagnostics: the nodes of a graph, its top level. */
static PyObject *
native_graph_n_nodes (PyObject *module, PyObject *graph_obj)
{
  cudaGraph_t graph;
  size_t n = 0;
  cudaError_t err;

  if (tgpy_address (graph_obj, "graph", (void **)&graph) < 0)
    return NULL;
  if (graph == NULL)
    return tgpy_argument_error (PyExc_ValueError, "graph", "NULL");
  if ((err = cudaGraphGetNodes (graph, NULL, &n)) != cudaSuccess)
    {
      if (cudaPeekAtLastError () == err)
        (void)cudaGetLastError ();
      PyErr_Format (PyExc_RuntimeError, "cudaGraphGetNodes failed: %s",
                    cudaGetErrorName (err));
      return NULL;
    }
  return PyLong_FromSize_t (n);
}

/* A reference never dropped: @obj lives until the process exits, and its
 * destructor never runs (interop/torch.py's memory pools). */
static PyObject *
native_keep_until_exit (PyObject *module, PyObject *obj)
{
  Py_INCREF (obj);
  Py_INCREF (obj);
  return obj;
}

static PyObject *
native_policy_name (PyObject *module, PyObject *arg)
{
  gint64 p;

  if (tgpy_count (arg, "policy", TG_POLICY_AUTO, TG_POLICY_RECORD, &p) < 0)
    return NULL;
  return PyUnicode_FromString (tg_policy_to_string ((TgPolicy)p));
}

/* _pack_uints(what, values, itemsize): @values as little-endian unsigned
 * integers of @itemsize bytes (4 or 8), each range-checked as @what[i]:
 * the host arrays of seeds and env ids that SeedState takes as bytes. */
static PyObject *
native_pack_uints (PyObject *module, PyObject *args)
{
  const char *what;
  PyObject *values, *result;
  int itemsize;
  gpointer out;
  gsize n;

  if (!PyArg_ParseTuple (args, "sOi:_pack_uints", &what, &values, &itemsize))
    return NULL;
  if (itemsize != 4 && itemsize != 8)
    return tgpy_argument_error (PyExc_ValueError, "itemsize", "4 or 8, not %d",
                                itemsize);
  if (tgpy_uint_array (values, what, itemsize == 8 ? G_MAXUINT64 : G_MAXUINT32,
                       (gsize)itemsize, &out, &n)
      < 0)
    return NULL;
#if G_BYTE_ORDER != G_LITTLE_ENDIAN
  for (gsize i = 0; i < n; i++)
    if (itemsize == 8)
      ((guint64 *)out)[i] = GUINT64_TO_LE (((guint64 *)out)[i]);
    else
      ((guint32 *)out)[i] = GUINT32_TO_LE (((guint32 *)out)[i]);
#endif
  result = PyBytes_FromStringAndSize (out, (Py_ssize_t)(n * itemsize));
  g_free (out);
  return result;
}

/* _uint(value, what): @value as a C unsigned int, for the pure-Python
 * modules: the width is C's, the range of what it means is libtrackgen's. */
static PyObject *
native_uint (PyObject *module, PyObject *args)
{
  PyObject *value;
  const char *what;
  guint64 out;

  if (!PyArg_ParseTuple (args, "Os:_uint", &value, &what)
      || tgpy_uint (value, what, G_MAXUINT, &out) < 0)
    return NULL;
  return PyLong_FromUnsignedLongLong (out);
}

/* _callable(value, what, optional=False): @value, checked as every callable
 * argument of the package is (tgpy_callable()). */
static PyObject *
native_callable (PyObject *module, PyObject *args)
{
  PyObject *value;
  const char *what;
  int optional = 0;

  if (!PyArg_ParseTuple (args, "Os|p:_callable", &value, &what, &optional)
      || tgpy_callable (value, what, optional) < 0)
    return NULL;
  Py_INCREF (value);
  return value;
}

/* _switch(value, what): @value, True or False, checked as every switch of
 * the package is (tgpy_bool()). */
static PyObject *
native_switch (PyObject *module, PyObject *args)
{
  PyObject *value;
  const char *what;
  gboolean on;

  if (!PyArg_ParseTuple (args, "Os:_switch", &value, &what)
      || tgpy_bool (value, what, &on) < 0)
    return NULL;
  return PyBool_FromLong (on);
}

static PyObject *
native_int32_array (PyObject *module, PyObject *args)
{
  PyObject *obj;
  const char *what;
  Py_ssize_t n;
  TgpyArray a;

  if (!PyArg_ParseTuple (args, "Osn:_int32_array", &obj, &what, &n))
    return NULL;
  if (n < 1)
    return tgpy_argument_error (PyExc_ValueError, "n", "at least 1, not %zd", n);
  if (tgpy_int32_array_full (PyModule_GetState (module), obj, what, (gsize)n, &a) < 0)
    return NULL;
  return Py_BuildValue ("(Ni)", PyLong_FromVoidPtr (a.ptr), a.device);
}

static PyMethodDef module_functions[] = {
  { "device_check", native_device_check, METH_VARARGS,
    "device_check(device=0)\n--\n\nRuns TrackGen's kernels once on *device* and checks "
    "them (tg_device_check())." },
  { "set_nvtx", native_set_nvtx, METH_O,
    "set_nvtx(on, /)\n--\n\ntg_set_nvtx(): NVTX ranges on or off." },
  { "get_nvtx", native_get_nvtx, METH_NOARGS,
    "get_nvtx()\n--\n\ntg_get_nvtx(): whether NVTX ranges are on." },
  { "live_objects", native_live_objects, METH_NOARGS,
    "live_objects()\n--\n\n(producers, graphs, graph_execs, streams, captures, "
    "failed_releases, idle_streams, user_objects) (tg_get_live_objects())." },
  { "array_info", native_array_info, METH_VARARGS,
    "array_info(array, what='array', /)\n--\n\n(address, nbytes, dtype, device) of a "
    "device array as TrackGen reads it (nbytes 0, dtype \"\" and device -1 when "
    "unknown); errors name the argument *what*." },
  { "_graph_n_nodes", native_graph_n_nodes, METH_O,
    "_graph_n_nodes(graph, /)\n--\n\nThe number of nodes at the top level of the "
    "cudaGraph_t *graph* (an int)." },
  { "_keep_until_exit", native_keep_until_exit, METH_O,
    "_keep_until_exit(obj, /)\n--\n\nReturns *obj*, kept alive until the process "
    "exits: its destructor never runs." },
  { "policy_name", native_policy_name, METH_O,
    "policy_name(policy, /)\n--\n\ntg_policy_to_string()." },
  { "_uint", native_uint, METH_VARARGS,
    "_uint(value, what)\n--\n\n*value* as a C unsigned int: TypeError for a bool or "
    "a float, OverflowError naming *what* outside it (libtrackgen checks what the "
    "value means)." },
  { "_callable", native_callable, METH_VARARGS,
    "_callable(value, what, optional=False)\n--\n\n*value*, a callable (or None when "
    "*optional*): TypeError naming *what* otherwise, worded as every callable "
    "argument of the package." },
  { "_switch", native_switch, METH_VARARGS,
    "_switch(value, what)\n--\n\n*value*, True or False: TypeError naming *what* "
    "otherwise (a truthy \"no\" or 1 is refused), worded as every switch of the "
    "package." },
  { "_int32_array", native_int32_array, METH_VARARGS,
    "_int32_array(array, what, n)\n--\n\n(address, device) of at least *n* int32 in "
    "device memory, checked as flags are: ArgumentError naming *what* otherwise." },
  { "_pack_uints", native_pack_uints, METH_VARARGS,
    "_pack_uints(what, values, itemsize)\n--\n\n*values* as little-endian unsigned "
    "ints of *itemsize* bytes; OverflowError naming ``what[i]`` for one out of "
    "range." },
  { NULL },
};

int
tgpy_functions_init (PyObject *module)
{
  return PyModule_AddFunctions (module, module_functions);
}
