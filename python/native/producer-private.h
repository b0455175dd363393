/* SPDX-License-Identifier: Apache-2.0 */
/* producer-private.h: the Producer object, shared by producer.c (the type,
 * bindings, calls) and producer-stages.c (its stage builders). */
#ifndef TGPY_PRODUCER_PRIVATE_H
#define TGPY_PRODUCER_PRIVATE_H

#include "native.h"

/* The bound objects, owned by the C producer (its rebind handler's data). */
typedef struct
{
  PyObject *owners;  /* dict: binding name -> object bound (None for an int) */
  PyObject *retired; /* list: objects rebound after capture */
  PyObject *warning; /* RebindAfterCaptureWarning */
} Binds;

struct TgpyProducer
{
  PyObject_HEAD TgProducer *producer; /* NULL once closed */
  Binds *binds;                       /* valid while producer is */
  GPtrArray *stages;                  /* TgpyStage * the C producer owns, for the GC */
  PyObject *weakrefs;
  char *name; /* the producer's, for the errors of a closed one */
};

/* @obj (a Producer) while it is open, else NULL with ValueError.  Inline:
 * producer.c and producer-stages.c ask it, and producer.c's method table
 * holds producer-stages.c's builders. */
static inline TgpyProducer *
tgpy_producer_open (PyObject *obj)
{
  TgpyProducer *self = (TgpyProducer *)obj;

  if (self->producer == NULL)
    PyErr_Format (PyExc_ValueError,
                  "producer '%s' is closed; use it before close() or the end of its "
                  "with block",
                  self->name != NULL ? self->name : "");
  return self->producer != NULL ? self : NULL;
}

/* The stage builders (producer-stages.c), methods of Producer. */
PyObject *tgpy_producer_add_stage (PyObject *obj, PyObject *args, PyObject *kwargs);
PyObject *tgpy_producer_add_loop_stage (PyObject *obj, PyObject *args,
                                        PyObject *kwargs);
PyObject *tgpy_producer_add_switch_stage (PyObject *obj, PyObject *args,
                                          PyObject *kwargs);
PyObject *tgpy_producer_declare_binding (PyObject *obj, PyObject *args);
PyObject *tgpy_producer_set_stage_condition (PyObject *obj, PyObject *args);
PyObject *tgpy_producer_set_stage_else (PyObject *obj, PyObject *args);

#endif
