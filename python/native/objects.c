/* objects.c: streams and device arrays as the ecosystem passes them: raw
 * handles as ints, torch streams and tensors, CUDA's stream protocol
 * (__cuda_stream__), the CUDA array interface and DLPack.  Nothing here
 * imports torch, or touches a stream: reading an array's address must not
 * enqueue anything (a capture may be in progress). */
#include "native.h"

#include <string.h>

/* An int attribute's value as a handle; -1 when @obj lacks it, -2 on error. */
static int
pointer_attr (PyObject *obj, const char *name, const char *what, void **out)
{
  PyObject *v;
  int rc;

  if (!PyObject_HasAttrString (obj, name))
    return -1;
  if ((v = PyObject_GetAttrString (obj, name)) == NULL)
    return -2;
  rc = tgpy_address (v, what, out) < 0 ? -2 : 0;
  Py_DECREF (v);
  return rc;
}

int
tgpy_stream (PyObject *obj, const char *what, cudaStream_t *stream)
{
  void *handle = NULL;
  PyObject *protocol;
  int found;

  if (obj == NULL || obj == Py_None)
    {
      *stream = TG_STREAM_AUTO;
      return 0;
    }
  if (PyLong_Check (obj))
    return tgpy_address (obj, what, (void **)stream);
  /* CUDA's stream protocol: (version, handle). */
  if (PyObject_HasAttrString (obj, "__cuda_stream__"))
    {
      PyObject *pair = NULL, *h;

      if ((protocol = PyObject_GetAttrString (obj, "__cuda_stream__")) == NULL)
        return -1;
      pair = PyObject_CallNoArgs (protocol);
      Py_DECREF (protocol);
      if (pair == NULL)
        return -1;
      if (!PyTuple_Check (pair) || PyTuple_Size (pair) != 2
          || !PyLong_Check (h = PyTuple_GetItem (pair, 1)))
        {
          Py_DECREF (pair);
          tgpy_argument_error (PyExc_TypeError, what,
                               "__cuda_stream__() must return (version, handle)");
          return -1;
        }
      found = tgpy_address (h, what, &handle);
      Py_DECREF (pair);
      if (found < 0)
        return -1;
      *stream = handle;
      return 0;
    }
  /* torch.cuda.Stream and ExternalStream, then CuPy's streams. */
  if ((found = pointer_attr (obj, "cuda_stream", what, &handle)) == -1)
    found = pointer_attr (obj, "ptr", what, &handle);
  if (found == 0)
    {
      *stream = handle;
      return 0;
    }
  if (found == -1)
    tgpy_argument_error (PyExc_TypeError, what,
                         "expected None (TrackGen chooses), an int cudaStream_t (0 is "
                         "the legacy default stream), a torch.cuda.Stream, or an "
                         "object with __cuda_stream__");
  return -1;
}

PyObject *
tgpy_stream_to_object (cudaStream_t stream)
{
  if (stream == TG_STREAM_AUTO)
    Py_RETURN_NONE;
  return PyLong_FromVoidPtr (stream);
}

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
  int bytes;

  /* "<f4": byte order, kind, size; only this host's order is readable. */
  if (strlen (typestr) < 3 || (typestr[0] != '<' && typestr[0] != '|'))
    return FALSE;
  bytes = atoi (typestr + 2);
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
  return bytes > 0;
}

/* The product of @shape's sizes, checking C-contiguous @strides (None, or
 * in bytes) against @itemsize. */
static int
extent (PyObject *shape, PyObject *strides, size_t itemsize, const char *what,
        size_t *n_items)
{
  Py_ssize_t ndim = PyTuple_Size (shape);
  size_t n = 1, expected = itemsize;

  if (strides != NULL && strides != Py_None
      && (!PyTuple_Check (strides) || PyTuple_Size (strides) != ndim))
    {
      tgpy_argument_error (PyExc_TypeError, what, "malformed strides");
      return -1;
    }
  for (Py_ssize_t d = ndim - 1; d >= 0; d--)
    {
      long long size = PyLong_AsLongLong (PyTuple_GetItem (shape, d));

      if (size < 0 || PyErr_Occurred ())
        {
          if (!PyErr_Occurred ())
            tgpy_argument_error (PyExc_ValueError, what, "a negative extent");
          return -1;
        }
      if (strides != NULL && strides != Py_None && size > 1)
        {
          long long stride = PyLong_AsLongLong (PyTuple_GetItem (strides, d));
          if ((size_t)stride != expected)
            {
              tgpy_argument_error (PyExc_ValueError, what,
                                   "the array is not C-contiguous; pass a contiguous "
                                   "one (.contiguous() in torch)");
              return -1;
            }
        }
      expected *= (size_t)size;
      n *= (size_t)size;
    }
  *n_items = n;
  return 0;
}

static int
from_cuda_array_interface (PyObject *obj, const char *what, TgpyArray *array)
{
  PyObject *cai = PyObject_GetAttrString (obj, "__cuda_array_interface__");
  PyObject *data, *shape, *typestr, *strides;
  size_t itemsize = 0, n = 0;
  int rc = -1;

  if (cai == NULL)
    return -1;
  if (!PyDict_Check (cai) || (data = PyDict_GetItemString (cai, "data")) == NULL
      || (shape = PyDict_GetItemString (cai, "shape")) == NULL
      || (typestr = PyDict_GetItemString (cai, "typestr")) == NULL
      || !PyTuple_Check (data) || PyTuple_Size (data) < 1 || !PyTuple_Check (shape)
      || !PyUnicode_Check (typestr))
    {
      tgpy_argument_error (PyExc_TypeError, what, "malformed __cuda_array_interface__");
      goto out;
    }
  strides = PyDict_GetItemString (cai, "strides");
  if (!dtype_from_typestr (PyUnicode_AsUTF8AndSize (typestr, NULL), array->dtype,
                           sizeof array->dtype, &itemsize))
    {
      tgpy_argument_error (PyExc_ValueError, what,
                           "an array of type %s, which is not "
                           "of this host's byte order",
                           PyUnicode_AsUTF8AndSize (typestr, NULL));
      goto out;
    }
  if (extent (shape, strides, itemsize, what, &n) < 0)
    goto out;
  array->ptr = PyLong_AsVoidPtr (PyTuple_GetItem (data, 0));
  if (PyErr_Occurred ())
    goto out;
  array->nbytes = n * itemsize;
  array->device = -1;
  rc = 0;
out:
  Py_DECREF (cai);
  return rc;
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
  DL_CUDA = 2,
  DL_CUDA_MANAGED = 13,
};

static void
dtype_from_dlpack (DLDataType t, char *dtype, size_t size)
{
  static const char *const kinds[] = { "int", "uint", "float", NULL, "bfloat" };

  dtype[0] = '\0';
  if (t.lanes != 1)
    return;
  if (t.code == 6 && t.bits == 8)
    g_strlcpy (dtype, "bool", size);
  else if (t.code < G_N_ELEMENTS (kinds) && kinds[t.code] != NULL)
    g_snprintf (dtype, size, "%s%u", kinds[t.code], t.bits);
}

static int
from_dlpack (PyObject *obj, const char *what, TgpyArray *array)
{
  PyObject *method = PyObject_GetAttrString (obj, "__dlpack__");
  PyObject *args = PyTuple_New (0);
  /* stream=-1: the producer must not synchronize any stream. */
  PyObject *kwargs = Py_BuildValue ("{s:i}", "stream", -1);
  PyObject *capsule = NULL;
  DLManagedTensor *m;
  const DLTensor *t;
  size_t n = 1, expected, itemsize;
  int rc = -1;

  if (method != NULL && args != NULL && kwargs != NULL)
    capsule = PyObject_Call (method, args, kwargs);
  Py_XDECREF (method);
  Py_XDECREF (args);
  Py_XDECREF (kwargs);
  if (capsule == NULL)
    return -1;
  if ((m = PyCapsule_GetPointer (capsule, "dltensor")) == NULL)
    goto out;
  t = &m->dl_tensor;
  if (t->device.device_type != DL_CUDA && t->device.device_type != DL_CUDA_MANAGED)
    {
      tgpy_argument_error (PyExc_ValueError, what,
                           "a tensor on DLPack device type %d, not CUDA memory; move "
                           "it to the GPU first",
                           t->device.device_type);
      goto release;
    }
  itemsize = ((size_t)t->dtype.bits * t->dtype.lanes + 7) / 8;
  expected = itemsize;
  for (int32_t d = t->ndim - 1; d >= 0; d--)
    {
      if (t->strides != NULL && t->shape[d] > 1
          && (size_t)t->strides[d] * itemsize != expected)
        {
          tgpy_argument_error (PyExc_ValueError, what,
                               "the array is not C-contiguous; pass a contiguous one "
                               "(.contiguous() in torch)");
          goto release;
        }
      expected *= (size_t)t->shape[d];
      n *= (size_t)t->shape[d];
    }
  array->ptr = (char *)t->data + t->byte_offset;
  array->nbytes = n * itemsize;
  array->device = t->device.device_id;
  dtype_from_dlpack (t->dtype, array->dtype, sizeof array->dtype);
  rc = 0;
release:
  /* The tensor stays alive through @obj, which the caller holds: the
   * capsule's reference is given back at once, as the protocol asks. */
  if (PyCapsule_SetName (capsule, "used_dltensor") == 0 && m->deleter != NULL)
    m->deleter (m);
out:
  Py_DECREF (capsule);
  return rc;
}

int
tgpy_array (PyObject *obj, const char *what, TgpyArray *array)
{
  memset (array, 0, sizeof *array);
  array->device = -1;
  if (PyLong_Check (obj))
    return tgpy_address (obj, what, &array->ptr);
  if (PyObject_HasAttrString (obj, "__cuda_array_interface__"))
    {
      if (from_cuda_array_interface (obj, what, array) == 0)
        return 0;
      /* torch refuses the interface for tensors that require grad, and on
       * the CPU: DLPack says why, or works. */
      if (!PyObject_HasAttrString (obj, "__dlpack__"))
        return -1;
      PyErr_Clear ();
    }
  if (PyObject_HasAttrString (obj, "__dlpack__"))
    return from_dlpack (obj, what, array);
  tgpy_argument_error (PyExc_TypeError, what,
                       "expected device memory: an object with "
                       "__cuda_array_interface__ or __dlpack__ (a torch tensor, a "
                       "CuPy array) or an int address");
  return -1;
}
