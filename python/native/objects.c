/* SPDX-License-Identifier: Apache-2.0 */
/* objects.c: device arrays as the ecosystem passes them: addresses as ints,
 * torch tensors, the CUDA array interface and DLPack (streams are
 * objects-streams.c's).  Nothing here imports torch, or touches a stream:
 * reading an array's address must not enqueue anything (a capture may be in
 * progress). */
#include "objects-private.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The name of @obj's type as Python code writes it ("torch.Tensor"). */
static char *
type_name (PyObject *obj)
{
  PyObject *type = (PyObject *)Py_TYPE (obj);
  PyObject *module = PyObject_GetAttrString (type, "__module__");
  PyObject *name = PyObject_GetAttrString (type, "__qualname__");
  const char *m = module != NULL && PyUnicode_Check (module)
                      ? PyUnicode_AsUTF8AndSize (module, NULL)
                      : NULL;
  const char *n = name != NULL && PyUnicode_Check (name)
                      ? PyUnicode_AsUTF8AndSize (name, NULL)
                      : NULL;
  char *text;

  PyErr_Clear ();
  if (n == NULL)
    text = g_strdup ("object");
  else if (m == NULL || strcmp (m, "builtins") == 0)
    text = g_strdup (n);
  else
    text = g_strdup_printf ("%s.%s", m, n);
  Py_XDECREF (module);
  Py_XDECREF (name);
  return text;
}

/* Raises ArgumentError: "@what: a <type of @obj> <problem>; <fix>".
 * Returns -1. */
G_GNUC_PRINTF (4, 5)
static int
array_error (TgpyState *state, const char *what, PyObject *obj, const char *format, ...)
{
  char *type = type_name (obj);
  char *problem;
  va_list args;

  va_start (args, format);
  problem = g_strdup_vprintf (format, args);
  va_end (args);
  tgpy_raise (state,
              g_error_new (TG_ARGUMENT_ERROR, TG_ARGUMENT_ERROR_INVALID, "%s: a %s %s",
                           what, type, problem),
              NULL);
  g_free (problem);
  g_free (type);
  return -1;
}

/* repr(@v), for a message (g_free it). */
static char *
repr_of (PyObject *v)
{
  PyObject *r = PyObject_Repr (v);
  const char *text = r != NULL ? PyUnicode_AsUTF8AndSize (r, NULL) : NULL;
  char *copy = g_strdup (text != NULL ? text : "?");

  PyErr_Clear ();
  Py_XDECREF (r);
  return copy;
}

#define NOT_CONTIGUOUS                                                                 \
  "that is not C-contiguous; call .contiguous() on it (torch, CuPy: "                  \
  "cupy.ascontiguousarray()) and pass that"
#define INT32_ONLY                                                                     \
  "of %s; TrackGen's device code reads one int32 here and never "                      \
  "reinterprets other types: pass an int32 one (.int() in torch, as for the "          \
  "bool tensor of done.any())"
#define EMPTY "holding no element; pass one holding at least one"

/* numpy-style type strings to dtype names. */
static gboolean
dtype_from_typestr (const char *typestr, char *dtype, size_t size, size_t *itemsize)
{
  static const struct
  {
    char kind;
    int bytes;
    const char *name;
  } table[] = {
    { 'b', 1, "bool" },      { 'i', 1, "int8" },        { 'i', 2, "int16" },
    { 'i', 4, "int32" },     { 'i', 8, "int64" },       { 'u', 1, "uint8" },
    { 'u', 2, "uint16" },    { 'u', 4, "uint32" },      { 'u', 8, "uint64" },
    { 'f', 2, "float16" },   { 'f', 4, "float32" },     { 'f', 8, "float64" },
    { 'c', 8, "complex64" }, { 'c', 16, "complex128" },
  };
  char *end;
  long bytes;

  /* "<f4": byte order, kind, size; only this host's order is readable. */
  if (strlen (typestr) < 3 || (typestr[0] != '<' && typestr[0] != '|'))
    return FALSE;
  bytes = strtol (typestr + 2, &end, 10);
  if (*end != '\0' || bytes < 1 || bytes > 64)
    return FALSE;
  for (size_t i = 0; i < G_N_ELEMENTS (table); i++)
    if (table[i].kind == typestr[1] && table[i].bytes == bytes)
      {
        g_strlcpy (dtype, table[i].name, size);
        *itemsize = (size_t)bytes;
        return TRUE;
      }
  /* Another kind (a void or a struct type): its size is still known. */
  dtype[0] = '\0';
  *itemsize = (size_t)bytes;
  return TRUE;
}

/* A non-negative int of a CAI tuple as a gsize; FALSE when it is not one. */
static gboolean
extent_of (PyObject *v, gsize *out)
{
  int overflow;
  long long n;

  if (!PyLong_Check (v))
    return FALSE;
  n = PyLong_AsLongLongAndOverflow (v, &overflow);
  if (n == -1 && PyErr_Occurred ())
    {
      PyErr_Clear ();
      return FALSE;
    }
  *out = (gsize)n;
  return overflow == 0 && n >= 0;
}

/* The bytes of a C-contiguous array of @shape (a tuple of extents) with
 * byte @strides (None, or a tuple as long), checked; @protocol names the
 * interface they came from. */
static int
cai_extent (TgpyState *state, PyObject *obj, const char *what, const char *protocol,
            PyObject *shape, PyObject *strides, gsize itemsize, gsize *nbytes)
{
  Py_ssize_t ndim = PyTuple_Size (shape);
  gsize n = itemsize, stride;

  if (strides != NULL && strides != Py_None
      && (!PyTuple_Check (strides) || PyTuple_Size (strides) != ndim))
    {
      g_autofree char *text = repr_of (strides);
      return array_error (state, what, obj,
                          "whose %s has strides %s, not one per dimension; its "
                          "producer is broken",
                          protocol, text);
    }
  for (Py_ssize_t d = ndim - 1; d >= 0; d--)
    {
      gsize size;

      if (!extent_of (PyTuple_GetItem (shape, d), &size))
        {
          g_autofree char *text = repr_of (shape);
          return array_error (state, what, obj,
                              "whose %s has shape %s, with an extent that is not an "
                              "int from 0 to 2**63 - 1",
                              protocol, text);
        }
      /* An extent of 1 may have any stride: it never steps. */
      if (strides != NULL && strides != Py_None && size > 1
          && (!extent_of (PyTuple_GetItem (strides, d), &stride) || stride != n))
        return array_error (state, what, obj, NOT_CONTIGUOUS);
      if (!g_size_checked_mul (&n, n, size))
        {
          g_autofree char *text = repr_of (shape);
          return array_error (state, what, obj,
                              "whose %s has shape %s, more bytes than memory holds",
                              protocol, text);
        }
    }
  *nbytes = n;
  return 0;
}

/* @obj's array interface @cai (a dict: __cuda_array_interface__ or numpy's
 * __array_interface__, named @protocol) into @array. */
static int
from_array_interface (TgpyState *state, PyObject *obj, PyObject *cai,
                      const char *protocol, const char *what, TgpyArray *array)
{
  PyObject *data, *shape, *typestr, *strides, *version, *mask;
  const char *ts;
  gsize itemsize = 0;
  gsize version_n;

  if (!PyDict_Check (cai))
    return array_error (state, what, obj,
                        "whose %s is not a dict; its producer is broken", protocol);
  data = PyDict_GetItemString (cai, "data");
  shape = PyDict_GetItemString (cai, "shape");
  typestr = PyDict_GetItemString (cai, "typestr");
  strides = PyDict_GetItemString (cai, "strides");
  version = PyDict_GetItemString (cai, "version");
  mask = PyDict_GetItemString (cai, "mask");
  if (data == NULL || !PyTuple_Check (data) || PyTuple_Size (data) != 2
      || !PyLong_Check (PyTuple_GetItem (data, 0)) || shape == NULL
      || !PyTuple_Check (shape) || typestr == NULL || !PyUnicode_Check (typestr))
    return array_error (
        state, what, obj,
        "whose %s lacks a well-formed 'data' (address, read_only), "
        "'shape' (a tuple) or 'typestr' (a str); its producer is broken",
        protocol);
  /* Versions 0 to 3 share what is read here; a later one may not. */
  if (version != NULL && (!extent_of (version, &version_n) || version_n > 3))
    {
      g_autofree char *text = repr_of (version);
      return array_error (state, what, obj,
                          "with %s version %s; TrackGen reads versions 0 to 3",
                          protocol, text);
    }
  if (mask != NULL && mask != Py_None)
    return array_error (state, what, obj,
                        "with a mask; pass the array's data without one");
  ts = PyUnicode_AsUTF8AndSize (typestr, NULL);
  if (ts == NULL
      || !dtype_from_typestr (ts, array->dtype, sizeof array->dtype, &itemsize))
    {
      g_autofree char *text = repr_of (typestr);
      PyErr_Clear ();
      return array_error (state, what, obj,
                          "of type %s, which TrackGen cannot read: it reads numpy "
                          "type strings of this host's byte order, such as '<i4'",
                          text);
    }
  if (cai_extent (state, obj, what, protocol, shape, strides, itemsize, &array->nbytes)
      < 0)
    return -1;
  if (tgpy_address (PyTuple_GetItem (data, 0), what, &array->ptr) < 0)
    {
      g_autofree char *text = repr_of (PyTuple_GetItem (data, 0));
      PyErr_Clear ();
      return array_error (state, what, obj,
                          "whose %s data address %s is not an address", protocol, text);
    }
  return 0;
}

/* DLPack's ABI (dlpack.h, versions 0.x), the part read here. */
typedef struct
{
  int device_type;
  int device_id;
} DLDevice;
typedef struct
{
  uint8_t code, bits;
  uint16_t lanes;
} DLDataType;
typedef struct
{
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape, *strides;
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor
{
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter) (struct DLManagedTensor *self);
} DLManagedTensor;
enum
{
  DL_CPU = 1,
  DL_CUDA = 2,
  DL_CUDA_HOST = 3,
  DL_CUDA_MANAGED = 13,
};

/* A name for every DLPack type: an empty one would let the array pass any
 * dtype check, as an address with no dtype does. */
static void
dtype_from_dlpack (DLDataType t, char *dtype, size_t size)
{
  static const char *const kinds[]
      = { "int", "uint", "float", "opaque", "bfloat", "complex" };

  if (t.code == 6 && t.bits == 8)
    g_strlcpy (dtype, "bool", size);
  else if (t.code < G_N_ELEMENTS (kinds))
    g_snprintf (dtype, size, "%s%u", kinds[t.code], t.bits);
  else
    g_snprintf (dtype, size, "dlpack%u:%u", t.code, t.bits); /* code:bits */
}

/* Refuses memory the GPU does not own: DLPack device @type. */
static int
check_dlpack_device (TgpyState *state, const char *what, PyObject *obj, long type)
{
  if (type == DL_CUDA || type == DL_CUDA_MANAGED)
    return 0;
  return array_error (state, what, obj,
                      "in %s memory (DLPack device type %ld), not on a GPU; move it "
                      "there first (.cuda() or .to(\"cuda\") in torch)",
                      type == DL_CPU         ? "CPU"
                      : type == DL_CUDA_HOST ? "pinned host"
                                             : "other",
                      type);
}

/* __dlpack_device__(), where the object has it: refuses a CPU tensor
 * before __dlpack__ exports it. */
static int
dlpack_device (TgpyState *state, PyObject *obj, const char *what)
{
  PyObject *method = PyObject_GetAttrString (obj, "__dlpack_device__"), *pair;
  long type;

  if (method == NULL)
    {
      if (!PyErr_ExceptionMatches (PyExc_AttributeError))
        return -1;
      PyErr_Clear ();
      return 0;
    }
  pair = PyObject_CallNoArgs (method);
  Py_DECREF (method);
  if (pair == NULL)
    return -1;
  if (!PyTuple_Check (pair) || PyTuple_Size (pair) != 2
      || !PyLong_Check (PyTuple_GetItem (pair, 0)))
    {
      Py_DECREF (pair);
      return array_error (state, what, obj,
                          "whose __dlpack_device__() is not (device type, device id); "
                          "its producer is broken");
    }
  type = PyLong_AsLong (PyTuple_GetItem (pair, 0));
  Py_DECREF (pair);
  if (type == -1 && PyErr_Occurred ())
    PyErr_Clear ();
  return check_dlpack_device (state, what, obj, type);
}

/* The extent of @t in bytes, checked: contiguous, no negative extents. */
static int
dlpack_extent (TgpyState *state, PyObject *obj, const char *what, const DLTensor *t,
               gsize *nbytes)
{
  gsize n, items = 1;

  if (t->dtype.lanes != 1 || t->dtype.bits == 0 || t->dtype.bits % 8 != 0)
    return array_error (state, what, obj,
                        "of DLPack type (code %u, %u bits, %u lanes); pass an array of "
                        "whole-byte scalars",
                        t->dtype.code, t->dtype.bits, t->dtype.lanes);
  if (t->ndim < 0 || (t->ndim > 0 && t->shape == NULL))
    return array_error (state, what, obj,
                        "whose DLPack tensor has %d dimensions and %s shape; its "
                        "producer is broken",
                        (int)t->ndim, t->shape == NULL ? "no" : "a");
  n = t->dtype.bits / 8;
  for (int32_t d = t->ndim - 1; d >= 0; d--)
    {
      if (t->shape[d] < 0)
        return array_error (
            state, what, obj,
            "whose DLPack shape has the negative extent %" G_GINT64_FORMAT
            "; its producer is broken",
            (gint64)t->shape[d]);
      /* Strides count elements; NULL means C-contiguous. */
      if (t->strides != NULL && t->shape[d] > 1 && t->strides[d] != (int64_t)items)
        return array_error (state, what, obj, NOT_CONTIGUOUS);
      if (!g_size_checked_mul (&items, items, (gsize)t->shape[d])
          || !g_size_checked_mul (&n, n, (gsize)t->shape[d]))
        return array_error (state, what, obj,
                            "whose DLPack shape holds more bytes than memory does");
    }
  *nbytes = n;
  return 0;
}

static int
from_dlpack (TgpyState *state, PyObject *obj, PyObject *method, const char *what,
             TgpyArray *array)
{
  PyObject *args, *kwargs, *capsule = NULL, *type, *value, *traceback;
  DLManagedTensor *m;
  const DLTensor *t;
  int rc = -1;

  if (dlpack_device (state, obj, what) < 0)
    return -1;
  /* stream=-1: the producer must not synchronize any stream. */
  args = PyTuple_New (0);
  kwargs = Py_BuildValue ("{s:i}", "stream", -1);
  if (args != NULL && kwargs != NULL)
    capsule = PyObject_Call (method, args, kwargs);
  Py_XDECREF (args);
  Py_XDECREF (kwargs);
  if (capsule == NULL)
    return -1;
  if (!PyCapsule_IsValid (capsule, "dltensor"))
    {
      Py_DECREF (capsule);
      return array_error (state, what, obj,
                          "whose __dlpack__() returned no unused DLPack capsule; its "
                          "producer is broken");
    }
  m = PyCapsule_GetPointer (capsule, "dltensor");
  t = &m->dl_tensor;
  if (check_dlpack_device (state, what, obj, t->device.device_type) == 0
      && dlpack_extent (state, obj, what, t, &array->nbytes) == 0)
    {
      array->ptr = (char *)t->data + t->byte_offset;
      array->device = t->device.device_id;
      dtype_from_dlpack (t->dtype, array->dtype, sizeof array->dtype);
      rc = 0;
    }
  /* The tensor stays alive through @obj, which the caller holds: the
   * capsule's reference is given back at once, as the protocol asks.  The
   * deleter may run Python code (a ctypes callback): a refusal raised above
   * waits aside meanwhile. */
  PyErr_Fetch (&type, &value, &traceback);
  if (PyCapsule_SetName (capsule, "used_dltensor") == 0 && m->deleter != NULL)
    m->deleter (m);
  if (type != NULL)
    PyErr_Restore (type, value, traceback);
  Py_DECREF (capsule);
  return rc;
}

/* A copy of the interface dict @value, whose reference it takes: read from
 * the copy, a key's __eq__ of the caller's cannot empty it while its values
 * are read. */
static PyObject *
interface_copy (PyObject *value)
{
  PyObject *copy = PyDict_Check (value) ? PyDict_Copy (value) : Py_NewRef (value);

  Py_DECREF (value);
  return copy;
}

int
tgpy_host_array (TgpyState *state, PyObject *obj, const char *what, gboolean writable,
                 TgpyArray *array)
{
  PyObject *value, *copy;
  int found = tgpy_protocol (obj, "__array_interface__", &value), rc, read_only = 0;

  memset (array, 0, sizeof *array);
  array->device = -1;
  if (found <= 0)
    return found;
  if ((copy = interface_copy (value)) == NULL)
    return -1;
  rc = from_array_interface (state, obj, copy, "__array_interface__", what, array);
  /* from_array_interface() checked 'data': (address, read_only). */
  if (rc == 0 && writable
      && (read_only
          = PyObject_IsTrue (PyTuple_GetItem (PyDict_GetItemString (copy, "data"), 1)))
             != 0)
    {
      rc = -1;
      if (read_only > 0)
        tgpy_argument_error (PyExc_ValueError, what,
                             "a read-only array; pass one to write");
    }
  Py_DECREF (copy);
  return rc < 0 ? -1 : 1;
}

int
tgpy_array (TgpyState *state, PyObject *obj, const char *what, TgpyArray *array)
{
  PyObject *value;
  int found, rc;

  memset (array, 0, sizeof *array);
  array->device = -1;
  if (PyLong_Check (obj))
    return tgpy_address (obj, what, &array->ptr);
  /* torch raises AttributeError for a CPU tensor's interface: DLPack then
   * says where its memory is. */
  if ((found = tgpy_protocol (obj, "__cuda_array_interface__", &value)) == 1)
    {
      PyObject *copy = interface_copy (value);

      rc = copy == NULL ? -1
                        : from_array_interface (
                            state, obj, copy, "__cuda_array_interface__", what, array);
      Py_XDECREF (copy);
    }
  else if (found == 0 && (found = tgpy_protocol (obj, "__dlpack__", &value)) == 1)
    {
      rc = from_dlpack (state, obj, value, what, array);
      Py_DECREF (value);
    }
  else if (found == 0)
    {
      PyErr_Format (PyExc_TypeError,
                    "%s: expected device memory, not %R: an object with "
                    "__cuda_array_interface__ or __dlpack__ (a torch tensor, a CuPy "
                    "array) or an int address",
                    what, (PyObject *)Py_TYPE (obj));
      return -1;
    }
  else
    return -1;
  if (rc == 0 && array->nbytes == 0)
    return array_error (state, what, obj, EMPTY);
  if (rc == 0 && array->ptr == NULL)
    return array_error (state, what, obj, "at address 0 (NULL)");
  return rc;
}

int
tgpy_array_dtype_check (TgpyState *state, PyObject *obj, const char *what,
                        const TgpyArray *array, const char *dtype)
{
  if (array->dtype[0] == '\0' || strcmp (array->dtype, dtype) == 0)
    return 0;
  if (strcmp (dtype, "int32") == 0)
    return array_error (state, what, obj, INT32_ONLY, array->dtype);
  return array_error (state, what, obj,
                      "of %s, but its stage declared %s; pass an array of %s",
                      array->dtype, dtype, dtype);
}

int
tgpy_int32_array_full (TgpyState *state, PyObject *obj, const char *what, gsize n,
                       TgpyArray *a)
{
  if (tgpy_array (state, obj, what, a) < 0)
    return -1;
  if (strcmp (a->dtype, "uint32") != 0
      && tgpy_array_dtype_check (state, obj, what, a, "int32") < 0)
    return -1;
  if (a->nbytes != 0 && a->nbytes / sizeof (gint32) < n)
    return array_error (state, what, obj,
                        "of %zu bytes, fewer than the %zu int32 read here; pass a "
                        "larger one",
                        a->nbytes, n);
  if (a->ptr == NULL)
    {
      tgpy_argument_error (PyExc_ValueError, what,
                           "a NULL address; use unconditional() for work that always "
                           "runs");
      return -1;
    }
  return 0;
}

int
tgpy_int32_array (TgpyState *state, PyObject *obj, const char *what, gsize n,
                  void **ptr)
{
  TgpyArray a;

  if (tgpy_int32_array_full (state, obj, what, n, &a) < 0)
    return -1;
  *ptr = a.ptr;
  return 0;
}
