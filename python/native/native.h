/* SPDX-License-Identifier: Apache-2.0 */
/* native.h: what the files of track_gen._native share.  The module is C on
 * CPython's stable ABI (3.10 and later), one shared object holding the
 * three archives, GLib and the CUDA runtime with their symbols hidden.
 *
 * Two rules hold everywhere:
 * - The GIL is released around every libtrackgen call that may wait (a
 *   producer's lock, a stream) and taken again by every callback libtrackgen
 *   makes into Python (stages, bodies, host functions, releases), so a
 *   producer held by one thread never waits for the GIL held by another.
 * - Python exceptions raised inside a callback travel to the call that made
 *   it: the callback stores the exception (tgpy_exception_stash), fails the
 *   libtrackgen call with a GError, and the native method that called
 *   libtrackgen raises TrackGen's error with the stored one as its cause. */
#ifndef TGPY_NATIVE_H
#define TGPY_NATIVE_H

#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x030A0000
#include <Python.h>

#include <trackgen/trackgen.h>

/* What one loaded instance of the module owns. */
typedef struct
{
  /* Exception classes and the warning category (track_gen/_errors.py). */
  PyObject *error;                /* TrackGenError */
  PyObject *capture_error;        /* CaptureError */
  PyObject *not_capturable_error; /* NotCapturableError */
  PyObject *legacy_error;         /* LegacyPluginStreamError */
  PyObject *cuda_error;           /* CudaError */
  PyObject *argument_error;       /* ArgumentError */
  PyObject *state_error;          /* StateError */
  PyObject *stage_error;          /* StageError: a Python stage raised */
  PyObject *rebind_warning;       /* RebindAfterCaptureWarning */
  /* The native types. */
  PyObject *producer_type;
  PyObject *launch_type;
  PyObject *host_ops_type;
  PyObject *condition_type;
  PyObject *seed_state_type;
  PyObject *scope_type;
  PyObject *unconditional; /* the Condition that always runs */
  /* The C enums as Python enum classes (enums.c). */
  PyObject *policy_enum;
  PyObject *stage_flags_enum;
  PyObject *capture_state_enum;
  PyObject *loop_end_enum;
  PyObject *rebind_outcome_enum;
  PyObject *capture_mode_enum;
  PyObject *capture_error_code;
  PyObject *argument_error_code;
  PyObject *state_error_code;
  /* runner(func, ctx) calls every stage, body and host stage written in
   * Python (track_gen.exec sets it: torch's stream and memory pool around
   * the call); NULL calls func(ctx). */
  PyObject *runner;
  /* The torch module last seen in sys.modules, and its current-stream getter
   * (NULL: none); torch_raw: the getter returns the handle, not a stream. */
  PyObject *torch;
  PyObject *torch_stream;
  gboolean torch_raw;
} TgpyState;

/* The flags of every type of the module: immutable heap types, which marks
 * them for tgpy_state_of_type() (Python subclasses of them are mutable). */
#define TGPY_TPFLAGS (Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE)

/* The state of the module that made @type or one of its bases (a Python
 * subclass of a native type has no module of its own): found without
 * raising, so it costs a few loads on every call.  Inline, so that no file
 * calls module.c, which calls every file's init. */
static inline TgpyState *
tgpy_state_of_type (PyTypeObject *type)
{
  /* The first immutable heap type up the bases is one of this module's
   * (TGPY_TPFLAGS): asking a Python subclass, which has no module, would
   * raise. */
  for (PyTypeObject *t = type; t != NULL;
       t = (PyTypeObject *)PyType_GetSlot (t, Py_tp_base))
    {
      unsigned long flags = PyType_GetFlags (t);

      if (!(flags & Py_TPFLAGS_HEAPTYPE))
        break;
      if (flags & Py_TPFLAGS_IMMUTABLETYPE)
        return PyType_GetModuleState (t);
    }
  PyErr_SetString (PyExc_TypeError, "not a type of track_gen._native");
  return NULL;
}
#define tgpy_state_of(obj) tgpy_state_of_type (Py_TYPE (obj))

/* ------------------------------------------------------------------------ */
/* errors.c                                                                  */

/* The GError domain of an exception raised by Python code libtrackgen
 * called (a stage, a body, a host function). */
GQuark tgpy_python_error_quark (void);

/* Raises the TrackGen exception for @error (consumed), with @cause (stolen,
 * may be NULL) as its __cause__.  Returns NULL. */
PyObject *tgpy_raise (TgpyState *state, GError *error, PyObject *cause);

/* Inside a callback, with the GIL and a Python exception set: stores the
 * exception for the native call that is running libtrackgen and sets
 * @error.  An exception that is a TrackGenError keeps its domain and code,
 * so libtrackgen sees the refusal it is (a nested producer's
 * NOT_CAPTURABLE, say). */
void tgpy_exception_stash (GError **error);

/* Brackets a libtrackgen call that may call back into Python: the stash of
 * an outer call is saved and restored, so calls nest. */
typedef struct
{
  PyObject *outer;
} TgpyCall;
void tgpy_call_begin (TgpyCall *call);
/* Ends the bracket of a call that returned @ok, with @error (consumed) set
 * when it failed: 0 when it succeeded and no callback raised; else -1 with
 * the exception set: TrackGen's (the callback's exception as its cause), or
 * for a call that succeeded the callback's own (a warning made an error). */
int tgpy_call_end (TgpyState *state, TgpyCall *call, gboolean ok, GError *error);

/* Gives the TrackGenError being raised the @producer and @binding it
 * concerns, where it names none (an array refused for a binding). */
void tgpy_error_about (TgpyState *state, const char *producer, const char *binding);

/* Adds _error(), the error factory of the package's Python code. */
int tgpy_errors_init (PyObject *module);

/* Raises TypeError or ValueError naming @what: "@what: @message". */
PyObject *tgpy_argument_error (PyObject *type, const char *what, const char *format,
                               ...);

/* ------------------------------------------------------------------------ */
/* convert.c: numbers from Python, each range checked in one place; @what
 * names the argument in errors.  0 on success, -1 with the exception set. */

/* An int in [0, @max]: a seed, an epoch, an env id, flags (values of a C
 * width): OverflowError outside it, TypeError for a non-int. */
int tgpy_uint (PyObject *obj, const char *what, guint64 max, guint64 *out);
/* An int in [@min, @max]: a size, a count, an index: ValueError outside it. */
int tgpy_count (PyObject *obj, const char *what, gint64 min, gint64 max, gint64 *out);
/* The same, or -1 for None (or a missing argument, @obj NULL). */
int tgpy_optional_count (PyObject *obj, const char *what, gint64 min, gint64 max,
                         gint64 *out);
/* True or False alone, as a switch: TypeError for anything else (a 0, a
 * "no" or a None would turn it on or off by accident). */
int tgpy_bool (PyObject *obj, const char *what, gboolean *out);
/* A CUDA device ordinal (0 when @obj is NULL). */
int tgpy_device (PyObject *obj, const char *what, int *device);
/* An address or a handle given as an int: ValueError when negative (never
 * sign-extended into another value), OverflowError past 2**64 - 1. */
int tgpy_address (PyObject *obj, const char *what, void **address);
/* A timeout in seconds as microseconds: None (or NULL) is forever
 * (G_MAXINT64), as is anything past it; NaN and negatives are ValueError. */
int tgpy_timeout (PyObject *obj, const char *what, gint64 *us);
/* A str @obj as a C string (borrowed from @obj): TypeError for another
 * type, ValueError for a NUL inside it (C would cut it there) or, unless
 * @allow_empty (libtrackgen refuses empty names itself), for "". */
int tgpy_name (PyObject *obj, const char *what, gboolean allow_empty, const char **out);
/* The ints of the sequence @obj, each in [0, @max] (OverflowError naming
 * "@what[i]" otherwise), as an array of *@n values of @width bytes (4 or
 * 8) in host order, to g_free(). */
int tgpy_uint_array (PyObject *obj, const char *what, guint64 max, gsize width,
                     gpointer *out, gsize *n);
/* A callable @obj (or None when @optional): TypeError naming @what, one
 * message for every callable argument of the package. */
int tgpy_callable (PyObject *obj, const char *what, gboolean optional);
/* The tuple of the sequence @seq (a switch's cases), each item a callable
 * (TypeError naming "@what[i]"): a new reference in *@tuple. */
int tgpy_callable_tuple (PyObject *seq, const char *what, PyObject **tuple);

/* ------------------------------------------------------------------------ */
/* enums.c                                                                   */

/* Builds the enum classes into @state and the module. */
int tgpy_enums_init (PyObject *module, TgpyState *state);
/* The member of enum class @cls for @value, or an int for a value it lacks. */
PyObject *tgpy_enum_value (PyObject *cls, long value);

/* ------------------------------------------------------------------------ */
/* objects-streams.c: streams as the ecosystem passes them                   */

/* None is TG_STREAM_AUTO; an int is a cudaStream_t (0: the legacy default
 * stream); a torch stream (cuda_stream), an object with __cuda_stream__
 * (CUDA's stream protocol: cuda.core, CuPy), or one with .ptr (CuPy) is
 * its handle.  @what names the argument in errors.  0 on success. */
int tgpy_stream (PyObject *obj, const char *what, cudaStream_t *stream);
PyObject *tgpy_stream_to_object (cudaStream_t stream);

/* ------------------------------------------------------------------------ */
/* objects.c: arrays as the ecosystem passes them                            */

/* A device array: its address, its size in bytes (0 for an int address,
 * whose size is not known), the dtype's name ("float32", ...; "" when
 * unknown) and its CUDA device (-1 when unknown). */
typedef struct
{
  void *ptr;
  size_t nbytes;
  char dtype[16];
  int device;
} TgpyArray;

/* An int is an address of unknown size; an object with
 * __cuda_array_interface__ (CuPy, Numba, torch) or __dlpack__ (torch, JAX)
 * is read without touching any stream.  Only C-contiguous, non-empty arrays
 * in GPU memory: anything else is an ArgumentError that names @what (the
 * argument as the caller words it: "binding 'x' of producer 'p'"), the
 * array's type and the fix.  An exception the array's own properties raise
 * propagates unchanged.  0 on success. */
int tgpy_array (TgpyState *state, PyObject *obj, const char *what, TgpyArray *array);

/* Host memory described by @obj's __array_interface__ (numpy), read as
 * tgpy_array() reads device arrays (C-contiguous, checked): 1, 0 when @obj
 * has none, -1 with ArgumentError, or ValueError for a read-only array
 * when @writable. */
int tgpy_host_array (TgpyState *state, PyObject *obj, const char *what, gboolean writable,
                     TgpyArray *array);

/* Refuses @array (read from @obj) when it carries a dtype other than
 * @dtype, naming the fix: an int32 is never reinterpreted. */
int tgpy_array_dtype_check (TgpyState *state, PyObject *obj, const char *what,
                            const TgpyArray *array, const char *dtype);

/* The address of at least @n int32 in device memory (a flag, a switch's
 * index, a loop's status): arrays of another dtype (bool, uint8) are
 * refused, never reinterpreted; NULL is refused. */
int tgpy_int32_array (TgpyState *state, PyObject *obj, const char *what, gsize n,
                      void **ptr);
/* The same check, with the whole array read (its device too). */
int tgpy_int32_array_full (TgpyState *state, PyObject *obj, const char *what, gsize n,
                           TgpyArray *array);

/* ------------------------------------------------------------------------ */
/* release.c: Python objects held by libtrackgen                            */

/* A GDestroyNotify for a PyObject: takes the GIL and drops the reference,
 * from any thread (TrackGen's reaper included); once the interpreter is
 * finalizing, leaves the object alone (the process is ending). */
void tgpy_release_object (gpointer object);

/* Called by the module's atexit hook. */
void tgpy_finalizing (void);
gboolean tgpy_is_finalizing (void);

/* ------------------------------------------------------------------------ */
/* The types (one file each)                                                 */

typedef struct TgpyProducer TgpyProducer;

int tgpy_producer_init_type (PyObject *module, TgpyState *state);
/* The producer of a native Producer (or a subclass's) object, or NULL with
 * TypeError. */
TgProducer *tgpy_producer_get (TgpyState *state, PyObject *obj);
/* A new Producer of @type (transfer full of @producer). */
PyObject *tgpy_producer_wrap (TgpyState *state, PyTypeObject *type,
                              TgProducer *producer);

/* What LaunchContext and HostOps objects hold. */
typedef struct
{
  PyObject_HEAD const TgLaunch *launch; /* NULL once the stage returned */
  TgHostOps *ops;                       /* HostOps only */
  PyObject *owners;                     /* binding name -> the object bound */
  unsigned long thread;                 /* the stage's thread */
} TgpyLaunch;

int tgpy_launch_init_types (PyObject *module, TgpyState *state);
/* HostOps, after LaunchContext (its base): hostops.c. */
int tgpy_host_ops_init_type (PyObject *module, TgpyState *state);
/* @self's launch, or NULL with StateError once its stage call returned or
 * from another thread than the stage's. */
const TgLaunch *tgpy_launch_valid (TgpyLaunch *self);
/* A LaunchContext valid until tgpy_launch_invalidate(): @owners maps binding
 * names to the objects bound (borrowed for the call). */
PyObject *tgpy_launch_new (TgpyState *state, const TgLaunch *launch, PyObject *owners);
PyObject *tgpy_host_ops_new (TgpyState *state, TgHostOps *ops, PyObject *owners);
void tgpy_launch_invalidate (PyObject *obj);

/* The trampolines of stages written in Python: @data is a TgpyStage. */
typedef struct
{
  PyObject *func;      /* the callable */
  PyObject *owners;    /* the producer's binding owners (a dict) */
  PyObject *module;    /* for the state, from any thread */
  gboolean host;       /* a HOST stage: func takes a HostOps */
  PyObject *else_func; /* a guarded DEVICE stage's else branch, or NULL */
} TgpyStage;
gboolean tgpy_stage_device (const TgLaunch *launch, gpointer data, GError **error);
gboolean tgpy_stage_else (const TgLaunch *launch, gpointer data, GError **error);
gboolean tgpy_stage_host (TgHostOps *ops, gpointer data, GError **error);
void tgpy_stage_free (gpointer data);

int tgpy_condition_init_type (PyObject *module, TgpyState *state);
/* The device flag of a Condition, None (unconditional), or an array; @owner
 * (borrowed) is what holds it. */
int tgpy_condition (TgpyState *state, PyObject *obj, TgCondition *condition);

int tgpy_seeds_init_type (PyObject *module, TgpyState *state);
TgSeedState *tgpy_seed_state_get (TgpyState *state, PyObject *obj);

int tgpy_interop_init (PyObject *module, TgpyState *state);

/* ------------------------------------------------------------------------ */
/* stream.c                                                                  */

/* Adds the stream functions (resolve_stream(), ...) to the module. */
int tgpy_stream_init (PyObject *module);
/* The ambient stream of a call (exec.h's TgCallStream), for libtrackgen's
 * stream rule: when @call names no stream, torch's current stream on
 * @device when torch is imported, else Warp's current stream there when
 * warp is imported and set the device up, else none.  Read from
 * sys.modules: nothing is imported.  0, or -1 with the exception the
 * framework raised. */
int tgpy_ambient (TgpyState *state, int device, TgCallStream *call);

/* functions.c: the module's small functions (device_check(), live_objects(),
 * the converters _count(), _int32_array(), _pack_uints(), ...). */
int tgpy_functions_init (PyObject *module);

/* seeds-math.c: the seed math on the host (effective_seed(), mix64(),
 * env_seed()). */
int tgpy_seed_math_init (PyObject *module);

/* tracks.c: the example track producer, a C producer built into the module */
int tgpy_tracks_init (PyObject *module, TgpyState *state);

#endif
