# SPDX-License-Identifier: Apache-2.0
"""Hostile input, a table: every entry point of the package given what a user
gets wrong -- integers out of range, malformed arrays, objects used after
their call -- ends in the documented exception class with a message that
names the argument, never a crash, a SystemError or a silent wrap.

Each row is one test: (name, call, exception class, words the message must
hold).  A call takes the fixture (producers, arrays, and torch on a GPU);
rows marked gpu skip without one, rows marked subprocess run in a child
interpreter, where a crash fails the row instead of the whole file.
"""
import math
import subprocess
import sys
import textwrap
import unittest

import tap
import tgtest
from track_gen import _native
from track_gen import exec as tx
from track_gen import seeds
from track_gen import tracks


class Row:
    def __init__(self, name, call, exc, *words, gpu=False, subprocess=None):
        self.name, self.call, self.exc, self.words = name, call, exc, words
        self.gpu = gpu
        #: Code run in a child interpreter instead of call: it must exit
        #: cleanly, printing the exception's class (unless None) and words.
        self.subprocess = subprocess


class Fixture:
    """What rows take: fresh objects for each row."""

    def __init__(self, torch=None):
        self.torch = torch

    def producer(self, name="hostile"):
        """A producer with one DEVICE stage declaring binding "buf"."""
        p = tx.Producer(name)
        s = p.add_device_stage("stage", lambda ctx: None, capture_safe=True)
        p.declare_binding(s, "buf", 16)
        return p

    def tensor(self, n=4, dtype="int32"):
        return self.torch.zeros(n, dtype=getattr(self.torch, dtype), device="cuda")

    def seed_state(self, n=4):
        return seeds.SeedState(n, 1)


BIG = 2 ** 64
HUGE = 2 ** 200

ROWS = []


def row(*args, **kwargs):
    ROWS.append(Row(*args, **kwargs))


# -- integers: seeds, epochs, env ids ----------------------------------------
for label, value in (("-1", -1), ("2**64", BIG), ("2**200", HUGE), ("-2**200", -HUGE)):
    row("effective_seed seed " + label, lambda f, v=value: seeds.effective_seed(v, 0),
        OverflowError, "seed", "2**64 - 1")
    row("env_seed base_seed " + label, lambda f, v=value: seeds.env_seed(v, 0),
        OverflowError, "base_seed")
for label, value in (("-1", -1), ("2**64", BIG)):
    row("from_seeds seed " + label,
        lambda f, v=value: seeds.SeedState.from_seeds([1, v]), OverflowError,
        "seeds[1]")
for value in (-1, 2 ** 32):
    row("effective_seed epoch %d" % value,
        lambda f, v=value: seeds.effective_seed(1, v), OverflowError, "epoch",
        "2**32 - 1")
    row("env_seed env %d" % value, lambda f, v=value: seeds.env_seed(1, v),
        OverflowError, "env")
    row("at epochs %d" % value, lambda f, v=value: seeds.SeedState.at([1, 2], [0, v]),
        OverflowError, "epochs[1]", gpu=True)
for label, value in (("-1", -1), ("2**64", BIG)):
    row("mix64 z " + label, lambda f, v=value: seeds.mix64(v), OverflowError, "z",
        "2**64 - 1")
row("mix64 bool z", lambda f: seeds.mix64(True), TypeError, "z")
row("mix64 float z", lambda f: seeds.mix64(1.0), TypeError, "z")
row("effective_seed float seed", lambda f: seeds.effective_seed(1.0, 0), TypeError,
    "seed")
row("effective_seed bool epoch", lambda f: seeds.effective_seed(1, True), TypeError,
    "epoch")
row("effective_seed str seed", lambda f: seeds.effective_seed("1", 0), TypeError,
    "seed")
row("SeedState n_envs 0", lambda f: seeds.SeedState(0), tx.ArgumentError, "n_envs")
row("SeedState n_envs -1", lambda f: seeds.SeedState(-1), ValueError, "n_envs")
row("SeedState n_envs 2**32", lambda f: seeds.SeedState(2 ** 32), ValueError, "n_envs")
row("SeedState n_envs 2**31", lambda f: seeds.SeedState(2 ** 31), tx.ArgumentError,
    "n_envs is 2147483648", "2147483647")
row("SeedState n_envs float", lambda f: seeds.SeedState(4.0), TypeError, "n_envs")
row("SeedState base_seed -1", lambda f: seeds.SeedState(4, -1), OverflowError,
    "base_seed")
row("SeedState base_seed 2**64", lambda f: seeds.SeedState(4, BIG), OverflowError,
    "base_seed")
row("SeedState device -1", lambda f: seeds.SeedState(4, 1, device=-1), ValueError,
    "device")
row("SeedState device 2**31", lambda f: seeds.SeedState(4, 1, device=2 ** 31),
    ValueError, "device")
row("SeedState first_env -1", lambda f: seeds.SeedState(4, 1, first_env=-1),
    OverflowError, "first_env")
row("SeedState first_env 2**32", lambda f: seeds.SeedState(4, 1, first_env=2 ** 32),
    OverflowError, "first_env")
row("shard first_env -1", lambda f: seeds.SeedState.shard(-1, 4, 1), OverflowError,
    "first_env")
row("from_seeds not ints", lambda f: seeds.SeedState.from_seeds([1, "2"]), TypeError,
    "seeds[1]")
row("set_seeds env id -1", lambda f: f.seed_state().set_seeds([-1], [1]),
    OverflowError, "env_ids[0]", gpu=True)
row("set_seeds seed 2**64", lambda f: f.seed_state().set_seeds([0], [BIG]),
    OverflowError, "seeds[0]", gpu=True)
row("advance mask_len -1",
    lambda f: f.seed_state().advance(mask=f.tensor(4, "uint8"), mask_len=-1),
    ValueError, "mask_len", gpu=True)
row("fill_effective out_len -1",
    lambda f: f.seed_state().fill_effective(f.tensor(4, "int64"), out_len=-1),
    ValueError, "out_len", gpu=True)
row("set_seeds_device n -1",
    lambda f: f.seed_state().set_seeds_device(f.tensor(1), f.tensor(1, "int64"), n=-1),
    ValueError, "n:", gpu=True)

# -- integers: producers -----------------------------------------------------
row("Producer device -1", lambda f: tx.Producer("p", -1), ValueError, "device")
row("Producer device 2**31", lambda f: tx.Producer("p", 2 ** 31), ValueError, "device")
row("Producer device 2**64", lambda f: tx.Producer("p", BIG), ValueError, "device")
row("Producer device float", lambda f: tx.Producer("p", 0.0), TypeError, "device")
row("Producer device str", lambda f: tx.Producer("p", "0"), TypeError, "device")
row("Producer empty name", lambda f: tx.Producer(""), ValueError, "name")
row("Producer name not str", lambda f: tx.Producer(3), TypeError)
# The C width is checked here, the cap's range by libtrackgen (ArgumentError).
for value, exc in ((0, tx.ArgumentError), (2 ** 31, tx.ArgumentError),
                   (-1, OverflowError), (2 ** 32 + 1, OverflowError)):
    row("add_loop_stage max_iters %d" % value,
        lambda f, v=value: f.producer().add_loop_stage(
            "loop", lambda ctx: None, flag="go", status="status", max_iters=v),
        exc, "max_iters")
row("add_loop_stage max_iters float",
    lambda f: f.producer().add_loop_stage("loop", lambda ctx: None, flag="go",
                                          status="status", max_iters=3.0),
    TypeError, "max_iters")
for label, value in (("-1", -1), ("2**31", 2 ** 31), ("2**200", HUGE)):
    row("declare_binding stage " + label,
        lambda f, v=value: f.producer().declare_binding(v, "x", 4), ValueError, "stage")
    row("set_stage_condition stage " + label,
        lambda f, v=value: f.producer().set_stage_condition(v, "flag"), ValueError,
        "stage")
    row("set_stage_else stage " + label,
        lambda f, v=value: f.producer().set_stage_else(v, None), ValueError, "stage")
# Negative sizes cannot reach C; 0 is libtrackgen's to refuse.
for label, value, exc in (("0", 0, tx.ArgumentError), ("-1", -1, ValueError),
                          ("-2**64", -BIG, ValueError)):
    row("declare_binding min_size " + label,
        lambda f, v=value: f.producer().declare_binding(0, "x", v), exc, "min_size")
row("declare_binding min_size float",
    lambda f: f.producer().declare_binding(0, "x", 4.0), TypeError, "min_size")
row("_add_stage flags -1", lambda f: f.producer()._add_stage("s", lambda c: 0, -1),
    OverflowError, "flags")
row("_add_stage flags 2**32",
    lambda f: f.producer()._add_stage("s", lambda c: 0, 2 ** 32), OverflowError, "flags")
row("bind size -1", lambda f: f.producer().bind("buf", 0x10000, -1), ValueError,
    "size")
row("bind size float", lambda f: f.producer().bind("buf", 0x10000, 16.0), TypeError,
    "size")
row("bind address -1", lambda f: f.producer().bind("buf", -1, 16), ValueError, "buf")
row("bind address 2**64", lambda f: f.producer().bind("buf", BIG, 16), OverflowError,
    "buf")
# A C int is converted here, the policy refused by libtrackgen (ArgumentError).
row("run policy 7", lambda f: f.producer().run(None, 7), tx.ArgumentError, "policy: 7")
row("run policy -1", lambda f: f.producer().run(None, -1), tx.ArgumentError,
    "policy: -1")
row("resolve policy 4", lambda f: f.producer().resolve(None, 4), tx.ArgumentError,
    "policy: 4")
row("run policy float", lambda f: f.producer().run(None, 1.0), TypeError, "policy")
row("policy_name 9", lambda f: _native.policy_name(9), ValueError, "policy")
row("policy_name 2**64", lambda f: _native.policy_name(BIG), ValueError, "policy")
row("resolve policy 2**64", lambda f: f.producer().resolve(None, BIG), ValueError,
    "policy")

# -- integers: streams, devices, timeouts ------------------------------------
for label, value, exc in (("-1", -1, ValueError), ("-2**64", -BIG, ValueError),
                         ("2**64", BIG, OverflowError)):
    row("run stream " + label, lambda f, v=value: f.producer().run(v), exc, "stream")
    row("resolve stream " + label, lambda f, v=value: f.producer().resolve(v), exc,
        "stream")
    row("set_stream " + label, lambda f, v=value: f.producer().set_stream(v), exc,
        "stream")
    row("resolve_stream " + label, lambda f, v=value: tx.resolve_stream(v), exc,
        "stream")
    row("capture_state " + label, lambda f, v=value: tx.capture_state(v), exc,
        "stream")
    row("Producer stream " + label, lambda f, v=value: tx.Producer("p", stream=v),
        exc, "stream")


class CudaStreamProtocol:
    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


class TorchLikeStream:
    def __init__(self, handle):
        self.cuda_stream = handle


row("__cuda_stream__ handle -1", lambda f: f.producer().run(CudaStreamProtocol(-1)),
    ValueError, "stream")
row("__cuda_stream__ not a pair",
    lambda f: f.producer().run(CudaStreamProtocol(None)), TypeError, "stream")
row("cuda_stream -1", lambda f: f.producer().run(TorchLikeStream(-1)), ValueError,
    "stream")
row("cuda_stream str", lambda f: f.producer().run(TorchLikeStream("0")), TypeError,
    "stream")
row("stream of no kind", lambda f: f.producer().run(object()), TypeError, "stream")


class RaisingStream:
    """A stream whose protocol raises *exc*."""

    def __init__(self, exc):
        self.exc = exc

    def __cuda_stream__(self):
        raise self.exc


class RaisingHandle:
    @property
    def cuda_stream(self):
        raise KeyboardInterrupt("mine")


row("__cuda_stream__ raising KeyboardInterrupt",
    lambda f: f.producer().run(RaisingStream(KeyboardInterrupt("mine"))),
    KeyboardInterrupt, "mine")
row("__cuda_stream__ raising RuntimeError",
    lambda f: f.producer().run(RaisingStream(RuntimeError("mine"))), RuntimeError,
    "mine")
row("cuda_stream property raising KeyboardInterrupt",
    lambda f: f.producer().set_stream(RaisingHandle()), KeyboardInterrupt, "mine")
for value in (-1, 2 ** 31):
    row("resolve_stream device %d" % value,
        lambda f, v=value: tx.resolve_stream(None, v), ValueError, "device")
    row("default_stream device %d" % value,
        lambda f, v=value: tx.default_stream(v), ValueError, "device")
    row("device_check device %d" % value,
        lambda f, v=value: tx.device_check(v), ValueError, "device")
for value in (math.nan, -1.0, -1, -math.inf):
    row("release_wait timeout %s" % value, lambda f, v=value: tx.release_wait(v),
        ValueError, "timeout")
row("release_wait timeout -10**400", lambda f: tx.release_wait(-10 ** 400), ValueError,
    "timeout")
row("release_wait timeout str", lambda f: tx.release_wait("1"), TypeError, "timeout")
row("retain graph -1", lambda f: _native.retain(-1, object()), ValueError, "graph")
row("retain graph 0", lambda f: _native.retain(0, object()), tx.ArgumentError,
    "graph: NULL")
row("family_name 2**40", lambda f: tracks.family_name(2 ** 40), ValueError, "family")
row("write_svg n_tracks -1",
    lambda f: tracks.write_svg("/dev/null", b"", b"", -1, 4, 1.0), ValueError, "n_tracks")


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


# -- lifetimes and re-entrancy ---------------------------------------------------
def ran(f, func, host=False):
    """Runs a producer (EAGER) whose one stage calls func(ctx); returns what
    the stage returned.  An exception the stage raised is re-raised as is."""
    seen = {}
    p = tx.Producer("lifetime")

    def stage(ctx):
        try:
            seen["value"] = func(ctx)
        except BaseException as e:  # the exception itself, not StageError
            seen["raised"] = e

    if host:
        p.add_host_stage("host", stage)
    else:
        p.add_device_stage("device", stage)
    p.run(f.torch.cuda.current_stream(), tx.Policy.EAGER)
    p.close()
    if "raised" in seen:
        raise seen["raised"]
    return seen.get("value")


for label, use in (("stream", lambda ctx: ctx.stream),
                   ("binding", lambda ctx: ctx.binding("buf")),
                   ("keep", lambda ctx: ctx.keep(1)),
                   ("if_", lambda ctx: ctx.if_(None, lambda c: None)),
                   ("while_", lambda ctx: ctx.while_(0x10000, 1, 0x10000, lambda c: 0))):
    row("LaunchContext kept: " + label, lambda f, u=use: u(ran(f, lambda ctx: ctx)),
        tx.StateError, "LaunchContext", "returned", gpu=True)
for label, use in (("synchronize", lambda ops: ops.synchronize()),
                   ("enqueue", lambda ops: ops.enqueue(print)),
                   ("copy_to_host", lambda ops: ops.copy_to_host(bytearray(4), 0x10000))):
    row("HostOps kept: " + label,
        lambda f, u=use: u(ran(f, lambda ops: ops, host=True)), tx.StateError,
        "HostOps", "returned", gpu=True)
row("HostOps.copy_to_host to address 0",
    lambda f: ran(f, lambda ops: ops.copy_to_host(0, f.tensor(4), 16), host=True),
    ValueError, "dst", "NULL", gpu=True)
row("HostOps.copy_to_device from address 0",
    lambda f: ran(f, lambda ops: ops.copy_to_device(f.tensor(4), 0, 16), host=True),
    ValueError, "src", "NULL", gpu=True)
row("HostOps.copy_to_host size -1",
    lambda f: ran(f, lambda ops: ops.copy_to_host(bytearray(4), f.tensor(1), -1),
                  host=True), ValueError, "size", gpu=True)
row("HostOps.copy_to_host past the destination",
    lambda f: ran(f, lambda ops: ops.copy_to_host(bytearray(4), f.tensor(4), 16),
                  host=True), ValueError, "size", gpu=True)
row("HostOps.copy_to_device from a str",
    lambda f: ran(f, lambda ops: ops.copy_to_device(f.tensor(4), "data"), host=True),
    TypeError, "src", gpu=True)
row("HostOps.enqueue not callable",
    lambda f: ran(f, lambda ops: ops.enqueue(42), host=True), TypeError, "func",
    gpu=True)
row("ctx.if_ then not callable",
    lambda f: ran(f, lambda ctx: ctx.if_(None, 42)), TypeError, "then", gpu=True)
row("ctx.if_ otherwise not callable",
    lambda f: ran(f, lambda ctx: ctx.if_(None, print, 42)), TypeError, "otherwise",
    gpu=True)
row("ctx.while_ body not callable",
    lambda f: ran(f, lambda ctx: ctx.while_(f.tensor(1), 2, f.tensor(2), 42)),
    TypeError, "body", gpu=True)
# The C width is checked here, the cap's range by libtrackgen (ArgumentError).
for value, exc in ((0, tx.ArgumentError), (2 ** 31, tx.ArgumentError),
                   (-1, OverflowError), (2 ** 32, OverflowError)):
    row("ctx.while_ max_iters %d" % value,
        lambda f, v=value: ran(f, lambda ctx: ctx.while_(f.tensor(1), v, f.tensor(2),
                                                          print)),
        exc, "max_iters", gpu=True)
row("ctx.while_ bool flag",
    lambda f: ran(f, lambda ctx: ctx.while_(f.tensor(1, "bool"), 2, f.tensor(2), print)),
    tx.ArgumentError, "flag", ".int()", gpu=True)
row("ctx.while_ status of one int32",
    lambda f: ran(f, lambda ctx: ctx.while_(f.tensor(1), 2, f.tensor(1), print)),
    tx.ArgumentError, "status", "fewer", gpu=True)
row("ctx.switch uint8 index",
    lambda f: ran(f, lambda ctx: ctx.switch(f.tensor(1, "uint8"), [print])),
    tx.ArgumentError, "index", ".int()", gpu=True)
row("ctx.switch no case",
    lambda f: ran(f, lambda ctx: ctx.switch(f.tensor(1), [])), tx.ArgumentError,
    "n_cases", gpu=True)
row("ctx.switch case not callable",
    lambda f: ran(f, lambda ctx: ctx.switch(f.tensor(1), [print, 3])), TypeError,
    "cases", gpu=True)
row("ctx.binding undeclared",
    lambda f: ran(f, lambda ctx: ctx.binding("nothing")), KeyError, "nothing", gpu=True)
row("ctx.binding not a str",
    lambda f: ran(f, lambda ctx: ctx.binding(3)), TypeError, "name", gpu=True)
row("a stage re-runs its own producer",
    lambda f: reentrant(f, lambda p, ctx: p.run(ctx.stream)), tx.StateError,
    "already running", gpu=True)
row("a stage rebinds its own producer",
    lambda f: reentrant(f, lambda p, ctx: p.bind("buf", f.tensor(8))), tx.StateError,
    "already running", gpu=True)
row("a stage adds a stage to its own producer",
    lambda f: reentrant(f, lambda p, ctx: p.add_device_stage("late", print)),
    tx.StateError, "running", gpu=True)

CHILD = """
import gc, sys, torch, weakref
from track_gen import exec as tx
from track_gen import seeds
stream = torch.cuda.current_stream()
buf = torch.zeros(4, dtype=torch.int32, device="cuda")

def report(e):
    print("%s: %s" % (type(e).__name__, e))
"""
row("a stage closes its own producer: freed after the call",
    None, ValueError, "closed", "after: True", gpu=True, subprocess=CHILD + """
p = tx.Producer("self-closing")
def stage(ctx):
    p.close()
    ctx.binding("buf").add_(1)  # the call goes on: the producer is freed after it
s = p.add_device_stage("close", stage)
p.declare_binding(s, "buf", 16)
p.bind("buf", buf)
p.run(stream, tx.Policy.EAGER)
torch.cuda.synchronize()
print("after:", p.closed, int(buf[0]) == 1)
try:
    p.run(stream)
except ValueError as e:
    report(e)
""")
row("a producer released from its own stage",
    None, None, "freed: True", gpu=True, subprocess=CHILD + """
holder = [tx.Producer("released")]
ref = weakref.ref(holder[0])
def stage(ctx):
    ref().close()
    holder.clear()  # the last reference but the call's own
holder[0].add_device_stage("release", stage, capture_safe=True)
holder[0].run(stream, tx.Policy.REPLAY)
gc.collect()
print("freed:", ref() is None)
""")
row("objects released from __del__ during a torch capture",
    None, ValueError, "closed", "replayed: True", gpu=True, subprocess=CHILD + """
class Dropper:
    def __init__(self, *objs):
        self.objs = objs
    def __del__(self):
        for o in self.objs:
            o.close()
victim = tx.Producer("victim")
victim.add_device_stage("add", lambda ctx: ctx.binding("buf").add_(1), capture_safe=True)
victim.declare_binding(0, "buf", 16)
victim.bind("buf", buf)
victim.run(stream, tx.Policy.REPLAY)  # own graphs, pinned buffers
state = seeds.SeedState(16, 1)
dropper = Dropper(victim, state)
x = torch.zeros(4, device="cuda")
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    x.add_(1)
    del dropper  # releases both during the capture
    x.mul_(3)
g.replay()
torch.cuda.synchronize()
print("replayed:", x.tolist() == [3.0] * 4)
del g
try:
    victim.run(stream)
except ValueError as e:
    report(e)
""")


def reentrant(f, call):
    """Runs a producer whose stage does call(producer, ctx): a TrackGenError
    the inner call raised comes out of the outer one in its own class."""
    p = tx.Producer("reentrant")
    p.add_device_stage("inner", lambda ctx: call(p, ctx))
    p.declare_binding(0, "buf", 16)
    p.bind("buf", f.tensor(4))
    try:
        p.run(f.torch.cuda.current_stream(), tx.Policy.EAGER)
    finally:
        p.close()

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


# -- names, closed objects, the rest of the producer's methods -------------------
for label, value, exc in (("with a NUL", "a\0b", ValueError), ("an int", 3, TypeError),
                          ("bytes", b"name", TypeError), ("None", None, TypeError)):
    row("Producer name " + label, lambda f, v=value: tx.Producer(v), exc, "name")
    row("add_device_stage name " + label,
        lambda f, v=value: f.producer().add_device_stage(v, print), exc, "name")
    row("add_loop_stage flag " + label,
        lambda f, v=value: f.producer().add_loop_stage("l", print, flag=v, status="s",
                                                       max_iters=2),
        exc, "flag")
    row("add_switch_stage index " + label,
        lambda f, v=value: f.producer().add_switch_stage("s", [print], index=v), exc,
        "index")
    row("declare_binding name " + label,
        lambda f, v=value: f.producer().declare_binding(0, v, 4), exc, "name")
    row("bind name " + label, lambda f, v=value: f.producer().bind(v, None), exc, "name")
    row("get_binding name " + label, lambda f, v=value: f.producer().get_binding(v), exc,
        "name")
    row("binding_owner name " + label,
        lambda f, v=value: f.producer().binding_owner(v), exc, "name")
row("bind empty name", lambda f: f.producer().bind("", None), ValueError, "name")
row("get_binding empty name", lambda f: f.producer().get_binding(""), ValueError, "name")
row("set_stage_condition flag of NUL",
    lambda f: f.producer().set_stage_condition(0, "a\0"), ValueError, "flag_binding")
row("add_device_stage empty name", lambda f: f.producer().add_device_stage("", print),
    tx.ArgumentError, "name")
row("add_device_stage func not callable",
    lambda f: f.producer().add_device_stage("s", 42), TypeError, "func")
row("add_host_stage func not callable", lambda f: f.producer().add_host_stage("s", 42),
    TypeError, "func")
row("add_loop_stage body not callable",
    lambda f: f.producer().add_loop_stage("l", 42, flag="f", status="s", max_iters=2),
    TypeError, "body")
row("add_loop_stage flag and status alike",
    lambda f: f.producer().add_loop_stage("l", print, flag="f", status="f", max_iters=2),
    tx.ArgumentError, "'f'")
row("add_switch_stage cases not a sequence",
    lambda f: f.producer().add_switch_stage("s", 42, index="i"), TypeError)
row("add_switch_stage a case not callable",
    lambda f: f.producer().add_switch_stage("s", [print, 42], index="i"), TypeError,
    "cases")
row("add_switch_stage no case",
    lambda f: f.producer().add_switch_stage("s", [], index="i"), tx.ArgumentError, "case")
row("set_stage_else func not callable",
    lambda f: guarded(f).set_stage_else(0, 42), TypeError, "func")
row("set_stage_else on an unguarded stage",
    lambda f: f.producer().set_stage_else(0, print), tx.ArgumentError, "condition")
row("set_stream a str", lambda f: f.producer().set_stream("x"), TypeError, "stream")
row("run an int condition of 0", lambda f: f.producer().run(None, tx.Policy.AUTO, 0),
    ValueError, "flag", "NULL")
row("run four arguments", lambda f: f.producer().run(None, None, None, None), TypeError)
row("run unknown keyword", lambda f: f.producer().run(strean=None), TypeError, "strean")
row("run keyword twice", lambda f: f.producer().run(None, stream=None), TypeError,
    "stream")
for label, call in (("run", lambda p: p.run()), ("resolve", lambda p: p.resolve()),
                    ("bind", lambda p: p.bind("buf", None)),
                    ("add_device_stage", lambda p: p.add_device_stage("x", print)),
                    ("declare_binding", lambda p: p.declare_binding(0, "x", 4)),
                    ("name", lambda p: p.name), ("n_stages", lambda p: p.n_stages),
                    ("runner.stats", lambda p: p.runner.stats),
                    ("set_stream", lambda p: p.set_stream(None))):
    row("closed producer: " + label, lambda f, c=call: c(closed(f.producer())),
        ValueError, "closed")
for label, call in (("advance", lambda s: s.advance()), ("n_envs", lambda s: s.n_envs),
                    ("snapshot", lambda s: s.snapshot()), ("read", lambda s: s.read())):
    row("closed SeedState: " + label, lambda f, c=call: c(closed(f.seed_state())),
        ValueError, "closed", gpu=True)
row("SeedState snapshot garbage", lambda f: f.seed_state().restore(b"garbage"),
    tx.ArgumentError, "SeedState.snapshot()", gpu=True)
# libtrackgen's messages name the C API; Python callers read Python's names.
row("RECORD outside a capture names Policy",
    lambda f: f.producer().run(f.torch.cuda.current_stream(), tx.Policy.RECORD),
    tx.StateError, "Policy.RECORD", "Policy.AUTO", gpu=True)
row("an unbound binding names producer.bind()",
    lambda f: f.producer().run(f.torch.cuda.current_stream()), tx.StateError,
    "producer.bind()", gpu=True)
row("SeedState restore a str", lambda f: f.seed_state().restore("TGSEEDS"), TypeError,
    "snapshot", gpu=True)
row("SeedState write too few epochs", lambda f: f.seed_state(4).write(None, [0, 1]),
    ValueError, "epochs", gpu=True)
row("SeedState write epoch 2**32", lambda f: f.seed_state(1).write(None, [2 ** 32]),
    OverflowError, "epochs[0]", gpu=True)
row("SeedState set_seeds lengths differ",
    lambda f: f.seed_state().set_seeds([0, 1], [5]), ValueError, "seeds", gpu=True)

# -- interop and tracks -------------------------------------------------------------
from track_gen import interop  # noqa: E402 (beside the rows that use it)

row("CaptureScope stream -1", lambda f: interop.CaptureScope(-1), ValueError, "stream")
row("CaptureScope mode 5", lambda f: interop.CaptureScope(0, 5), ValueError, "mode")
row("CaptureScope mode -1", lambda f: interop.CaptureScope(0, -1), ValueError, "mode")
row("retain no graph", lambda f: _native.retain(), TypeError, "graph")
row("retain_capture stream -1", lambda f: interop.retain_capture(-1, object()),
    ValueError, "stream")
row("is_registered stream -1", lambda f: interop.is_registered(-1), ValueError, "stream")
row("retain_capture outside a capture",
    lambda f: interop.retain_capture(f.torch.cuda.current_stream(), object()),
    tx.StateError, "no capture", gpu=True)
row("torch.registered unknown mode",
    lambda f: torch_interop().registered("bogus").__enter__(), ValueError,
    "capture_error_mode", gpu=True)
row("torch.tensor_at an unknown dtype",
    lambda f: torch_interop().tensor_at(0x10000, (4,), f.torch.complex64), ValueError,
    "dtype", gpu=True)
row("torch.retain outside a capture",
    lambda f: torch_interop().retain(object()), tx.StateError, "no capture", gpu=True)
row("TrackProducer seeds not a SeedState",
    lambda f: tracks.TrackProducer(object()), TypeError, "seeds")
row("TrackProducer unknown option",
    lambda f: tracks.TrackProducer(f.seed_state(), bogus=1), TypeError, "bogus", gpu=True)
row("TrackProducer advance not a bool",
    lambda f: tracks.TrackProducer(f.seed_state(), advance=1), TypeError, "advance",
    gpu=True)
row("TrackProducer n_points -1",
    lambda f: tracks.TrackProducer(f.seed_state(), n_points=-1), ValueError, "n_points",
    gpu=True)
row("TrackProducer max_iters 2**40",
    lambda f: tracks.TrackProducer(f.seed_state(), max_iters=2 ** 40), ValueError,
    "max_iters", gpu=True)
row("TrackProducer radius a str",
    lambda f: tracks.TrackProducer(f.seed_state(), radius="big"), TypeError, gpu=True)
row("write_svg points of the wrong size",
    lambda f: tracks.write_svg("/dev/null", b"\0" * 8, b"\1", 1, 4, 1.0), ValueError,
    "points")
row("family_name a str", lambda f: tracks.family_name("polar"), TypeError, "family")


def closed(obj):
    obj.close()
    return obj


def torch_interop():
    from track_gen.interop import torch as interop_torch
    return interop_torch


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


def guarded(f):
    p = f.producer()
    p.set_stage_condition(0, "flag")
    return p


def declared(f_or_p, dtype):
    p = f_or_p.producer() if isinstance(f_or_p, Fixture) else f_or_p
    p.declare_binding(0, "x", 4, dtype=dtype)
    return p


class Table(unittest.TestCase):
    """One test per row (added below)."""

    def row(self, r):
        if r.gpu:
            torch = tgtest.require_gpu()
        else:
            torch = None
        if r.subprocess is not None:
            return self.child(r)
        with self.assertRaises(r.exc) as caught:
            r.call(Fixture(torch))
        # The documented class itself, not one of its subclasses.
        self.assertIs(type(caught.exception), r.exc, caught.exception)
        for word in r.words:
            self.assertIn(word, str(caught.exception))

    def child(self, r):
        """Runs the row's code in a child interpreter: it must exit cleanly,
        having printed the exception's class and message."""
        code = textwrap.dedent(r.subprocess)
        child = subprocess.run([sys.executable, "-c", code], capture_output=True,
                               text=True, timeout=120)
        self.assertEqual(child.returncode, 0, child.stdout + child.stderr)
        if r.exc is not None:
            self.assertIn(r.exc.__name__, child.stdout, child.stdout + child.stderr)
        for word in r.words:
            self.assertIn(word, child.stdout)


class OneCallableMessage(unittest.TestCase):
    """Every callable argument of the package is checked by one converter,
    worded once: "what: a callable[ or None], not <class ...>"."""

    def test_one_wording(self):
        from track_gen import _flow

        calls = [
            (lambda: tx.Producer("p").add_device_stage("s", 42), "func", False),
            (lambda: tx.Producer("p").add_host_stage("s", 42), "func", False),
            (lambda: tx.Producer("p").add_switch_stage("s", [print, 42], index="i"),
             "cases[1]", False),
            (lambda: _native._set_stage_runner(42), "runner", True),
            (lambda: _flow.capture_if(0x10000, 42), "on_true", True),
            (lambda: _flow.capture_while(0x10000, 42, max_iters=2), "while_body",
             False),
            (lambda: _flow.capture_switch(0x10000, [print, 42]), "cases[1]", True),
        ]
        for call, what, optional in calls:
            with self.subTest(what=what):
                with self.assertRaises(TypeError) as caught:
                    call()
                self.assertEqual(str(caught.exception), "%s: a callable%s, not %r"
                                 % (what, " or None" if optional else "", int))


for i, r in enumerate(ROWS):
    name = "".join(c if c.isalnum() else "_" for c in r.name)
    setattr(Table, "test_%03d_%s" % (i, name), lambda self, r=r: self.row(r))


if __name__ == "__main__":
    sys.exit(tap.main())
