/* SPDX-License-Identifier: Apache-2.0 */
/* convert.c: Python numbers as C integers, addresses and timeouts, every
 * range checked here and nowhere else.  PyArg's "I", "K" and "k" codes wrap
 * silently (-1 becomes 2**32 - 1); these never do, and each error names the
 * argument as the Python caller wrote it. */
#include "native.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* @bound as Python writes it in a message. */
static char *
bound_text (guint64 bound)
{
  static const struct
  {
    guint64 value;
    const char *text;
  } powers[] = {
    { G_MAXUINT64, "2**64 - 1" },
    { G_MAXINT64, "2**63 - 1" },
    { G_MAXUINT32, "2**32 - 1" },
    { G_MAXINT32, "2**31 - 1" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (powers); i++)
    if (bound == powers[i].value)
      return g_strdup (powers[i].text);
  return g_strdup_printf ("%" G_GUINT64_FORMAT, bound);
}

/* @obj as an int (a new reference): anything with __index__ (numpy's
 * integers, IntEnum), never a float; TypeError naming @what otherwise. */
static PyObject *
as_int (PyObject *obj, const char *what)
{
  if (obj == NULL || !PyIndex_Check (obj) || PyBool_Check (obj))
    {
      PyErr_Format (PyExc_TypeError, "%s: an int, not %R", what,
                    obj != NULL ? (PyObject *)Py_TYPE (obj) : Py_None);
      return NULL;
    }
  return PyNumber_Index (obj);
}

/* Whether @v (an int) lies in [@min, @max], computed without wrapping: *out
 * is its value when it does. */
static int
in_range (PyObject *v, gint64 min, guint64 max, guint64 *out, gboolean *inside)
{
  int overflow;
  long long n = PyLong_AsLongLongAndOverflow (v, &overflow);

  if (n == -1 && PyErr_Occurred ())
    return -1;
  if (overflow < 0 || (overflow == 0 && n < min))
    {
      *inside = FALSE;
      return 0;
    }
  if (overflow == 0)
    {
      /* n >= min here: a negative n is inside (min < 0), else compare. */
      *out = (guint64)n;
      *inside = n < 0 || (guint64)n <= max;
      return 0;
    }
  /* Past 2**63 - 1: as an unsigned 64-bit value, or past that too. */
  *out = PyLong_AsUnsignedLongLong (v);
  if (*out == (guint64)-1 && PyErr_Occurred ())
    {
      if (!PyErr_ExceptionMatches (PyExc_OverflowError))
        return -1;
      PyErr_Clear ();
      *inside = FALSE;
      return 0;
    }
  *inside = *out <= max;
  return 0;
}

static gboolean
is_negative (PyObject *v)
{
  int overflow;
  long long n = PyLong_AsLongLongAndOverflow (v, &overflow);

  return overflow < 0 || (overflow == 0 && n < 0);
}

static int
ranged (PyObject *obj, const char *what, gint64 min, guint64 max, PyObject *exc,
        guint64 *out)
{
  PyObject *v = as_int (obj, what);
  gboolean inside = FALSE;
  int rc;

  if (v == NULL)
    return -1;
  rc = in_range (v, min, max, out, &inside);
  if (rc == 0 && !inside)
    {
      char *top = bound_text (max);
      PyErr_Format (exc, "%s: %R is out of range; pass an int from %lld to %s", what,
                    v, (long long)min, top);
      g_free (top);
      rc = -1;
    }
  Py_DECREF (v);
  return rc;
}

int
tgpy_uint (PyObject *obj, const char *what, guint64 max, guint64 *out)
{
  return ranged (obj, what, 0, max, PyExc_OverflowError, out);
}

int
tgpy_count (PyObject *obj, const char *what, gint64 min, gint64 max, gint64 *out)
{
  guint64 v;

  if (ranged (obj, what, min, (guint64)max, PyExc_ValueError, &v) < 0)
    return -1;
  *out = (gint64)v;
  return 0;
}

int
tgpy_optional_count (PyObject *obj, const char *what, gint64 min, gint64 max,
                     gint64 *out)
{
  if (obj == NULL || obj == Py_None)
    {
      *out = -1;
      return 0;
    }
  return tgpy_count (obj, what, min, max, out);
}

int
tgpy_device (PyObject *obj, const char *what, int *device)
{
  gint64 v = 0;

  if (obj != NULL && tgpy_count (obj, what, 0, G_MAXINT32, &v) < 0)
    return -1;
  *device = (int)v;
  return 0;
}

int
tgpy_address (PyObject *obj, const char *what, void **address)
{
  PyObject *v = as_int (obj, what);
  guint64 n = 0;
  gboolean inside = FALSE;
  int rc;

  if (v == NULL)
    return -1;
  rc = in_range (v, 0, UINTPTR_MAX, &n, &inside);
  if (rc == 0 && !inside)
    {
      /* A negative handle is never sign-extended into a valid-looking one. */
      PyErr_Format (is_negative (v) ? PyExc_ValueError : PyExc_OverflowError,
                    "%s: %R is not an address or a handle (those are from 0 to "
                    "2**64 - 1)",
                    what, v);
      rc = -1;
    }
  Py_DECREF (v);
  *address = (void *)(guintptr)n;
  return rc;
}

int
tgpy_timeout (PyObject *obj, const char *what, gint64 *us)
{
  double s;

  if (obj == NULL || obj == Py_None)
    {
      *us = G_MAXINT64;
      return 0;
    }
  if (PyBool_Check (obj) || (!PyFloat_Check (obj) && !PyIndex_Check (obj)))
    {
      PyErr_Format (PyExc_TypeError, "%s: seconds as a float or an int, or None, not %R",
                    what, (PyObject *)Py_TYPE (obj));
      return -1;
    }
  if (PyFloat_Check (obj))
    s = PyFloat_AsDouble (obj);
  else
    {
      /* An exception of the caller's __index__ reaches them unchanged. */
      PyObject *n = PyNumber_Index (obj);

      if (n == NULL)
        return -1;
      /* An int past a double's range: forever, or as negative as any. */
      if ((s = PyLong_AsDouble (n)) == -1.0 && PyErr_Occurred ())
        {
          PyErr_Clear ();
          s = is_negative (n) ? -1.0 : INFINITY;
        }
      Py_DECREF (n);
    }
  if (isnan (s) || s < 0)
    {
      PyErr_Format (PyExc_ValueError,
                    "%s: %R seconds; pass 0 or more, or None to wait forever", what,
                    obj);
      return -1;
    }
  *us = s * 1e6 >= (double)G_MAXINT64 ? G_MAXINT64 : (gint64)(s * 1e6);
  return 0;
}

int
tgpy_uint_array (PyObject *obj, const char *what, guint64 max, gsize width,
                 gpointer *out, gsize *n)
{
  PyObject *tuple = PySequence_Tuple (obj);
  guint8 *values;

  *out = NULL;
  if (tuple == NULL)
    return -1;
  *n = (gsize)PyTuple_Size (tuple);
  values = g_malloc0 (*n * width + 1);
  for (gsize i = 0; i < *n; i++)
    {
      PyObject *value = PyTuple_GetItem (tuple, (Py_ssize_t)i);
      char item[128];
      guint64 v;
      gboolean inside = FALSE;

      /* A plain int in range needs no name; any other value goes the way
       * of every argument, named for its error. */
      if (PyLong_CheckExact (value) && in_range (value, 0, max, &v, &inside) < 0)
        PyErr_Clear ();
      if (!inside)
        g_snprintf (item, sizeof item, "%s[%zu]", what, i);
      if (!inside && tgpy_uint (value, item, max, &v) < 0)
        {
          g_free (values);
          Py_DECREF (tuple);
          return -1;
        }
      if (width == sizeof (guint64))
        ((guint64 *)values)[i] = v;
      else
        ((guint32 *)values)[i] = (guint32)v;
    }
  Py_DECREF (tuple);
  *out = values;
  return 0;
}

int
tgpy_bool (PyObject *obj, const char *what, gboolean *out)
{
  if (!PyBool_Check (obj))
    {
      PyErr_Format (PyExc_TypeError, "%s: True or False, not %R", what,
                    (PyObject *)Py_TYPE (obj));
      return -1;
    }
  *out = obj == Py_True;
  return 0;
}

int
tgpy_callable (PyObject *obj, const char *what, gboolean optional)
{
  if (PyCallable_Check (obj) || (optional && obj == Py_None))
    return 0;
  PyErr_Format (PyExc_TypeError, "%s: a callable%s, not %R", what,
                optional ? " or None" : "", (PyObject *)Py_TYPE (obj));
  return -1;
}

int
tgpy_callable_tuple (PyObject *seq, const char *what, PyObject **tuple)
{
  Py_ssize_t n;

  if ((*tuple = PySequence_Tuple (seq)) == NULL)
    return -1;
  n = PyTuple_Size (*tuple);
  for (Py_ssize_t i = 0; i < n; i++)
    {
      char *item = g_strdup_printf ("%s[%zd]", what, i);
      int r = tgpy_callable (PyTuple_GetItem (*tuple, i), item, FALSE);

      g_free (item);
      if (r < 0)
        {
          Py_CLEAR (*tuple);
          return -1;
        }
    }
  return 0;
}

int
tgpy_name (PyObject *obj, const char *what, gboolean allow_empty, const char **out)
{
  Py_ssize_t size;

  if (!PyUnicode_Check (obj))
    {
      PyErr_Format (PyExc_TypeError, "%s: a str, not %R", what, (PyObject *)Py_TYPE (obj));
      return -1;
    }
  if ((*out = PyUnicode_AsUTF8AndSize (obj, &size)) == NULL)
    return -1;
  /* C would see the name end at the NUL: refused, never cut short. */
  if ((gsize)size != strlen (*out))
    {
      PyErr_Format (PyExc_ValueError, "%s: %R holds a NUL character", what, obj);
      return -1;
    }
  if (size == 0 && !allow_empty)
    {
      PyErr_Format (PyExc_ValueError, "%s: an empty name", what);
      return -1;
    }
  return 0;
}
