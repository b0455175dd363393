/* SPDX-License-Identifier: Apache-2.0 */
/* producer-calls.c: a Producer's calls: its stream, run and resolve, and its
 * counters. */
#include "producer-private.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Streams, calls, counters                                                  */

PyObject *
tgpy_producer_set_stream (PyObject *obj, PyObject *stream_obj)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  cudaStream_t stream;
  GError *error = NULL;
  gboolean ok;

  if (self == NULL || tgpy_stream (stream_obj, "stream", &stream) < 0
      || tgpy_producer_open (obj) == NULL)
    return NULL;
  TGPY_WITHOUT_GIL (self, held, ok = tg_producer_set_stream (held, stream, &error));
  if (!ok)
    return tgpy_raise (tgpy_state_of (obj), error, NULL);
  Py_RETURN_NONE;
}

PyObject *
tgpy_producer_get_stream (PyObject *obj, void *closure)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  cudaStream_t stream;

  if (self == NULL)
    return NULL;
  TGPY_WITHOUT_GIL (self, held, stream = tg_producer_get_stream (held));
  return tgpy_stream_to_object (stream);
}

/* run and resolve take (stream=None, policy=0, condition=None), positional
 * or by keyword, parsed by hand: run is the hot path of REPLAY.  The policy
 * is converted to a C int; libtrackgen refuses one that is no TgPolicy. */
static int
call_args (TgpyState *state, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
           cudaStream_t *stream, TgPolicy *policy, TgCondition *condition)
{
  static const char *const names[] = { "stream", "policy", "condition" };
  PyObject *values[3] = { NULL, NULL, NULL };
  gint64 p = TG_POLICY_AUTO;

  if (nargs > 3)
    {
      PyErr_SetString (PyExc_TypeError,
                       "at most 3 arguments: stream, policy, condition");
      return -1;
    }
  for (Py_ssize_t i = 0; i < nargs; i++)
    values[i] = args[i];
  if (kwnames != NULL)
    for (Py_ssize_t k = 0; k < PyTuple_Size (kwnames); k++)
      {
        const char *key = PyUnicode_AsUTF8AndSize (PyTuple_GetItem (kwnames, k), NULL);
        guint i = 0;

        while (i < 3 && strcmp (key, names[i]) != 0)
          i++;
        if (i == 3 || values[i] != NULL)
          {
            PyErr_Format (PyExc_TypeError, "%s keyword argument '%s'",
                          i == 3 ? "unexpected" : "repeated", key);
            return -1;
          }
        values[i] = args[nargs + k];
      }
  if (tgpy_stream (values[0], "stream", stream) < 0)
    return -1;
  if (values[1] != NULL && values[1] != Py_None
      && tgpy_count (values[1], "policy", G_MININT, G_MAXINT, &p) < 0)
    return -1;
  *policy = (TgPolicy)p;
  return tgpy_condition (state, values[2], condition);
}

/* run and resolve are METH_METHOD: the hot path reads the module state
 * from the class that defines them, with no walk up a subclass's bases. */
PyObject *
tgpy_producer_run (PyObject *obj, PyTypeObject *defining_class, PyObject *const *args,
                   Py_ssize_t nargs, PyObject *kwnames)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  TgProducer *producer;
  TgpyState *state = PyType_GetModuleState (defining_class);
  TgCallStream stream = TG_CALL_STREAM (TG_STREAM_AUTO);
  TgPolicy policy;
  TgCondition condition;
  GError *error = NULL;
  TgpyCall call;
  gboolean ok;

  if (self == NULL
      || call_args (state, args, nargs, kwnames, &stream.stream, &policy, &condition)
             < 0
      || tgpy_producer_open (obj) == NULL
      || tgpy_ambient (state, tg_producer_get_device (self->producer), &stream) < 0)
    return NULL;
  /* Held for the call: a stage that closes its own producer (or another
   * thread that does) frees it only once the call is over. */
  producer = tg_producer_ref (self->producer);
  tgpy_call_begin (&call);
  Py_BEGIN_ALLOW_THREADS;
  ok = tg_producer_run_full (producer, &stream, policy, condition, &error);
  Py_END_ALLOW_THREADS;
  /* The last reference calls the stages' destroy notifies: under the GIL. */
  tg_producer_unref (producer);
  if (tgpy_call_end (state, &call, ok, error) < 0)
    return NULL;
  Py_RETURN_NONE;
}

PyObject *
tgpy_producer_resolve (PyObject *obj, PyTypeObject *defining_class,
                       PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  TgpyState *state = PyType_GetModuleState (defining_class);
  TgCallStream stream = TG_CALL_STREAM (TG_STREAM_AUTO);
  cudaStream_t resolved = NULL;
  TgPolicy policy, decided = TG_POLICY_AUTO;
  TgCondition condition;
  GError *error = NULL;
  gboolean ok;

  if (self == NULL
      || call_args (state, args, nargs, kwnames, &stream.stream, &policy, &condition)
             < 0
      || tgpy_producer_open (obj) == NULL
      || tgpy_ambient (state, tg_producer_get_device (self->producer), &stream) < 0)
    return NULL;
  TGPY_WITHOUT_GIL (self, held,
                    ok = tg_producer_resolve_full (held, &stream, policy, condition,
                                                   &decided, &resolved, &error));
  if (!ok)
    return tgpy_raise (state, error, NULL);
  return Py_BuildValue ("(NN)", tgpy_enum_value (state->policy_enum, decided),
                        tgpy_stream_to_object (resolved));
}

PyObject *
tgpy_producer_runner_stats (PyObject *obj, PyObject *unused)
{
  TgpyProducer *self = tgpy_producer_open (obj);
  TgRunnerStats s;

  if (self == NULL)
    return NULL;
  TGPY_WITHOUT_GIL (self, held, tg_producer_get_runner_stats (held, &s));
  return Py_BuildValue (
      "(IKKKKKN)", s.n_segments, (unsigned long long)s.n_captures,
      (unsigned long long)s.n_replays, (unsigned long long)s.n_updates,
      (unsigned long long)s.n_recaptures, (unsigned long long)s.n_rebinds,
      tgpy_enum_value (tgpy_state_of (obj)->rebind_outcome_enum, s.last_rebind));
}
