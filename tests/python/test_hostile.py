# SPDX-License-Identifier: Apache-2.0
"""Hostile arguments, a table (hostile.py says how a row runs): integers out
of range (seeds, epochs, env ids, a producer's sizes, flags and policies,
streams, devices, timeouts), names, and the rest of each entry point's
arguments, interop's and tracks' among them, each end in the documented
exception class with a message that names the argument.  Malformed arrays
are in test_hostile_arrays.py; objects used inside or after their call, and
stages calling back into their own producer, in test_hostile_lifetimes.py.
"""
import math
import sys
import unittest

import hostile
import tap
from hostile import BIG, HUGE, guarded
from track_gen import _native
from track_gen import exec as tx
from track_gen import seeds
from track_gen import tracks

ROWS = hostile.Rows()
row = ROWS.add


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


class ArrayWithPtr:
    """An array with an int ptr, as a wp.array has: its data, never a stream."""
    ptr = 0x10000
    __cuda_array_interface__ = {"version": 3, "data": (0x10000, False), "shape": (4,),
                                "typestr": "<i4"}


row("an array's ptr as a stream", lambda f: f.producer().run(ArrayWithPtr()), TypeError,
    "stream", "not an array")
row("set_stream an array", lambda f: f.producer().set_stream(ArrayWithPtr()), TypeError,
    "stream", "not an array")
row("a CuPy-like stream of ptr -1",
    lambda f: f.producer().run(type("S", (), {"ptr": -1})()), ValueError, "stream")


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


class RaisingIndex:
    def __index__(self):
        raise OverflowError("mine")


row("release_wait timeout whose __index__ raises",
    lambda f: tx.release_wait(RaisingIndex()), OverflowError, "mine")
row("__cuda_stream__ not callable",
    lambda f: f.producer().set_stream(type("S", (), {"__cuda_stream__": 3})()), TypeError,
    "stream", "__cuda_stream__")
row("retain graph -1", lambda f: _native.retain(-1, object()), ValueError, "graph")
row("retain graph 0", lambda f: _native.retain(0, object()), tx.ArgumentError,
    "graph: NULL")
row("family_name 2**40", lambda f: tracks.family_name(2 ** 40), ValueError, "family")
row("write_svg n_tracks -1",
    lambda f: tracks.write_svg("/dev/null", b"", b"", -1, 4, 1.0), ValueError, "n_tracks")

# -- switches: True or False alone (a truthy "no" turned one on) --------------
for value in ("no", 1, 0, None):
    row("set_nvtx on %r" % (value,), lambda f, v=value: tx.set_nvtx(v), TypeError, "on",
        "True or False")
    row("set_checks on %r" % (value,), lambda f, v=value: tx.set_checks(v), TypeError,
        "on", "True or False")
for value in ("no", 1):
    for label, call in (
            ("add_device_stage capture_safe",
             lambda p, v: p.add_device_stage("s", print, capture_safe=v)),
            ("add_device_stage legacy_stream",
             lambda p, v: p.add_device_stage("s", print, legacy_stream=v)),
            ("add_host_stage capture_safe",
             lambda p, v: p.add_host_stage("s", print, capture_safe=v)),
            ("add_loop_stage capture_safe",
             lambda p, v: p.add_loop_stage("l", print, flag="f", status="s", max_iters=2,
                                           capture_safe=v)),
            ("add_switch_stage capture_safe",
             lambda p, v: p.add_switch_stage("w", [print], index="i", capture_safe=v))):
        row("%s %r" % (label, value), lambda f, c=call, v=value: c(f.producer(), v),
            TypeError, label.split()[1], "True or False")

# -- names, the rest of the producer's methods ---------------------------------
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
for label, call, exc, word in (
        ("declare_binding dtype an int", lambda p: p.declare_binding(0, "x", 4, dtype=5),
         TypeError, "dtype"),
        ("declare_binding dtype unknown",
         lambda p: p.declare_binding(0, "x", 4, dtype="nonsense"), ValueError, "dtype"),
        ("declare_binding shape an int",
         lambda p: p.declare_binding(0, "x", shape=4, dtype="int32"), TypeError, "shape"),
        ("declare_binding shape past memory",
         lambda p: p.declare_binding(0, "x", shape=(BIG,), dtype="int32"), ValueError,
         "shape"),
        ("declare_binding name a list", lambda p: p.declare_binding(0, [], 4), TypeError,
         "name"),
        ("bind name a list", lambda p: p.bind([], None), TypeError, "name"),
        ("unbind name a dict", lambda p: p.unbind({}), TypeError, "name"),
        ("set_stage_condition flag a list", lambda p: p.set_stage_condition(0, []),
         TypeError, "flag_binding"),
        ("add_loop_stage flag a list",
         lambda p: p.add_loop_stage("l", print, flag=[], status="s", max_iters=2),
         TypeError, "flag"),
        ("add_switch_stage index a list",
         lambda p: p.add_switch_stage("w", [print], index=[]), TypeError, "index"),
        ("add_switch_stage cases None",
         lambda p: p.add_switch_stage("w", None, index="i"), TypeError, "cases")):
    row(label, lambda f, c=call: c(f.producer()), exc, word)
row("from_seeds None", lambda f: seeds.SeedState.from_seeds(None), TypeError, "seeds")
row("from_seeds a generator", lambda f: seeds.SeedState.from_seeds(s for s in [1]),
    TypeError, "seeds")
row("add_device_stage func a tuple", lambda f: f.producer().add_device_stage("s", ()),
    TypeError, "func")
row("add_host_stage func a tuple", lambda f: f.producer().add_host_stage("s", (print,)),
    TypeError, "func")
row("add_loop_stage body a tuple",
    lambda f: f.producer().add_loop_stage("l", (), flag="f", status="t", max_iters=2),
    TypeError, "body")
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
row("TrackProducer min_iters on demand",
    lambda f: tracks.TrackProducer(f.seed_state(), min_iters=4), tx.ArgumentError,
    "min_iters", gpu=True)
row("TrackProducer min_iters past max_iters",
    lambda f: tracks.TrackProducer(f.seed_state(), advance=True, lookahead=2,
                                   max_iters=8, min_iters=9), tx.ArgumentError,
    "min_iters", gpu=True)
row("TrackProducer min_iters -1",
    lambda f: tracks.TrackProducer(f.seed_state(), min_iters=-1), ValueError,
    "min_iters", gpu=True)
row("TrackProducer radius a str",
    lambda f: tracks.TrackProducer(f.seed_state(), radius="big"), TypeError, gpu=True)
row("write_svg points of the wrong size",
    lambda f: tracks.write_svg("/dev/null", b"\0" * 8, b"\1", 1, 4, 1.0), ValueError,
    "points")
# The writer draws closed tracks of 3 points at least; the points' size is
# checked without overflow (2**31 - 1 tracks of 2**31 - 1 points).
SVG_POINTS = b"\0" * 24  # one track of three points
for label, args, exc, word in (
        ("n_tracks 0", ("/dev/null", b"", b"", 0, 3, 1.0), ValueError, "n_tracks"),
        ("n_points 2", ("/dev/null", b"\0" * 16, b"\1", 1, 2, 1.0), ValueError, "n_points"),
        ("sizes past memory", ("/dev/null", b"\0" * 64, b"\1" * 4, 2 ** 31 - 1, 2 ** 31 - 1,
                               1.0), ValueError, "points"),
        ("path None", (None, SVG_POINTS, b"\1", 1, 3, 1.0), TypeError, "path"),
        ("points a str", ("/dev/null", "abc", b"\1", 1, 3, 1.0), TypeError, "points"),
        ("valid an int", ("/dev/null", SVG_POINTS, 1, 1, 3, 1.0), TypeError, "valid"),
        ("width a str", ("/dev/null", SVG_POINTS, b"\1", 1, 3, "1"), TypeError, "width"),
        ("width nan", ("/dev/null", SVG_POINTS, b"\1", 1, 3, float("nan")), ValueError,
         "width"),
        ("width 0", ("/dev/null", SVG_POINTS, b"\1", 1, 3, 0.0), ValueError, "width"),
        ("labels of ints", ("/dev/null", SVG_POINTS, b"\1", 1, 3, 1.0, [1]), TypeError,
         "labels[0]")):
    row("write_svg " + label, lambda f, a=args: tracks.write_svg(*a), exc, word)
for label, mode, exc in (("True", True, TypeError), ("2**31", 2 ** 31, ValueError),
                         ("1.0", 1.0, TypeError), ("None", None, TypeError),
                         ("'1'", "1", TypeError)):
    row("CaptureScope mode " + label, lambda f, m=mode: interop.CaptureScope(0, m), exc,
        "mode")
row("family_name a str", lambda f: tracks.family_name("polar"), TypeError, "family")


def torch_interop():
    from track_gen.interop import torch as interop_torch
    return interop_torch


class Table(hostile.Table):
    """One test per row (added below)."""


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


hostile.add_tests(Table, ROWS)


if __name__ == "__main__":
    sys.exit(tap.main())
