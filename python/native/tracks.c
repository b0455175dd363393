/* SPDX-License-Identifier: Apache-2.0 */
/* tracks.c: the example track producer (examples/track-producer.c), a
 * producer written in C, made available to Python: compiled into this
 * module beside the archives, so it shares their one copy of libtrackgen,
 * and wrapped in the same Producer type as a producer built in Python.  Its
 * configuration comes as keyword arguments. */
#include "native.h"

#include "track-producer.h"

#include <string.h>

/* A float field of TrackShape or TrackConfig set from @kwargs[@name]. */
typedef struct
{
  const char *name;
  gsize offset;
  gboolean is_float;
} Field;

static const Field shape_fields[] = {
  { "n_points", G_STRUCT_OFFSET (TrackShape, n_points), FALSE },
  { "n_control", G_STRUCT_OFFSET (TrackShape, n_control), FALSE },
  { "radius", G_STRUCT_OFFSET (TrackShape, radius), TRUE },
  { "radius_jitter", G_STRUCT_OFFSET (TrackShape, radius_jitter), TRUE },
  { "angle_jitter", G_STRUCT_OFFSET (TrackShape, angle_jitter), TRUE },
  { "width", G_STRUCT_OFFSET (TrackShape, width), TRUE },
  { "min_turn_radius", G_STRUCT_OFFSET (TrackShape, min_turn_radius), TRUE },
};

/* The counts of TrackConfig itself (TrackConfig checks their ranges). */
static const Field config_counts[] = {
  { "max_iters", G_STRUCT_OFFSET (TrackConfig, max_iters), FALSE },
  { "min_iters", G_STRUCT_OFFSET (TrackConfig, min_iters), FALSE },
  { "lookahead", G_STRUCT_OFFSET (TrackConfig, lookahead), FALSE },
  { "refill_batch", G_STRUCT_OFFSET (TrackConfig, refill_batch), FALSE },
};

/* The switches of TrackConfig (gboolean), True or False from Python. */
static const Field config_switches[] = {
  { "advance", G_STRUCT_OFFSET (TrackConfig, advance), FALSE },
  { "overlap", G_STRUCT_OFFSET (TrackConfig, overlap), FALSE },
};

/* @value as a count in [0, G_MAXINT32] into *@out. */
static int
parse_count (const char *name, PyObject *value, guint32 *out)
{
  gint64 v;

  if (tgpy_count (value, name, 0, G_MAXINT32, &v) < 0)
    return -1;
  *out = (guint32)v;
  return 0;
}

/* Applies @kwargs to @config: the shape's fields, its counts, advance; any
 * other key is a TypeError, as for a Python function. */
static int
apply_config (TrackConfig *config, PyObject *kwargs)
{
  PyObject *key, *value;
  Py_ssize_t pos = 0;

  while (kwargs != NULL && PyDict_Next (kwargs, &pos, &key, &value))
    {
      const char *name = PyUnicode_AsUTF8AndSize (key, NULL);
      guint i;

      if (name == NULL)
        return -1;
      for (i = 0; i < G_N_ELEMENTS (config_counts); i++)
        if (strcmp (name, config_counts[i].name) == 0)
          break;
      if (i < G_N_ELEMENTS (config_counts))
        {
          guint32 v;

          if (parse_count (name, value, &v) < 0)
            return -1;
          G_STRUCT_MEMBER (guint, config, config_counts[i].offset) = (guint)v;
          continue;
        }
      for (i = 0; i < G_N_ELEMENTS (config_switches); i++)
        if (strcmp (name, config_switches[i].name) == 0)
          break;
      if (i < G_N_ELEMENTS (config_switches))
        {
          if (tgpy_bool (value, name,
                         &G_STRUCT_MEMBER (gboolean, config, config_switches[i].offset))
              < 0)
            return -1;
          continue;
        }
      for (i = 0; i < G_N_ELEMENTS (shape_fields); i++)
        if (strcmp (name, shape_fields[i].name) == 0)
          break;
      if (i == G_N_ELEMENTS (shape_fields))
        {
          PyErr_Format (PyExc_TypeError, "TrackProducer: unexpected keyword '%s'",
                        name);
          return -1;
        }
      if (shape_fields[i].is_float)
        {
          double v = PyFloat_AsDouble (value);
          if (v == -1.0 && PyErr_Occurred ())
            return -1;
          G_STRUCT_MEMBER (float, &config->shape, shape_fields[i].offset) = (float)v;
        }
      else
        {
          guint32 v;

          if (parse_count (name, value, &v) < 0)
            return -1;
          G_STRUCT_MEMBER (guint32, &config->shape, shape_fields[i].offset) = v;
        }
    }
  return 0;
}

/* _track_producer_new(cls, seeds, stream, **config): a new cls (a subclass
 * of Producer) around track_producer_new() for the envs of @seeds. */
static PyObject *
native_track_producer_new (PyObject *module, PyObject *args, PyObject *kwargs)
{
  TgpyState *state = PyModule_GetState (module);
  PyObject *cls, *seeds_obj, *stream_obj;
  TgSeedState *seeds;
  cudaStream_t stream;
  GError *error = NULL;
  TrackConfig config;
  TgProducer *p;

  if (!PyArg_ParseTuple (args, "OOO:_track_producer_new", &cls, &seeds_obj,
                         &stream_obj))
    return NULL;
  if (!PyType_Check (cls)
      || !PyType_IsSubtype ((PyTypeObject *)cls, (PyTypeObject *)state->producer_type))
    return tgpy_argument_error (PyExc_TypeError, "cls", "not a Producer subclass");
  if (tgpy_stream (stream_obj, "stream", &stream) < 0
      || (seeds = tgpy_seed_state_get (state, seeds_obj)) == NULL)
    return NULL;
  track_config_init (&config, tg_seed_state_get_n_envs (seeds));
  /* The config's values may run Python code that closes the seed state. */
  if (apply_config (&config, kwargs) < 0
      || (seeds = tgpy_seed_state_get (state, seeds_obj)) == NULL)
    return NULL;
  /* The buffers are initialized on a stream of the seeds' device. */
  if (stream == TG_STREAM_AUTO
      && (stream = tg_default_stream (tg_seed_state_get_device (seeds), &error))
             == NULL)
    return tgpy_raise (state, error, NULL);
  /* Held without the GIL: another thread's close() frees it after. */
  tg_seed_state_ref (seeds);
  Py_BEGIN_ALLOW_THREADS;
  p = track_producer_new (&config, seeds, stream, &error);
  Py_END_ALLOW_THREADS;
  tg_seed_state_unref (seeds);
  if (p == NULL)
    return tgpy_raise (state, error, NULL);
  return tgpy_producer_wrap (state, (PyTypeObject *)cls, p);
}

/* @fields of the struct at @base into @d: {name: value}. */
static int
put_fields (PyObject *d, const Field *fields, guint n, gconstpointer base)
{
  for (guint i = 0; i < n; i++)
    {
      PyObject *v
          = fields[i].is_float
                ? PyFloat_FromDouble (G_STRUCT_MEMBER (float, base, fields[i].offset))
                : PyLong_FromUnsignedLong (
                    G_STRUCT_MEMBER (guint32, base, fields[i].offset));

      if (v == NULL || PyDict_SetItemString (d, fields[i].name, v) < 0)
        {
          Py_XDECREF (v);
          return -1;
        }
      Py_DECREF (v);
    }
  return 0;
}

/* The shape and counts a producer was made with, as the defaults complete
 * them: {field: value}. */
static PyObject *
native_track_config (PyObject *module, PyObject *arg)
{
  TrackConfig config;
  guint32 n_envs;
  PyObject *d;

  if (parse_count ("n_envs", arg, &n_envs) < 0)
    return NULL;
  track_config_init (&config, (guint)n_envs);
  if ((d = PyDict_New ()) == NULL)
    return NULL;
  if (put_fields (d, shape_fields, G_N_ELEMENTS (shape_fields), &config.shape) < 0
      || put_fields (d, config_counts, G_N_ELEMENTS (config_counts), &config) < 0)
    {
      Py_DECREF (d);
      return NULL;
    }
  return d;
}

/* _track_producer_reset(producer, stream): track_producer_reset(). */
static PyObject *
native_track_producer_reset (PyObject *module, PyObject *args)
{
  TgpyState *state = PyModule_GetState (module);
  PyObject *producer_obj, *stream_obj;
  cudaStream_t stream;
  GError *error = NULL;
  TgProducer *p;
  gboolean ok;

  if (!PyArg_ParseTuple (args, "OO:_track_producer_reset", &producer_obj, &stream_obj)
      || tgpy_stream (stream_obj, "stream", &stream) < 0
      || (p = tgpy_producer_get (state, producer_obj)) == NULL)
    return NULL;
  tg_producer_ref (p); /* held without the GIL, as above */
  Py_BEGIN_ALLOW_THREADS;
  ok = track_producer_reset (p, stream, &error);
  Py_END_ALLOW_THREADS;
  tg_producer_unref (p);
  if (!ok)
    return tgpy_raise (state, error, NULL);
  Py_RETURN_NONE;
}

/* The overlapped refill: a TrackRefiller in a capsule, freed with it. */
#define REFILLER_CAPSULE "track_gen._native.TrackRefiller"

static void
refiller_capsule_free (PyObject *capsule)
{
  TrackRefiller *r = PyCapsule_GetPointer (capsule, REFILLER_CAPSULE);

  /* It waits for the device. */
  Py_BEGIN_ALLOW_THREADS;
  track_refiller_free (r);
  Py_END_ALLOW_THREADS;
}

static TrackRefiller *
refiller_get (PyObject *capsule)
{
  if (!PyCapsule_IsValid (capsule, REFILLER_CAPSULE))
    {
      tgpy_argument_error (PyExc_TypeError, "refiller", "not a track refiller");
      return NULL;
    }
  return PyCapsule_GetPointer (capsule, REFILLER_CAPSULE);
}

/* _track_refiller_new(producer, seeds, **config): track_refiller_new() for
 * a producer made with that config. */
static PyObject *
native_track_refiller_new (PyObject *module, PyObject *args, PyObject *kwargs)
{
  TgpyState *state = PyModule_GetState (module);
  PyObject *producer_obj, *seeds_obj, *capsule;
  TgSeedState *seeds;
  GError *error = NULL;
  TrackConfig config;
  TrackRefiller *r;
  TgProducer *p;

  if (!PyArg_ParseTuple (args, "OO:_track_refiller_new", &producer_obj, &seeds_obj)
      || (p = tgpy_producer_get (state, producer_obj)) == NULL
      || (seeds = tgpy_seed_state_get (state, seeds_obj)) == NULL)
    return NULL;
  track_config_init (&config, tg_seed_state_get_n_envs (seeds));
  /* The config's values may run Python code that closes either. */
  if (apply_config (&config, kwargs) < 0
      || (p = tgpy_producer_get (state, producer_obj)) == NULL
      || (seeds = tgpy_seed_state_get (state, seeds_obj)) == NULL)
    return NULL;
  tg_producer_ref (p); /* held without the GIL, as above */
  tg_seed_state_ref (seeds);
  Py_BEGIN_ALLOW_THREADS;
  r = track_refiller_new (p, &config, seeds, &error);
  Py_END_ALLOW_THREADS;
  tg_seed_state_unref (seeds);
  tg_producer_unref (p);
  if (r == NULL)
    return tgpy_raise (state, error, NULL);
  if ((capsule = PyCapsule_New (r, REFILLER_CAPSULE, refiller_capsule_free)) == NULL)
    track_refiller_free (r);
  return capsule;
}

/* _track_refiller_poll(refiller): whether it started a refill. */
static PyObject *
native_track_refiller_poll (PyObject *module, PyObject *capsule)
{
  TrackRefiller *r = refiller_get (capsule);
  GError *error = NULL;
  gboolean started = FALSE, ok;

  if (r == NULL)
    return NULL;
  /* A read of host memory, unless a refill starts (a graph launch). */
  ok = track_refiller_poll (r, &started, &error);
  if (!ok)
    return tgpy_raise (PyModule_GetState (module), error, NULL);
  return PyBool_FromLong (started);
}

/* _track_refiller_wait(refiller): track_refiller_wait(). */
static PyObject *
native_track_refiller_wait (PyObject *module, PyObject *capsule)
{
  TrackRefiller *r = refiller_get (capsule);
  GError *error = NULL;
  gboolean ok;

  if (r == NULL)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  ok = track_refiller_wait (r, &error);
  Py_END_ALLOW_THREADS;
  if (!ok)
    return tgpy_raise (PyModule_GetState (module), error, NULL);
  Py_RETURN_NONE;
}

/* _track_refiller_stats(refiller): track_refiller_get_stats() as a dict,
 * with the refills' stream handle. */
static PyObject *
native_track_refiller_stats (PyObject *module, PyObject *capsule)
{
  TrackRefiller *r = refiller_get (capsule);
  TrackRefillerStats st;

  if (r == NULL)
    return NULL;
  track_refiller_get_stats (r, &st);
  return Py_BuildValue ("{sIsIsIsIsIsIsdsdsIsK}", "freed", st.totals.freed, "misses",
                        st.totals.misses, "urgent", st.totals.urgent, "made",
                        st.totals.made, "refills", st.totals.refills, "started",
                        st.started, "gpu_ms", st.gpu_ms, "busy_ms",
                        st.totals.busy_ns / 1e6, "blocks", st.blocks, "stream",
                        (unsigned long long)(guintptr)track_refiller_get_stream (r));
}

static PyObject *
native_track_family_name (PyObject *module, PyObject *arg)
{
  gint64 f;

  /* Any family number: those out of range are "none". */
  if (tgpy_count (arg, "family", G_MININT32, G_MAXINT32, &f) < 0)
    return NULL;
  return PyUnicode_FromString (track_family_name ((gint32)f));
}

/* @obj, a read-only bytes-like object (the argument @what), into @buf and
 * @len; -1 with a TypeError naming it. */
static int
svg_bytes (PyObject *obj, const char *what, const char **buf, Py_ssize_t *len)
{
  if (PyArg_Parse (obj, "y#", buf, len))
    return 0;
  PyErr_Clear ();
  PyErr_Format (PyExc_TypeError, "%s: bytes, not %R", what, (PyObject *)Py_TYPE (obj));
  return -1;
}

/* @obj, a sequence of str or None (labels), as a NULL-terminated array. */
static int
svg_labels (PyObject *obj, char ***labels)
{
  PyObject *tuple;
  Py_ssize_t n;

  *labels = NULL;
  if (obj == Py_None)
    return 0;
  /* A tuple first: a __len__ of its own could ask for any size. */
  if ((tuple = PySequence_Tuple (obj)) == NULL)
    return -1;
  n = PyTuple_Size (tuple);
  *labels = g_new0 (char *, n + 1);
  for (Py_ssize_t i = 0; i < n; i++)
    {
      PyObject *item = PyTuple_GetItem (tuple, i);
      const char *s
          = PyUnicode_Check (item) ? PyUnicode_AsUTF8AndSize (item, NULL) : NULL;

      if (!PyUnicode_Check (item))
        PyErr_Format (PyExc_TypeError, "labels[%zd]: a str, not %R", i,
                      (PyObject *)Py_TYPE (item));
      if (s == NULL)
        {
          g_clear_pointer (labels, g_strfreev);
          Py_DECREF (tuple);
          return -1;
        }
      (*labels)[i] = g_strdup (s);
    }
  Py_DECREF (tuple);
  return 0;
}

/* _track_svg_write(path, points, valid, n_tracks, n_points, width, labels):
 * points and valid as bytes-like objects (float2 and uint8, host order). */
static PyObject *
native_track_svg_write (PyObject *module, PyObject *args)
{
  PyObject *path_obj, *points_obj, *valid_obj, *n_tracks_obj, *n_points_obj, *width_obj,
      *labels_obj, *path = NULL, *result = NULL;
  const char *points, *valid;
  Py_ssize_t points_len, valid_len;
  gint64 n_tracks, n_points;
  gsize size;
  double width;
  char **labels = NULL;
  GError *error = NULL;
  gboolean ok;

  if (!PyArg_UnpackTuple (args, "_track_svg_write", 7, 7, &path_obj, &points_obj,
                          &valid_obj, &n_tracks_obj, &n_points_obj, &width_obj,
                          &labels_obj))
    return NULL;
  if (!PyUnicode_FSConverter (path_obj, &path))
    {
      PyErr_Clear ();
      return PyErr_Format (PyExc_TypeError, "path: a str, bytes or os.PathLike, not %R",
                           (PyObject *)Py_TYPE (path_obj));
    }
  /* The writer draws closed tracks: three points at least. */
  if (tgpy_count (n_tracks_obj, "n_tracks", 1, G_MAXINT32, &n_tracks) < 0
      || tgpy_count (n_points_obj, "n_points", 3, G_MAXINT32, &n_points) < 0)
    goto out;
  width = PyFloat_AsDouble (width_obj);
  if (width == -1.0 && PyErr_Occurred ())
    {
      PyErr_Clear ();
      PyErr_Format (PyExc_TypeError, "width: a number, not %R",
                    (PyObject *)Py_TYPE (width_obj));
      goto out;
    }
  if (!(width > 0.0 && width <= G_MAXFLOAT))
    {
      tgpy_argument_error (PyExc_ValueError, "width",
                           "a positive finite number, not %g", width);
      goto out;
    }
  if (svg_bytes (points_obj, "points", &points, &points_len) < 0
      || svg_bytes (valid_obj, "valid", &valid, &valid_len) < 0
      || svg_labels (labels_obj, &labels) < 0)
    goto out;
  if (!g_size_checked_mul (&size, (gsize)n_tracks, (gsize)n_points)
      || !g_size_checked_mul (&size, size, 2 * sizeof (float))
      || (gsize)points_len != size || (gsize)valid_len != (gsize)n_tracks)
    {
      tgpy_argument_error (
          PyExc_ValueError, "points",
          "%zd bytes of points and %zd of validity for %" G_GINT64_FORMAT
          " tracks of %" G_GINT64_FORMAT
          " points: pass 8 bytes a point (two float32) and one a track",
          points_len, valid_len, n_tracks, n_points);
      goto out;
    }
  Py_BEGIN_ALLOW_THREADS;
  ok = track_svg_write (PyBytes_AsString (path), (const float2 *)points,
                        (const guint8 *)valid, (guint)n_tracks, (guint)n_points,
                        (float)width, (const char *const *)labels, &error);
  Py_END_ALLOW_THREADS;
  if (!ok)
    {
      PyErr_Format (PyExc_OSError, "%s", error->message);
      g_error_free (error);
      goto out;
    }
  Py_INCREF (Py_None);
  result = Py_None;
out:
  g_strfreev (labels);
  Py_XDECREF (path);
  return result;
}

static PyMethodDef track_functions[] = {
  { "_track_producer_new", (PyCFunction)(void (*) (void))native_track_producer_new,
    METH_VARARGS | METH_KEYWORDS,
    "_track_producer_new(cls, seeds, stream, **config)\n--\n\ntrack_producer_new()." },
  { "_track_producer_reset", native_track_producer_reset, METH_VARARGS,
    "_track_producer_reset(producer, stream)\n--\n\ntrack_producer_reset()." },
  { "_track_refiller_new", (PyCFunction)(void (*) (void))native_track_refiller_new,
    METH_VARARGS | METH_KEYWORDS,
    "_track_refiller_new(producer, seeds, **config)\n--\n\ntrack_refiller_new()." },
  { "_track_refiller_poll", native_track_refiller_poll, METH_O,
    "_track_refiller_poll(refiller, /)\n--\n\ntrack_refiller_poll()." },
  { "_track_refiller_wait", native_track_refiller_wait, METH_O,
    "_track_refiller_wait(refiller, /)\n--\n\ntrack_refiller_wait()." },
  { "_track_refiller_stats", native_track_refiller_stats, METH_O,
    "_track_refiller_stats(refiller, /)\n--\n\ntrack_refiller_get_stats()." },
  { "_track_config", native_track_config, METH_O,
    "_track_config(n_envs, /)\n--\n\nThe default track configuration as a dict." },
  { "track_family_name", native_track_family_name, METH_O,
    "track_family_name(family, /)\n--\n\n\"polar\", \"stadium\", \"star\", or "
    "\"none\"." },
  { "_track_svg_write", native_track_svg_write, METH_VARARGS,
    "_track_svg_write(path, points, valid, n_tracks, n_points, width, labels)\n--\n\n"
    "track_svg_write()." },
  { NULL },
};

int
tgpy_tracks_init (PyObject *module, TgpyState *state)
{
  if (PyModule_AddIntConstant (module, "TRACK_N_FAMILIES", TRACK_N_FAMILIES) < 0
      || PyModule_AddIntConstant (module, "TRACK_MAX_LOOKAHEAD", TRACK_MAX_LOOKAHEAD)
             < 0)
    return -1;
  return PyModule_AddFunctions (module, track_functions);
}
