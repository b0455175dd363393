/* SPDX-License-Identifier: Apache-2.0 */
/* seeds.c: SeedState, one Python object per TgSeedState: its life, its
 * attributes and its method table (the calls are in seeds-calls.c). */
#include "seeds-private.h"

#include <string.h>

TgSeedState *
tgpy_seed_state_get (TgpyState *state, PyObject *obj)
{
  if (!PyObject_TypeCheck (obj, (PyTypeObject *)state->seed_state_type))
    {
      PyErr_Format (PyExc_TypeError, "seeds: expected a track_gen SeedState, not %R",
                    (PyObject *)Py_TYPE (obj));
      return NULL;
    }
  return tgpy_seed_state_open (obj);
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
      if (tgpy_host_bytes (seeds_obj, "seeds", &seeds, &seeds_size) < 0)
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

static PyObject *
seed_state_close (PyObject *obj, PyObject *unused)
{
  close_state ((TgpySeedState *)obj);
  Py_RETURN_NONE;
}

#define STATE_GETTER(name, expr)                                                       \
  static PyObject *seed_state_get_##name (PyObject *obj, void *closure)                \
  {                                                                                    \
    TgSeedState *s = tgpy_seed_state_open (obj);                                       \
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
  { "advance", (PyCFunction)(void (*) (void))tgpy_seed_state_advance,
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
  { "reset_epochs", (PyCFunction)(void (*) (void))tgpy_seed_state_reset_epochs,
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
  { "fill_effective", (PyCFunction)(void (*) (void))tgpy_seed_state_fill_effective,
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
  { "set_seeds_device", (PyCFunction)(void (*) (void))tgpy_seed_state_set_seeds_device,
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
  { "_set_seeds", (PyCFunction)(void (*) (void))tgpy_seed_state_set_seeds,
    METH_VARARGS | METH_KEYWORDS,
    "_set_seeds($self, env_ids, seeds, stream=None)\n--\n\ntg_seed_state_set_seeds(): "
    "little-endian uint32 ids and uint64 seeds as bytes.  Blocks." },
  { "read", (PyCFunction)(void (*) (void))tgpy_seed_state_read,
    METH_VARARGS | METH_KEYWORDS,
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
  { "write", (PyCFunction)(void (*) (void))tgpy_seed_state_write,
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
  { "snapshot", (PyCFunction)(void (*) (void))tgpy_seed_state_snapshot,
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
  { "restore", (PyCFunction)(void (*) (void))tgpy_seed_state_restore,
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

int
tgpy_seeds_init_type (PyObject *module, TgpyState *state)
{
  state->seed_state_type = PyType_FromModuleAndSpec (module, &seed_state_spec, NULL);
  if (state->seed_state_type == NULL
      || PyModule_AddObjectRef (module, "SeedState", state->seed_state_type) < 0)
    return -1;
  return 0;
}
