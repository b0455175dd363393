/* SPDX-License-Identifier: Apache-2.0 */
/* producer-private.h: the Producer object, shared by producer.c (the type),
 * producer-stages.c (its stage builders), producer-bindings.c (its bindings)
 * and producer-calls.c (its calls). */
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
 * every file of the Producer asks it, and producer.c's method table holds
 * the other files' methods.  A method asks again once it has read its
 * arguments: their conversions run the caller's Python code (an __index__,
 * an array interface, a __cuda_stream__), which may close the producer. */
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

/* Runs the statements (...) without the GIL on @self's producer as @p,
 * held meanwhile: another thread's close() frees it after them, and the
 * last reference, let go under the GIL, may call the stages' destroy
 * notifies. */
#define TGPY_WITHOUT_GIL(self, p, ...)                                                 \
  G_STMT_START                                                                         \
  {                                                                                    \
    TgProducer *p = tg_producer_ref ((self)->producer);                                \
    Py_BEGIN_ALLOW_THREADS __VA_ARGS__;                                                \
    Py_END_ALLOW_THREADS tg_producer_unref (p);                                        \
  }                                                                                    \
  G_STMT_END

/* The stage builders (producer-stages.c), methods of Producer. */
PyObject *tgpy_producer_add_stage (PyObject *obj, PyObject *args, PyObject *kwargs);
PyObject *tgpy_producer_add_loop_stage (PyObject *obj, PyObject *args,
                                        PyObject *kwargs);
PyObject *tgpy_producer_add_switch_stage (PyObject *obj, PyObject *args,
                                          PyObject *kwargs);
PyObject *tgpy_producer_declare_binding (PyObject *obj, PyObject *args);
PyObject *tgpy_producer_set_stage_condition (PyObject *obj, PyObject *args);
PyObject *tgpy_producer_set_stage_else (PyObject *obj, PyObject *args);

/* The bindings (producer-bindings.c): the rebind handler that producer.c
 * gives each producer, with its data's destroy notify, and the methods. */
gboolean tgpy_producer_on_rebind (TgProducer *producer, const char *binding,
                                  gpointer old_ptr, gpointer new_ptr, gpointer data);
void tgpy_producer_binds_free (gpointer data);
PyObject *tgpy_producer_bind (PyObject *obj, PyObject *args, PyObject *kwargs);
PyObject *tgpy_producer_get_binding (PyObject *obj, PyObject *name_obj);
PyObject *tgpy_producer_binding_owner (PyObject *obj, PyObject *name);

/* The calls (producer-calls.c), methods of Producer, and its stream getter. */
PyObject *tgpy_producer_set_stream (PyObject *obj, PyObject *stream_obj);
PyObject *tgpy_producer_get_stream (PyObject *obj, void *closure);
PyObject *tgpy_producer_run (PyObject *obj, PyTypeObject *defining_class,
                             PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames);
PyObject *tgpy_producer_resolve (PyObject *obj, PyTypeObject *defining_class,
                                 PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames);
PyObject *tgpy_producer_runner_stats (PyObject *obj, PyObject *unused);

#endif
