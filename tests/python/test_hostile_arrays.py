# SPDX-License-Identifier: Apache-2.0
"""Hostile arrays, a table (hostile.py says how a row runs): malformed
__cuda_array_interface__ and DLPack objects, protocols that raise, arrays of
the wrong dtype, device, layout or size, and addresses of 0, wherever the
package takes an array (conditions, bindings, declared bindings, seed
states), each end in the documented exception class with a message that
names the argument and the fix.
"""
import ctypes
import sys
import unittest

import hostile
import tap
from hostile import BIG, Fixture, guarded
from track_gen import _native
from track_gen import exec as tx

ROWS = hostile.Rows()
row = ROWS.add


# -- arrays --------------------------------------------------------------------
class Interface:
    """An object whose __cuda_array_interface__ is *interface* (or raises it,
    when it is an exception)."""

    def __init__(self, interface):
        self.interface = interface

    @property
    def __cuda_array_interface__(self):
        if isinstance(self.interface, BaseException):
            raise self.interface
        return self.interface


class DLPack:
    """An object with __dlpack__ returning *capsule* and, unless None,
    __dlpack_device__ returning *device* (either raises an exception given)."""

    def __init__(self, capsule, device=None):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, stream=None):
        if isinstance(self.capsule, BaseException):
            raise self.capsule
        return self.capsule

    def __getattr__(self, name):
        if name != "__dlpack_device__" or self.device is None:
            raise AttributeError(name)

        def device():
            if isinstance(self.device, BaseException):
                raise self.device
            return self.device
        return device


def cai(**changes):
    """A well-formed interface of 4 int32 at 0x10000, with *changes* (None
    deletes a key)."""
    d = {"data": (0x10000, False), "shape": (4,), "typestr": "<i4", "strides": None,
         "version": 3}
    for key, value in changes.items():
        if value is None:
            d.pop(key)
        else:
            d[key] = value
    return d


MALFORMED = [
    ("not a dict", [("data", 0x10000)], "not a dict"),
    ("no data", cai(data=None), "data"),
    ("data a list", cai(data=[0x10000, False]), "data"),
    ("data of one", cai(data=(0x10000,)), "data"),
    ("data address a str", cai(data=("0x10000", False)), "data"),
    ("data address -1", cai(data=(-1, False)), "address"),
    ("data address 2**64", cai(data=(BIG, False)), "address"),
    ("data address 0", cai(data=(0, False)), "NULL"),
    ("no shape", cai(shape=None), "shape"),
    ("shape a list", cai(shape=[4]), "shape"),
    ("shape negative", cai(shape=(-4,)), "shape"),
    ("shape a float", cai(shape=(4.0,)), "shape"),
    ("shape past memory", cai(shape=(2 ** 40, 2 ** 40)), "more bytes"),
    ("shape empty", cai(shape=(0,)), "no element"),
    ("shape empty 2-d", cai(shape=(4, 0)), "no element"),
    ("no typestr", cai(typestr=None), "typestr"),
    ("typestr not str", cai(typestr=4), "typestr"),
    ("typestr big-endian", cai(typestr=">i4"), "byte order"),
    ("typestr no size", cai(typestr="<i"), "byte order"),
    ("typestr bad size", cai(typestr="<i4x"), "byte order"),
    ("strides too short", cai(shape=(2, 2), strides=(8,)), "strides"),
    ("strides a list", cai(strides=[4]), "strides"),
    ("strides transposed", cai(shape=(2, 3), strides=(4, 8)), ".contiguous()"),
    ("strides negative", cai(shape=(4,), strides=(-4,)), ".contiguous()"),
    ("strides every other", cai(shape=(4,), strides=(8,)), ".contiguous()"),
    ("version 4", cai(version=4), "version"),
    ("version str", cai(version="3"), "version"),
    ("masked", cai(mask=Interface(cai())), "mask"),
]
for label, interface, word in MALFORMED:
    row("conditional " + label, lambda f, i=interface: tx.conditional(Interface(i)),
        tx.ArgumentError, "flag", word)
    row("bind " + label, lambda f, i=interface: f.producer("maker").bind("buf", Interface(i)),
        tx.ArgumentError, "binding 'buf' of producer 'maker'", word)
row("array_info malformed", lambda f: _native.array_info(Interface([1])),
    tx.ArgumentError, "array", "not a dict")
row("run condition malformed",
    lambda f: f.producer().run(None, tx.Policy.AUTO, Interface(cai(shape=(0,)))),
    tx.ArgumentError, "flag", "no element")
row("bind strided names the fix",
    lambda f: f.producer("strided").bind("buf", Interface(cai(shape=(4,), strides=(8,)))),
    tx.ArgumentError, "binding 'buf'", "producer 'strided'", ".contiguous()",
    "Interface")
for label, typestr in (("bool", "|b1"), ("uint8", "|u1"), ("int8", "|i1"),
                       ("int64", "<i8"), ("float32", "<f4")):
    row("conditional flag of " + label,
        lambda f, t=typestr: tx.conditional(Interface(cai(typestr=t))),
        tx.ArgumentError, "flag", label, ".int()")
    row("loop flag binding of " + label,
        lambda f, t=typestr: looped(f).bind("go", Interface(cai(typestr=t))),
        tx.ArgumentError, "binding 'go'", label, ".int()")
row("switch index binding of bool",
    lambda f: switched(f).bind("index", Interface(cai(typestr="|b1"))),
    tx.ArgumentError, "binding 'index'", ".int()")
row("stage condition binding of uint8",
    lambda f: guarded(f).bind("flag", Interface(cai(typestr="|u1"))),
    tx.ArgumentError, "binding 'flag'", ".int()")
row("flag smaller than an int32",
    lambda f: tx.conditional(Interface(cai(typestr="|V2", shape=(1,)))),
    tx.ArgumentError, "flag", "fewer")
row("declared float32, bound int32",
    lambda f: declared(f, "float32").bind("x", Interface(cai())), tx.ArgumentError,
    "binding 'x'", "float32")
row("declared twice", lambda f: declared(declared(f, "float32"), "int32"), ValueError,
    "dtype", "float32")
for label, exc in (("KeyboardInterrupt", KeyboardInterrupt("mine")),
                   ("RuntimeError", RuntimeError("mine")), ("ValueError", ValueError("mine")),
                   ("TypeError", TypeError("mine"))):
    row("interface raising " + label, lambda f, e=exc: tx.conditional(Interface(e)),
        type(exc), "mine")
    row("__dlpack__ raising " + label, lambda f, e=exc: tx.conditional(DLPack(e)),
        type(exc), "mine")
    row("__dlpack_device__ raising " + label,
        lambda f, e=exc: f.producer().bind("buf", DLPack(None, e)), type(exc), "mine")
row("interface AttributeError, no DLPack", lambda f: tx.conditional(
    Interface(AttributeError("mine"))), TypeError, "flag", "device memory")
row("__dlpack__ returns no capsule", lambda f: tx.conditional(DLPack(b"capsule")),
    tx.ArgumentError, "flag", "capsule")
row("__dlpack_device__ CPU", lambda f: f.producer().bind("buf", DLPack(None, (1, 0))),
    tx.ArgumentError, "binding 'buf'", "CPU", ".cuda()")
row("__dlpack_device__ pinned host",
    lambda f: f.producer().bind("buf", DLPack(None, (3, 0))), tx.ArgumentError,
    "pinned host", ".cuda()")
row("__dlpack_device__ not a pair",
    lambda f: f.producer().bind("buf", DLPack(None, "cuda")), tx.ArgumentError,
    "__dlpack_device__")
row("numpy array (CPU)", lambda f: f.producer().bind("buf", numpy_or_skip().zeros(4)),
    tx.ArgumentError, "binding 'buf'", "numpy.ndarray", "CPU", ".cuda()")
row("numpy flag (CPU)", lambda f: tx.conditional(numpy_or_skip().zeros(1, "int32")),
    tx.ArgumentError, "flag", "CPU")
row("a str as an array", lambda f: f.producer().bind("buf", "tensor"), TypeError,
    "binding 'buf'", "device memory")
row("a list as a flag", lambda f: tx.conditional([1]), TypeError, "flag")
row("torch CPU tensor", lambda f: f.producer().bind("buf", f.torch.zeros(4)),
    tx.ArgumentError, "binding 'buf'", "torch.Tensor", "CPU", ".cuda()", gpu=True)
row("torch transposed tensor",
    lambda f: f.producer().bind("buf", f.tensor(16).view(4, 4).t()), tx.ArgumentError,
    "binding 'buf'", ".contiguous()", gpu=True)
row("torch sliced tensor", lambda f: f.producer().bind("buf", f.tensor(16)[::2]),
    tx.ArgumentError, ".contiguous()", gpu=True)
row("torch empty tensor", lambda f: f.producer().bind("buf", f.tensor(0)),
    tx.ArgumentError, "no element", gpu=True)
row("torch bool flag (done.any())",
    lambda f: tx.conditional(f.tensor(4, "bool").any()), tx.ArgumentError, "flag",
    "bool", ".int()", gpu=True)
row("torch uint8 flag", lambda f: tx.conditional(f.tensor(1, "uint8")),
    tx.ArgumentError, "uint8", ".int()", gpu=True)
row("torch int64 flag", lambda f: tx.conditional(f.tensor(1, "int64")),
    tx.ArgumentError, "int64", gpu=True)
row("torch tensor requiring grad: torch's refusal, unchanged",
    lambda f: f.producer().bind("buf", f.torch.zeros(4, device="cuda",
                                                      requires_grad=True)),
    RuntimeError, "detach", gpu=True)
row("SeedState.advance CPU mask",
    lambda f: f.seed_state().advance(mask=f.torch.ones(4, dtype=f.torch.uint8)),
    tx.ArgumentError, "mask", "CPU", gpu=True)
row("SeedState.fill_effective strided out",
    lambda f: f.seed_state().fill_effective(f.tensor(8, "int64")[::2]),
    tx.ArgumentError, "out", ".contiguous()", gpu=True)
row("SeedState.set_seeds_device empty ids",
    lambda f: f.seed_state().set_seeds_device(f.tensor(0), f.tensor(0, "int64")),
    tx.ArgumentError, "env_ids", "no element", gpu=True)

row("SeedState.fill_effective to address 0",
    lambda f: f.seed_state().fill_effective(0, out_len=4), ValueError, "out", "NULL",
    gpu=True)
row("SeedState.set_seeds_device ids at address 0",
    lambda f: f.seed_state().set_seeds_device(0, f.tensor(1, "int64"), n=1), ValueError,
    "env_ids", "NULL", gpu=True)
row("SeedState.advance mask at address 0",
    lambda f: f.seed_state().advance(mask=0, mask_len=4), ValueError, "mask", "NULL",
    gpu=True)

row("declare_binding like a CPU array",
    lambda f: f.producer().declare_binding(0, "x", like=numpy_or_skip().zeros(4)),
    tx.ArgumentError, "like", "CPU")
row("declare_binding like a malformed array",
    lambda f: f.producer().declare_binding(0, "x", like=Interface(cai(shape=(0,)))),
    tx.ArgumentError, "like", "no element")
row("declare_binding like not an array",
    lambda f: f.producer().declare_binding(0, "x", like="tensor"), TypeError, "like")
row("declare_binding like and min_size",
    lambda f: f.producer().declare_binding(0, "x", 4, like=Interface(cai())), TypeError,
    "min_size", "like")
row("declare_binding like of another dtype",
    lambda f: f.producer().declare_binding(0, "x", like=Interface(cai()), dtype="float32"),
    ValueError, "dtype", "int32")
row("declare_binding shape without dtype",
    lambda f: f.producer().declare_binding(0, "x", shape=(4,)), TypeError, "dtype")
row("declare_binding shape negative",
    lambda f: f.producer().declare_binding(0, "x", shape=(4, -1), dtype="int32"),
    ValueError, "shape")
row("declare_binding shape of floats",
    lambda f: f.producer().declare_binding(0, "x", shape=(4.0,), dtype="int32"),
    ValueError, "shape")
row("declare_binding unknown dtype",
    lambda f: f.producer().declare_binding(0, "x", shape=(4,), dtype="int33"),
    ValueError, "dtype")


def numpy_or_skip():
    try:
        import numpy
    except ImportError:
        raise unittest.SkipTest("no numpy")
    return numpy


def looped(f):
    p = f.producer()
    p.add_loop_stage("loop", lambda ctx: None, flag="go", status="status", max_iters=2)
    return p


def switched(f):
    p = f.producer()
    p.add_switch_stage("switch", [lambda ctx: None], index="index")
    return p


def declared(f_or_p, dtype):
    p = f_or_p.producer() if isinstance(f_or_p, Fixture) else f_or_p
    p.declare_binding(0, "x", 4, dtype=dtype)
    return p


# -- DLPack tensors made by hand, their deleter Python code -----------------------
class _Managed(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Managed))
_I64P = ctypes.POINTER(ctypes.c_int64)
_Managed._fields_ = [  # DLManagedTensor: DLTensor, manager_ctx, deleter
    ("data", ctypes.c_void_p), ("device_type", ctypes.c_int), ("device_id", ctypes.c_int),
    ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
    ("lanes", ctypes.c_uint16), ("shape", _I64P), ("strides", _I64P),
    ("byte_offset", ctypes.c_uint64), ("manager_ctx", ctypes.c_void_p),
    ("deleter", _DELETER)]
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class HandMade:
    """A CUDA tensor at 0x10000 of *shape* (and *strides*) and DLPack type
    (*code*, *bits*), as a pure-Python producer exports it: its deleter a
    ctypes callback, which counts its calls in *deleted*."""

    def __init__(self, shape=(4,), strides=None, code=0, bits=32):
        self.deleted = 0
        self.deleter = _DELETER(self.delete)
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.strides = (ctypes.c_int64 * len(shape))(*strides) if strides else None
        self.managed = _Managed(0x10000, 2, 0, len(shape), code, bits, 1, self.shape,
                                self.strides, 0, None, self.deleter)

    def delete(self, managed):
        self.deleted += 1

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        return _capsule_new(ctypes.addressof(self.managed), b"dltensor", None)


for label, code, bits, word in (("complex64", 5, 64, "complex64"),
                                ("an opaque handle", 3, 64, "opaque64"),
                                ("float8 (code 7)", 7, 8, "dlpack7:8")):
    row("conditional flag of DLPack " + label,
        lambda f, c=code, b=bits: tx.conditional(HandMade(code=c, bits=b)),
        tx.ArgumentError, "flag", word)


class DLPackRefusals(unittest.TestCase):
    """A DLPack tensor refused after its export: the refusal comes out as
    raised (not a SystemError from the deleter's Python code), and the
    deleter ran once."""

    def test_refused_after_export(self):
        for shape, strides, word in (((2, 3), (1, 2), ".contiguous()"),
                                     ((-1,), None, "negative extent")):
            with self.subTest(shape=shape):
                t = HandMade(shape, strides)
                with self.assertRaises(tx.ArgumentError) as caught:
                    tx.conditional(t)
                self.assertIn(word, str(caught.exception))
                self.assertEqual(t.deleted, 1)


class Table(hostile.Table):
    """One test per row (added below)."""


hostile.add_tests(Table, ROWS)


if __name__ == "__main__":
    sys.exit(tap.main())
