/* SPDX-License-Identifier: Apache-2.0 */
/* seeds-private.h: the SeedState object, shared by seeds.c (the type, its
 * life and attributes) and seeds-calls.c (its calls). */
#ifndef TGPY_SEEDS_PRIVATE_H
#define TGPY_SEEDS_PRIVATE_H

#include "native.h"

typedef struct
{
  PyObject_HEAD TgSeedState *state; /* NULL once closed */
  PyObject *weakrefs;
} TgpySeedState;

/* @obj's state while it is open, else NULL with ValueError.  Inline, as
 * tgpy_host_bytes() is: seeds.c and seeds-calls.c ask them, and seeds.c's
 * method table holds seeds-calls.c's calls. */
static inline TgSeedState *
tgpy_seed_state_open (PyObject *obj)
{
  TgSeedState *s = ((TgpySeedState *)obj)->state;

  if (s == NULL)
    PyErr_SetString (PyExc_ValueError, "the seed state is closed");
  return s;
}

/* A bytes-like object's contents (bytes or bytearray). */
static inline int
tgpy_host_bytes (PyObject *obj, const char *what, const char **data, Py_ssize_t *size)
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

/* The calls (seeds-calls.c), methods of SeedState. */
PyObject *tgpy_seed_state_advance (PyObject *obj, PyObject *args, PyObject *kwargs);
PyObject *tgpy_seed_state_reset_epochs (PyObject *obj, PyObject *args,
                                        PyObject *kwargs);
PyObject *tgpy_seed_state_fill_effective (PyObject *obj, PyObject *args,
                                          PyObject *kwargs);
PyObject *tgpy_seed_state_set_seeds_device (PyObject *obj, PyObject *args,
                                            PyObject *kwargs);
PyObject *tgpy_seed_state_set_seeds (PyObject *obj, PyObject *args, PyObject *kwargs);
PyObject *tgpy_seed_state_read (PyObject *obj, PyObject *args, PyObject *kwargs);
PyObject *tgpy_seed_state_write (PyObject *obj, PyObject *args, PyObject *kwargs);
PyObject *tgpy_seed_state_snapshot (PyObject *obj, PyObject *args, PyObject *kwargs);
PyObject *tgpy_seed_state_restore (PyObject *obj, PyObject *args, PyObject *kwargs);

#endif
