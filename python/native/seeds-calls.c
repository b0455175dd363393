/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-calls.c: SeedState's calls, each one libtrackgen seed call: the
 * capturable ones on device arrays (advance, reset_epochs, fill_effective,
 * set_seeds_device) and the blocking ones on host data (set_seeds, read,
 * write, snapshot, restore).  Device arrays (masks, outputs, ids, seeds)
 * come as arrays or addresses; host arrays as bytes-like objects of
 * little-endian integers, as the snapshot format is. */
#include "seeds-private.h"

/* Runs @call (a libtrackgen seed call on @s, setting error_) without the
 * GIL, holding a reference to @s: a close() from another thread meanwhile
 * frees it only after the call.  @s is asked for again first: the
 * arguments' conversions ran the caller's Python code (an __index__, an
 * array interface), which may have closed the state. */
#define CALL(obj, s, ok, call)                                                         \
  G_STMT_START                                                                         \
  {                                                                                    \
    GError *error_ = NULL;                                                             \
    if (((s) = tgpy_seed_state_open (obj)) == NULL)                                    \
      ok = FALSE;                                                                      \
    else                                                                               \
      {                                                                                \
        tg_seed_state_ref (s);                                                         \
        Py_BEGIN_ALLOW_THREADS ok = (call);                                            \
        tg_seed_state_unref (s);                                                       \
        Py_END_ALLOW_THREADS if (!ok) tgpy_raise (tgpy_state_of (obj), error_, NULL);  \
      }                                                                                \
  }                                                                                    \
  G_STMT_END

/* The stream of a call, and the ambient stream libtrackgen's stream rule
 * uses when it names none (tgpy_ambient()). */
static int
stream_arg (PyObject *self, TgSeedState **s, PyObject *obj, TgCallStream *stream)
{
  *stream = TG_CALL_STREAM (TG_STREAM_AUTO);
  /* The stream's __cuda_stream__, and the framework's stream getter, may
   * have closed the state. */
  if (tgpy_stream (obj, "stream", &stream->stream) < 0
      || (*s = tgpy_seed_state_open (self)) == NULL
      || tgpy_ambient (tgpy_state_of (self), tg_seed_state_get_device (*s), stream) < 0
      || (*s = tgpy_seed_state_open (self)) == NULL)
    return -1;
  return 0;
}

/* A device array's address and its length in elements of @itemsize (the
 * array's, or @given when it is an address). */
static int
device_elems (TgpyState *state, PyObject *obj, const char *what, size_t itemsize,
              gint64 given, void **ptr, gsize *len)
{
  TgpyArray a;

  if (tgpy_array (state, obj, what, &a) < 0)
    return -1;
  /* libtrackgen takes NULL for misuse, never for an argument error. */
  if (a.ptr == NULL)
    {
      tgpy_argument_error (PyExc_ValueError, what, "a NULL address");
      return -1;
    }
  *ptr = a.ptr;
  if (given >= 0 && a.nbytes != 0 && (guint64)given > a.nbytes / itemsize)
    {
      tgpy_argument_error (PyExc_ValueError, what,
                           "%" G_GINT64_FORMAT
                           " elements given, but the array holds %zu; "
                           "pass at most its length",
                           given, a.nbytes / itemsize);
      return -1;
    }
  if (given >= 0)
    *len = (gsize)given;
  else if (a.nbytes != 0)
    *len = a.nbytes / itemsize;
  else
    {
      tgpy_argument_error (PyExc_ValueError, what,
                           "the length of an int address is not known: pass it");
      return -1;
    }
  return 0;
}

static PyObject *
masked_call (PyObject *obj, PyObject *args, PyObject *kwargs, gboolean reset)
{
  static char *names[] = { "stream", "mask", "mask_len", NULL };
  TgSeedState *s = tgpy_seed_state_open (obj);
  PyObject *stream_obj = Py_None, *mask_obj = Py_None, *len_obj = Py_None;
  gint64 given;
  TgCallStream stream;
  void *mask = NULL;
  gsize len = 0;
  gboolean ok;

  if (s == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "|OOO", names, &stream_obj,
                                       &mask_obj, &len_obj)
      || tgpy_optional_count (len_obj, "mask_len", 0, G_MAXUINT32, &given) < 0
      || stream_arg (obj, &s, stream_obj, &stream) < 0
      || (mask_obj != Py_None
          && device_elems (tgpy_state_of (obj), mask_obj, "mask", 1, given, &mask, &len)
                 < 0))
    return NULL;
  if (reset)
    CALL (obj, s, ok, tg_seed_state_reset_epochs_full (s, &stream, mask, len, &error_));
  else
    CALL (obj, s, ok, tg_seed_state_advance_full (s, &stream, mask, len, &error_));
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

PyObject *
tgpy_seed_state_advance (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  return masked_call (obj, args, kwargs, FALSE);
}

PyObject *
tgpy_seed_state_reset_epochs (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  return masked_call (obj, args, kwargs, TRUE);
}

PyObject *
tgpy_seed_state_fill_effective (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "out", "stream", "out_len", NULL };
  TgSeedState *s = tgpy_seed_state_open (obj);
  PyObject *out_obj, *stream_obj = Py_None, *len_obj = Py_None;
  gint64 given;
  TgCallStream stream;
  void *out;
  gsize len;
  gboolean ok;

  if (s == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "O|OO:fill_effective", names,
                                       &out_obj, &stream_obj, &len_obj)
      || tgpy_optional_count (len_obj, "out_len", 0, G_MAXUINT32, &given) < 0
      || stream_arg (obj, &s, stream_obj, &stream) < 0
      || device_elems (tgpy_state_of (obj), out_obj, "out", sizeof (guint64), given,
                       &out, &len)
             < 0)
    return NULL;
  CALL (obj, s, ok, tg_seed_state_fill_effective_full (s, &stream, out, len, &error_));
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

PyObject *
tgpy_seed_state_set_seeds_device (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "env_ids", "seeds", "stream", "n", NULL };
  TgSeedState *s = tgpy_seed_state_open (obj);
  PyObject *ids_obj, *seeds_obj, *stream_obj = Py_None, *n_obj = Py_None;
  gint64 given;
  TgCallStream stream;
  void *ids, *seeds;
  gsize n_ids, n_seeds;
  gboolean ok;

  if (s == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "OO|OO:set_seeds_device", names,
                                       &ids_obj, &seeds_obj, &stream_obj, &n_obj)
      || tgpy_optional_count (n_obj, "n", 0, G_MAXUINT32, &given) < 0
      || stream_arg (obj, &s, stream_obj, &stream) < 0
      || device_elems (tgpy_state_of (obj), ids_obj, "env_ids", sizeof (guint32), given,
                       &ids, &n_ids)
             < 0
      || device_elems (tgpy_state_of (obj), seeds_obj, "seeds", sizeof (guint64), given,
                       &seeds, &n_seeds)
             < 0)
    return NULL;
  if (n_ids != n_seeds || n_ids > G_MAXUINT)
    return tgpy_argument_error (PyExc_ValueError, "seeds",
                                "%zu seeds for %zu env ids: pass as many of each",
                                n_seeds, n_ids);
  CALL (obj, s, ok,
        tg_seed_state_set_seeds_device_full (s, &stream, ids, seeds, (guint)n_ids,
                                             &error_));
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

PyObject *
tgpy_seed_state_set_seeds (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "env_ids", "seeds", "stream", NULL };
  TgSeedState *s = tgpy_seed_state_open (obj);
  PyObject *ids_obj, *seeds_obj, *stream_obj = Py_None;
  const char *ids_data, *seeds_data;
  Py_ssize_t ids_size, seeds_size;
  TgCallStream stream;
  guint *ids;
  guint64 *seeds;
  gsize n;
  gboolean ok;

  if (s == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "OO|O:set_seeds", names, &ids_obj,
                                       &seeds_obj, &stream_obj)
      || stream_arg (obj, &s, stream_obj, &stream) < 0
      || tgpy_host_bytes (ids_obj, "env_ids", &ids_data, &ids_size) < 0
      || tgpy_host_bytes (seeds_obj, "seeds", &seeds_data, &seeds_size) < 0)
    return NULL;
  n = (gsize)ids_size / sizeof (guint32);
  if ((gsize)ids_size % sizeof (guint32) != 0
      || (gsize)seeds_size != n * sizeof (guint64))
    return tgpy_argument_error (
        PyExc_ValueError, "seeds",
        "%zd bytes of uint32 ids and %zd bytes of uint64 seeds: "
        "pass as many of each",
        ids_size, seeds_size);
  ids = g_memdup2 (ids_data, ids_size);
  seeds = g_memdup2 (seeds_data, seeds_size);
#if G_BYTE_ORDER != G_LITTLE_ENDIAN
  for (gsize k = 0; k < n; k++)
    {
      ids[k] = GUINT32_FROM_LE (ids[k]);
      seeds[k] = GUINT64_FROM_LE (seeds[k]);
    }
#endif
  CALL (obj, s, ok,
        tg_seed_state_set_seeds_full (s, &stream, ids, seeds, (guint)n, &error_));
  g_free (ids);
  g_free (seeds);
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

PyObject *
tgpy_seed_state_read (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "stream", NULL };
  TgSeedState *s = tgpy_seed_state_open (obj);
  PyObject *stream_obj = Py_None, *seeds_list = NULL, *epochs_list = NULL;
  TgCallStream stream;
  guint64 *seeds;
  guint32 *epochs;
  guint n;
  gboolean ok;

  if (s == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "|O:read", names, &stream_obj)
      || stream_arg (obj, &s, stream_obj, &stream) < 0)
    return NULL;
  n = tg_seed_state_get_n_envs (s);
  seeds = g_new (guint64, n);
  epochs = g_new (guint32, n);
  CALL (obj, s, ok, tg_seed_state_read_full (s, &stream, seeds, epochs, &error_));
  if (ok && (seeds_list = PyList_New (n)) != NULL
      && (epochs_list = PyList_New (n)) != NULL)
    for (guint i = 0; i < n && ok; i++)
      {
        PyObject *seed = PyLong_FromUnsignedLongLong (seeds[i]);
        PyObject *epoch = PyLong_FromUnsignedLong (epochs[i]);

        ok = seed != NULL && epoch != NULL;
        /* PyList_SetItem steals a reference even when it fails. */
        ok = PyList_SetItem (seeds_list, i, seed) == 0 && ok;
        ok = PyList_SetItem (epochs_list, i, epoch) == 0 && ok;
      }
  g_free (seeds);
  g_free (epochs);
  if (!ok || epochs_list == NULL)
    {
      Py_XDECREF (seeds_list);
      Py_XDECREF (epochs_list);
      return NULL;
    }
  return Py_BuildValue ("(NN)", seeds_list, epochs_list);
}

/* @obj's n integers, each at most @max, into @out; None leaves @out NULL. */
static int
host_ints (PyObject *obj, const char *what, guint n, guint64 max, gsize width,
           gpointer *out)
{
  gsize len;

  *out = NULL;
  if (obj == Py_None)
    return 0;
  if (tgpy_uint_array (obj, what, max, width, out, &len) < 0)
    return -1;
  if (len != n)
    {
      g_clear_pointer (out, g_free);
      tgpy_argument_error (PyExc_ValueError, what, "%zu values for %u envs", len, n);
      return -1;
    }
  return 0;
}

PyObject *
tgpy_seed_state_write (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "seeds", "epochs", "stream", NULL };
  TgSeedState *s = tgpy_seed_state_open (obj);
  PyObject *seeds_obj = Py_None, *epochs_obj = Py_None, *stream_obj = Py_None;
  gpointer seeds = NULL, epochs = NULL;
  TgCallStream stream;
  gboolean ok = FALSE;
  guint n;

  if (s == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "|OOO:write", names, &seeds_obj,
                                       &epochs_obj, &stream_obj)
      || stream_arg (obj, &s, stream_obj, &stream) < 0)
    return NULL;
  n = tg_seed_state_get_n_envs (s);
  if (host_ints (seeds_obj, "seeds", n, G_MAXUINT64, sizeof (guint64), &seeds) == 0
      && host_ints (epochs_obj, "epochs", n, G_MAXUINT32, sizeof (guint32), &epochs)
             == 0)
    CALL (obj, s, ok, tg_seed_state_write_full (s, &stream, seeds, epochs, &error_));
  g_free (seeds);
  g_free (epochs);
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

PyObject *
tgpy_seed_state_snapshot (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "stream", NULL };
  TgSeedState *s = tgpy_seed_state_open (obj);
  PyObject *stream_obj = Py_None, *result;
  TgCallStream stream;
  GBytes *bytes = NULL;
  gconstpointer data;
  gsize size;
  gboolean ok;

  if (s == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "|O:snapshot", names, &stream_obj)
      || stream_arg (obj, &s, stream_obj, &stream) < 0)
    return NULL;
  CALL (obj, s, ok,
        (bytes = tg_seed_state_snapshot_full (s, &stream, &error_)) != NULL);
  if (!ok)
    return NULL;
  data = g_bytes_get_data (bytes, &size);
  result = PyBytes_FromStringAndSize (data, (Py_ssize_t)size);
  g_bytes_unref (bytes);
  return result;
}

PyObject *
tgpy_seed_state_restore (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "snapshot", "stream", NULL };
  TgSeedState *s = tgpy_seed_state_open (obj);
  PyObject *snapshot_obj, *stream_obj = Py_None;
  const char *data;
  Py_ssize_t size;
  TgCallStream stream;
  GBytes *bytes;
  gboolean ok;

  if (s == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "O|O:restore", names,
                                       &snapshot_obj, &stream_obj)
      || stream_arg (obj, &s, stream_obj, &stream) < 0
      || tgpy_host_bytes (snapshot_obj, "snapshot", &data, &size) < 0)
    return NULL;
  bytes = g_bytes_new (data, (gsize)size);
  CALL (obj, s, ok, tg_seed_state_restore_full (s, &stream, bytes, &error_));
  g_bytes_unref (bytes);
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}
