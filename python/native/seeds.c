/* SPDX-License-Identifier: Apache-2.0 */
/* seeds.c: SeedState, one Python object per TgSeedState.  Device arrays
 * (masks, outputs, ids, seeds) come as arrays or addresses; host arrays as
 * bytes-like objects of little-endian integers, as the snapshot format is. */
#include "native.h"

#include <string.h>

typedef struct
{
  PyObject_HEAD TgSeedState *state; /* NULL once closed */
  PyObject *weakrefs;
} TgpySeedState;

static TgSeedState *
open_state (PyObject *obj)
{
  TgSeedState *s = ((TgpySeedState *)obj)->state;

  if (s == NULL)
    PyErr_SetString (PyExc_ValueError, "the seed state is closed");
  return s;
}

TgSeedState *
tgpy_seed_state_get (TgpyState *state, PyObject *obj)
{
  if (!PyObject_TypeCheck (obj, (PyTypeObject *)state->seed_state_type))
    {
      PyErr_Format (PyExc_TypeError, "seeds: expected a track_gen SeedState, not %R",
                    (PyObject *)Py_TYPE (obj));
      return NULL;
    }
  return open_state (obj);
}

/* Runs @call (a libtrackgen seed call on @s, setting error_) without the
 * GIL, holding a reference to @s: a close() from another thread meanwhile
 * frees it only after the call. */
#define CALL(obj, s, ok, call)                                                         \
  G_STMT_START                                                                         \
  {                                                                                    \
    GError *error_ = NULL;                                                             \
    tg_seed_state_ref (s);                                                             \
    Py_BEGIN_ALLOW_THREADS ok = (call);                                                \
    tg_seed_state_unref (s);                                                           \
    Py_END_ALLOW_THREADS if (!ok) tgpy_raise (tgpy_state_of (obj), error_, NULL);      \
  }                                                                                    \
  G_STMT_END

/* A bytes-like object's contents (bytes or bytearray). */
static int
host_bytes (PyObject *obj, const char *what, const char **data, Py_ssize_t *size)
{
  if (PyBytes_Check (obj))
    {
      char *d;
      if (PyBytes_AsStringAndSize (obj, &d, size) < 0)
        return -1;
      *data = d;
      return 0;
    }
  if (PyByteArray_Check (obj))
    {
      *data = PyByteArray_AsString (obj);
      *size = PyByteArray_Size (obj);
      return 0;
    }
  tgpy_argument_error (PyExc_TypeError, what, "expected bytes or a bytearray");
  return -1;
}

static PyObject *
seed_state_new (PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *names[]
      = { "n_envs", "base_seed", "device", "first_env", "seeds", NULL };
  allocfunc alloc = PyType_GetSlot (type, Py_tp_alloc);
  PyObject *n_envs_obj, *base_seed_obj = NULL, *device_obj = NULL,
                        *first_env_obj = NULL, *seeds_obj = Py_None;
  guint64 base_seed = 0, first_env = 0;
  gint64 n_envs;
  int device;
  const char *seeds = NULL;
  Py_ssize_t seeds_size = 0;
  TgSeedState *state = NULL;
  TgpySeedState *self;
  gboolean ok;

  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "O|OOOO:SeedState", names,
                                    &n_envs_obj, &base_seed_obj, &device_obj,
                                    &first_env_obj, &seeds_obj)
      || tgpy_count (n_envs_obj, "n_envs", 0, G_MAXUINT32, &n_envs) < 0
      || (base_seed_obj != NULL
          && tgpy_uint (base_seed_obj, "base_seed", G_MAXUINT64, &base_seed) < 0)
      || tgpy_device (device_obj, "device", &device) < 0
      || (first_env_obj != NULL
          && tgpy_uint (first_env_obj, "first_env", G_MAXUINT32, &first_env) < 0))
    return NULL;
  if (seeds_obj != Py_None)
    {
      if (host_bytes (seeds_obj, "seeds", &seeds, &seeds_size) < 0)
        return NULL;
      if ((size_t)seeds_size != (size_t)n_envs * sizeof (guint64))
        return tgpy_argument_error (PyExc_ValueError, "seeds",
                                    "%zd bytes for %" G_GINT64_FORMAT
                                    " envs: pass as many little-endian uint64 (%zu "
                                    "bytes)",
                                    seeds_size, n_envs,
                                    (size_t)n_envs * sizeof (guint64));
      if (first_env != 0)
        return tgpy_argument_error (PyExc_ValueError, "first_env",
                                    "explicit seeds make a state of envs 0 to n - 1");
    }
  {
    GError *error = NULL;
    guint64 *copy = seeds != NULL ? g_memdup2 (seeds, seeds_size) : NULL;

#if G_BYTE_ORDER != G_LITTLE_ENDIAN
    for (gint64 i = 0; copy != NULL && i < n_envs; i++)
      copy[i] = GUINT64_FROM_LE (copy[i]);
#endif
    Py_BEGIN_ALLOW_THREADS;
    if (copy != NULL)
      state = tg_seed_state_new_from_array (device, (guint)n_envs, copy, &error);
    else
      state = tg_seed_state_new_shard (device, (guint)first_env, (guint)n_envs,
                                       base_seed, &error);
    Py_END_ALLOW_THREADS;
    g_free (copy);
    ok = state != NULL;
    if (!ok)
      {
        TgpyState *tgpy = tgpy_state_of_type (type);
        return tgpy != NULL ? tgpy_raise (tgpy, error, NULL) : NULL;
      }
  }
  if ((self = (TgpySeedState *)alloc (type, 0)) == NULL)
    {
      tg_seed_state_unref (state);
      return NULL;
    }
  self->state = state;
  return (PyObject *)self;
}

static void
close_state (TgpySeedState *self)
{
  TgSeedState *s = self->state;

  self->state = NULL;
  if (s != NULL)
    {
      /* Frees device memory: no GIL needed, and none held. */
      Py_BEGIN_ALLOW_THREADS;
      tg_seed_state_unref (s);
      Py_END_ALLOW_THREADS;
    }
}

static void
seed_state_dealloc (TgpySeedState *self)
{
  PyTypeObject *type = Py_TYPE (self);
  freefunc free = PyType_GetSlot (type, Py_tp_free);

  if (self->weakrefs != NULL)
    PyObject_ClearWeakRefs ((PyObject *)self);
  close_state (self);
  free (self);
  Py_DECREF (type);
}

/* The stream of a call, and the ambient stream libtrackgen's stream rule
 * uses when it names none (tgpy_ambient()). */
static int
stream_arg (PyObject *self, TgSeedState *s, PyObject *obj, TgCallStream *stream)
{
  *stream = TG_CALL_STREAM (TG_STREAM_AUTO);
  if (tgpy_stream (obj, "stream", &stream->stream) < 0)
    return -1;
  return tgpy_ambient (tgpy_state_of (self), tg_seed_state_get_device (s), stream);
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
  TgSeedState *s = open_state (obj);
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
      || stream_arg (obj, s, stream_obj, &stream) < 0
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

static PyObject *
seed_state_advance (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  return masked_call (obj, args, kwargs, FALSE);
}

static PyObject *
seed_state_reset_epochs (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  return masked_call (obj, args, kwargs, TRUE);
}

static PyObject *
seed_state_fill_effective (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "out", "stream", "out_len", NULL };
  TgSeedState *s = open_state (obj);
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
      || stream_arg (obj, s, stream_obj, &stream) < 0
      || device_elems (tgpy_state_of (obj), out_obj, "out", sizeof (guint64), given,
                       &out, &len)
             < 0)
    return NULL;
  CALL (obj, s, ok, tg_seed_state_fill_effective_full (s, &stream, out, len, &error_));
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *
seed_state_set_seeds_device (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "env_ids", "seeds", "stream", "n", NULL };
  TgSeedState *s = open_state (obj);
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
      || stream_arg (obj, s, stream_obj, &stream) < 0
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

static PyObject *
seed_state_set_seeds (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "env_ids", "seeds", "stream", NULL };
  TgSeedState *s = open_state (obj);
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
      || stream_arg (obj, s, stream_obj, &stream) < 0
      || host_bytes (ids_obj, "env_ids", &ids_data, &ids_size) < 0
      || host_bytes (seeds_obj, "seeds", &seeds_data, &seeds_size) < 0)
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

static PyObject *
seed_state_read (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "stream", NULL };
  TgSeedState *s = open_state (obj);
  PyObject *stream_obj = Py_None, *seeds_list = NULL, *epochs_list = NULL;
  TgCallStream stream;
  guint64 *seeds;
  guint32 *epochs;
  guint n;
  gboolean ok;

  if (s == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "|O:read", names, &stream_obj)
      || stream_arg (obj, s, stream_obj, &stream) < 0)
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

static PyObject *
seed_state_write (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "seeds", "epochs", "stream", NULL };
  TgSeedState *s = open_state (obj);
  PyObject *seeds_obj = Py_None, *epochs_obj = Py_None, *stream_obj = Py_None;
  gpointer seeds = NULL, epochs = NULL;
  TgCallStream stream;
  gboolean ok = FALSE;

  if (s == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "|OOO:write", names, &seeds_obj,
                                       &epochs_obj, &stream_obj)
      || stream_arg (obj, s, stream_obj, &stream) < 0)
    return NULL;
  if (host_ints (seeds_obj, "seeds", tg_seed_state_get_n_envs (s), G_MAXUINT64,
                 sizeof (guint64), &seeds)
          == 0
      && host_ints (epochs_obj, "epochs", tg_seed_state_get_n_envs (s), G_MAXUINT32,
                    sizeof (guint32), &epochs)
             == 0)
    CALL (obj, s, ok, tg_seed_state_write_full (s, &stream, seeds, epochs, &error_));
  g_free (seeds);
  g_free (epochs);
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *
seed_state_snapshot (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "stream", NULL };
  TgSeedState *s = open_state (obj);
  PyObject *stream_obj = Py_None, *result;
  TgCallStream stream;
  GBytes *bytes = NULL;
  gconstpointer data;
  gsize size;
  gboolean ok;

  if (s == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "|O:snapshot", names, &stream_obj)
      || stream_arg (obj, s, stream_obj, &stream) < 0)
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

static PyObject *
seed_state_restore (PyObject *obj, PyObject *args, PyObject *kwargs)
{
  static char *names[] = { "snapshot", "stream", NULL };
  TgSeedState *s = open_state (obj);
  PyObject *snapshot_obj, *stream_obj = Py_None;
  const char *data;
  Py_ssize_t size;
  TgCallStream stream;
  GBytes *bytes;
  gboolean ok;

  if (s == NULL
      || !PyArg_ParseTupleAndKeywords (args, kwargs, "O|O:restore", names,
                                       &snapshot_obj, &stream_obj)
      || stream_arg (obj, s, stream_obj, &stream) < 0
      || host_bytes (snapshot_obj, "snapshot", &data, &size) < 0)
    return NULL;
  bytes = g_bytes_new (data, (gsize)size);
  CALL (obj, s, ok, tg_seed_state_restore_full (s, &stream, bytes, &error_));
  g_bytes_unref (bytes);
  if (!ok)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *
seed_state_close (PyObject *obj, PyObject *unused)
{
  close_state ((TgpySeedState *)obj);
  Py_RETURN_NONE;
}

#define STATE_GETTER(name, expr)                                                       \
  static PyObject *seed_state_get_##name (PyObject *obj, void *closure)                \
  {                                                                                    \
    TgSeedState *s = open_state (obj);                                                 \
    return s == NULL ? NULL : (expr);                                                  \
  }

STATE_GETTER (n_envs, PyLong_FromUnsignedLong (tg_seed_state_get_n_envs (s)))
STATE_GETTER (first_env, PyLong_FromUnsignedLong (tg_seed_state_get_first_env (s)))
STATE_GETTER (device, PyLong_FromLong (tg_seed_state_get_device (s)))
STATE_GETTER (seeds_ptr, PyLong_FromVoidPtr ((void *)tg_seed_state_get_seeds (s)))
STATE_GETTER (epochs_ptr, PyLong_FromVoidPtr (tg_seed_state_get_epochs (s)))
STATE_GETTER (handle, PyLong_FromVoidPtr (s))

static PyObject *
seed_state_get_closed (PyObject *obj, void *closure)
{
  return PyBool_FromLong (((TgpySeedState *)obj)->state == NULL);
}

static PyMethodDef seed_state_methods[] = {
  { "advance", (PyCFunction)(void (*) (void))seed_state_advance,
    METH_VARARGS | METH_KEYWORDS,
    "advance($self, stream=None, mask=None, mask_len=None)\n"
    "--\n"
    "\n"
    "Enqueues an epoch advance (tg_seed_state_advance()).  Capturable.\n"
    "\n"
    "The epoch of every env whose mask byte is non-zero grows by one (of every\n"
    "env without a mask): the next generation of those envs gets a new key.\n"
    "\n"
    "Args:\n"
    "    stream (StreamLike): Where the work is ordered; None follows the\n"
    "        stream rule (:func:`~track_gen.exec.resolve_stream`).\n"
    "    mask (ArrayLike | None): A uint8 device array, one byte per env, read\n"
    "        when the kernel runs; None advances every env.\n"
    "    mask_len (int | None): The mask's bytes, for an int address." },
  { "reset_epochs", (PyCFunction)(void (*) (void))seed_state_reset_epochs,
    METH_VARARGS | METH_KEYWORDS,
    "reset_epochs($self, stream=None, mask=None, mask_len=None)\n"
    "--\n"
    "\n"
    "Enqueues an epoch reset (tg_seed_state_reset_epochs()).  Capturable.\n"
    "\n"
    "Args:\n"
    "    stream (StreamLike): Where the work is ordered; None follows the\n"
    "        stream rule (:func:`~track_gen.exec.resolve_stream`).\n"
    "    mask (ArrayLike | None): A uint8 device array, one byte per env: the\n"
    "        envs whose epochs become 0; None resets every env.\n"
    "    mask_len (int | None): The mask's bytes, for an int address." },
  { "fill_effective", (PyCFunction)(void (*) (void))seed_state_fill_effective,
    METH_VARARGS | METH_KEYWORDS,
    "fill_effective($self, out, stream=None, out_len=None)\n"
    "--\n"
    "\n"
    "Enqueues ``out[i] = effective_seed(seed[i], epoch[i])``\n"
    "(tg_seed_state_fill_effective()).  Capturable.\n"
    "\n"
    "Args:\n"
    "    out (ArrayLike): A uint64 device array of n_envs elements.\n"
    "    stream (StreamLike): Where the work is ordered; None follows the\n"
    "        stream rule (:func:`~track_gen.exec.resolve_stream`).\n"
    "    out_len (int | None): The elements at an int address." },
  { "set_seeds_device", (PyCFunction)(void (*) (void))seed_state_set_seeds_device,
    METH_VARARGS | METH_KEYWORDS,
    "set_seeds_device($self, env_ids, seeds, stream=None, n=None)\n"
    "--\n"
    "\n"
    "Enqueues a reseed: env ``env_ids[k]`` gets ``seeds[k]`` and epoch 0\n"
    "(tg_seed_state_set_seeds_device()).  Capturable.\n"
    "\n"
    "Args:\n"
    "    env_ids (ArrayLike): A uint32 device array of local env ids, read when\n"
    "        the kernel runs.\n"
    "    seeds (ArrayLike): A uint64 device array, one seed per id.\n"
    "    stream (StreamLike): Where the work is ordered; None follows the\n"
    "        stream rule (:func:`~track_gen.exec.resolve_stream`).\n"
    "    n (int | None): The ids, for int addresses." },
  { "_set_seeds", (PyCFunction)(void (*) (void))seed_state_set_seeds,
    METH_VARARGS | METH_KEYWORDS,
    "_set_seeds($self, env_ids, seeds, stream=None)\n--\n\ntg_seed_state_set_seeds(): "
    "little-endian uint32 ids and uint64 seeds as bytes.  Blocks." },
  { "read", (PyCFunction)(void (*) (void))seed_state_read, METH_VARARGS | METH_KEYWORDS,
    "read($self, stream=None)\n"
    "--\n"
    "\n"
    "The seeds and epochs of every env (tg_seed_state_read()).  Blocks.\n"
    "\n"
    "Args:\n"
    "    stream (StreamLike): Where the work is ordered; None follows the\n"
    "        stream rule (:func:`~track_gen.exec.resolve_stream`).  The read is\n"
    "        ordered after what was enqueued there; a capturing stream is\n"
    "        refused.\n"
    "\n"
    "Returns:\n"
    "    tuple[list[int], list[int]]: The seeds and the epochs." },
  { "write", (PyCFunction)(void (*) (void))seed_state_write,
    METH_VARARGS | METH_KEYWORDS,
    "write($self, seeds=None, epochs=None, stream=None)\n"
    "--\n"
    "\n"
    "Sets the seed and the epoch of every env (tg_seed_state_write()).  Blocks.\n"
    "\n"
    "Args:\n"
    "    seeds (Sequence[int] | None): n_envs seeds; None keeps them.\n"
    "    epochs (Sequence[int] | None): n_envs epochs; None keeps them.\n"
    "    stream (StreamLike): Where the work is ordered; None follows the\n"
    "        stream rule (:func:`~track_gen.exec.resolve_stream`)." },
  { "snapshot", (PyCFunction)(void (*) (void))seed_state_snapshot,
    METH_VARARGS | METH_KEYWORDS,
    "snapshot($self, stream=None)\n"
    "--\n"
    "\n"
    "The state as bytes, for a checkpoint (tg_seed_state_snapshot()).  Blocks.\n"
    "\n"
    "Args:\n"
    "    stream (StreamLike): Where the work is ordered; None follows the\n"
    "        stream rule (:func:`~track_gen.exec.resolve_stream`).  A capturing\n"
    "        stream is refused.\n"
    "\n"
    "Returns:\n"
    "    bytes: What :meth:`restore` takes." },
  { "restore", (PyCFunction)(void (*) (void))seed_state_restore,
    METH_VARARGS | METH_KEYWORDS,
    "restore($self, snapshot, stream=None)\n"
    "--\n"
    "\n"
    "Restores a :meth:`snapshot` of a state of the same envs\n"
    "(tg_seed_state_restore()).  Blocks.\n"
    "\n"
    "Args:\n"
    "    snapshot (bytes): What :meth:`snapshot` returned.\n"
    "    stream (StreamLike): Where the work is ordered; None follows the\n"
    "        stream rule (:func:`~track_gen.exec.resolve_stream`).\n"
    "\n"
    "Raises:\n"
    "    ArgumentError: A snapshot of other envs, of another version, or\n"
    "        truncated." },
  { "close", seed_state_close, METH_NOARGS,
    "close($self)\n"
    "--\n"
    "\n"
    "Drops this object's reference now; graphs that retained the state keep it\n"
    "alive.  Later calls raise ValueError." },
  { NULL },
};

static PyGetSetDef seed_state_getset[] = {
  { "n_envs", seed_state_get_n_envs, NULL, "The number of envs.", NULL },
  { "first_env", seed_state_get_first_env, NULL,
    "The global index of the first env (a shard's).", NULL },
  { "device", seed_state_get_device, NULL, "The state's CUDA device.", NULL },
  { "seeds_ptr", seed_state_get_seeds_ptr, NULL,
    "The device address of the n_envs uint64 seeds, fixed for the state's life.",
    NULL },
  { "epochs_ptr", seed_state_get_epochs_ptr, NULL,
    "The device address of the n_envs uint32 epochs, fixed for the state's life.",
    NULL },
  { "closed", seed_state_get_closed, NULL, "Whether close() was called.", NULL },
  { "_handle", seed_state_get_handle, NULL, "The TgSeedState * (an int).", NULL },
  { NULL },
};

#include <structmember.h>

static PyMemberDef seed_state_members[] = {
  { "__weaklistoffset__", T_PYSSIZET, offsetof (TgpySeedState, weakrefs), READONLY,
    NULL },
  { NULL },
};

static PyType_Slot seed_state_slots[] = {
  { Py_tp_doc,
    "SeedState(n_envs, base_seed=0, device=0, first_env=0, seeds=None)\n--\n\n"
    "Per-env seeds and epochs on one device (TgSeedState): envs [first_env, "
    "first_env + n_envs) of a population seeded from base_seed, or explicit "
    "seeds (little-endian uint64 bytes)." },
  { Py_tp_new, seed_state_new },
  { Py_tp_dealloc, seed_state_dealloc },
  { Py_tp_methods, seed_state_methods },
  { Py_tp_getset, seed_state_getset },
  { Py_tp_members, seed_state_members },
  { 0, NULL },
};

static PyType_Spec seed_state_spec = {
  .name = "track_gen._native.SeedState",
  .basicsize = sizeof (TgpySeedState),
  .flags = TGPY_TPFLAGS | Py_TPFLAGS_BASETYPE,
  .slots = seed_state_slots,
};

/* Seed math on the host, bit-identical to the device's. */

static PyObject *
native_effective_seed (PyObject *module, PyObject *args)
{
  PyObject *seed_obj, *epoch_obj;
  guint64 seed, epoch;

  if (!PyArg_ParseTuple (args, "OO:effective_seed", &seed_obj, &epoch_obj)
      || tgpy_uint (seed_obj, "seed", G_MAXUINT64, &seed) < 0
      || tgpy_uint (epoch_obj, "epoch", G_MAXUINT32, &epoch) < 0)
    return NULL;
  return PyLong_FromUnsignedLongLong (tg_effective_seed (seed, (guint32)epoch));
}

static PyObject *
native_mix64 (PyObject *module, PyObject *z)
{
  guint64 v;

  /* An int of 64 bits, checked as every integer of the package is. */
  if (tgpy_uint (z, "z", G_MAXUINT64, &v) < 0)
    return NULL;
  return PyLong_FromUnsignedLongLong (tg_mix64 (v));
}

static PyObject *
native_env_seed (PyObject *module, PyObject *args)
{
  PyObject *base_obj, *env_obj;
  guint64 base, env;

  if (!PyArg_ParseTuple (args, "OO:env_seed", &base_obj, &env_obj)
      || tgpy_uint (base_obj, "base_seed", G_MAXUINT64, &base) < 0
      || tgpy_uint (env_obj, "env", G_MAXUINT32, &env) < 0)
    return NULL;
  return PyLong_FromUnsignedLongLong (tg_env_seed (base, (guint32)env));
}

static PyMethodDef seed_functions[] = {
  { "effective_seed", native_effective_seed, METH_VARARGS,
    "effective_seed(seed, epoch)\n--\n\ntg_effective_seed(): the seed keying "
    "generation "
    "*epoch* of an env seeded *seed*, bit-identical to the device." },
  { "mix64", native_mix64, METH_O,
    "mix64(z, /)\n--\n\ntg_mix64(): SplitMix64's finalizer, a bijection of 64-bit "
    "integers." },
  { "env_seed", native_env_seed, METH_VARARGS,
    "env_seed(base_seed, env)\n--\n\ntg_env_seed(): env *env*'s seed in a population "
    "seeded *base_seed*." },
  { NULL },
};

int
tgpy_seeds_init_type (PyObject *module, TgpyState *state)
{
  state->seed_state_type = PyType_FromModuleAndSpec (module, &seed_state_spec, NULL);
  if (state->seed_state_type == NULL
      || PyModule_AddObjectRef (module, "SeedState", state->seed_state_type) < 0)
    return -1;
  return PyModule_AddFunctions (module, seed_functions);
}
