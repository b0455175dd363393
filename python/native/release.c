/* SPDX-License-Identifier: Apache-2.0 */
/* release.c: Python objects that libtrackgen holds (a stage's callable, the
 * objects bound to a producer, what a graph retains) are dropped by
 * GDestroyNotify callbacks that may run on any thread: TrackGen's reaper,
 * when a graph that retained a producer is destroyed. */
#include "native.h"

static gint finalizing;

void
tgpy_finalizing (void)
{
  g_atomic_int_set (&finalizing, 1);
}

gboolean
tgpy_is_finalizing (void)
{
  return g_atomic_int_get (&finalizing) != 0 || !Py_IsInitialized ();
}

void
tgpy_release_object (gpointer object)
{
  PyGILState_STATE gil;

  /* Once the interpreter is finalizing, a thread that is not Python's may
   * not take the GIL (it would hang or be ended); the process is exiting,
   * so the reference is left to it. */
  if (object == NULL || tgpy_is_finalizing ())
    return;
  gil = PyGILState_Ensure ();
  Py_DECREF ((PyObject *)object);
  PyGILState_Release (gil);
}
