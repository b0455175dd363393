/* SPDX-License-Identifier: Apache-2.0 */
/* objects-streams.c: streams as the ecosystem passes them: raw handles as
 * ints, torch streams (and CuPy's), CUDA's stream protocol (__cuda_stream__).
 * Nothing here imports torch, or touches a stream. */
#include "objects-private.h"

/* An int attribute's value as a handle; -1 when @obj lacks it, -2 on error. */
static int
pointer_attr (PyObject *obj, const char *name, const char *what, void **out)
{
  PyObject *v;
  int found = tgpy_protocol (obj, name, &v), rc;

  if (found <= 0)
    return found == 0 ? -1 : -2;
  rc = tgpy_address (v, what, out) < 0 ? -2 : 0;
  Py_DECREF (v);
  return rc;
}

/* Whether @obj speaks an array protocol. */
static gboolean
is_array (PyObject *obj)
{
  static const char *const protocols[]
      = { "__cuda_array_interface__", "__array_interface__", "__dlpack__" };

  for (guint i = 0; i < G_N_ELEMENTS (protocols); i++)
    if (PyObject_HasAttrString (obj, protocols[i]))
      return TRUE;
  return FALSE;
}

int
tgpy_stream (PyObject *obj, const char *what, cudaStream_t *stream)
{
  void *handle = NULL;
  PyObject *method, *pair, *h;
  int found;

  if (obj == NULL || obj == Py_None)
    {
      *stream = TG_STREAM_AUTO;
      return 0;
    }
  if (PyLong_Check (obj))
    return tgpy_address (obj, what, (void **)stream);
  /* CUDA's stream protocol: __cuda_stream__() gives (version, handle). */
  if ((found = tgpy_protocol (obj, "__cuda_stream__", &method)) < 0)
    return -1;
  if (found == 1)
    {
      if (!PyCallable_Check (method))
        {
          Py_DECREF (method);
          return tgpy_argument_error (PyExc_TypeError, what,
                                      "__cuda_stream__ must be a method returning "
                                      "(version, handle)"),
                 -1;
        }
      pair = PyObject_CallNoArgs (method);
      Py_DECREF (method);
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
  /* torch.cuda.Stream and ExternalStream, then CuPy's streams; an array's
   * ptr (a wp.array's) is its data, never a stream. */
  found = pointer_attr (obj, "cuda_stream", what, &handle);
  if (found == -1 && is_array (obj))
    {
      PyErr_Format (PyExc_TypeError,
                    "%s: expected a stream, not an array (%R); pass the stream its "
                    "work is on",
                    what, (PyObject *)Py_TYPE (obj));
      return -1;
    }
  if (found == -1)
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

/* A stream handed back to Python: None for TG_STREAM_AUTO, and 0 for the
 * legacy default stream, which lib names cudaStreamLegacy: 0 is the name
 * torch gives it (torch.cuda.default_stream().cuda_stream) and the one
 * Python callers pass in. */
PyObject *
tgpy_stream_to_object (cudaStream_t stream)
{
  if (stream == TG_STREAM_AUTO)
    Py_RETURN_NONE;
  return PyLong_FromVoidPtr (stream == cudaStreamLegacy ? NULL : stream);
}
