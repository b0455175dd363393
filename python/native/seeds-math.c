/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-math.c: the seed math on the host, bit-identical to the device's:
 * effective_seed(), mix64() and env_seed() of track_gen.seeds. */
#include "native.h"

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
tgpy_seed_math_init (PyObject *module)
{
  return PyModule_AddFunctions (module, seed_functions);
}
