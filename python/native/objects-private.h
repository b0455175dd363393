/* SPDX-License-Identifier: Apache-2.0 */
/* objects-private.h: what objects.c (arrays) and objects-streams.c (streams)
 * share: how an object's protocol attribute is asked for. */
#ifndef TGPY_OBJECTS_PRIVATE_H
#define TGPY_OBJECTS_PRIVATE_H

#include "native.h"

/* @obj's attribute @name: 1 with it, 0 when @obj has none, -1 when asking
 * raised anything but AttributeError (that exception stays, unchanged: a
 * KeyboardInterrupt, or torch's own refusal, reaches the caller as is).
 * Inline: both files ask it, and neither calls the other. */
static inline int
tgpy_protocol (PyObject *obj, const char *name, PyObject **value)
{
  if ((*value = PyObject_GetAttrString (obj, name)) != NULL)
    return 1;
  if (!PyErr_ExceptionMatches (PyExc_AttributeError))
    return -1;
  PyErr_Clear ();
  return 0;
}

#endif
