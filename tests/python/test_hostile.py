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
        #: Code run in a child interpreter instead of call (its last line
        #: raises the exception).
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
        OverflowError, "epochs[1]")
row("effective_seed float seed", lambda f: seeds.effective_seed(1.0, 0), TypeError,
    "seed")
row("effective_seed bool epoch", lambda f: seeds.effective_seed(1, True), TypeError,
    "epoch")
row("effective_seed str seed", lambda f: seeds.effective_seed("1", 0), TypeError,
    "seed")
row("SeedState n_envs 0", lambda f: seeds.SeedState(0), tx.ArgumentError, "n_envs")
row("SeedState n_envs -1", lambda f: seeds.SeedState(-1), ValueError, "n_envs")
row("SeedState n_envs 2**32", lambda f: seeds.SeedState(2 ** 32), ValueError, "n_envs")
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
for value in (0, -1, 2 ** 31, 2 ** 32 + 1):
    row("add_loop_stage max_iters %d" % value,
        lambda f, v=value: f.producer().add_loop_stage(
            "loop", lambda ctx: None, flag="go", status="status", max_iters=v),
        ValueError, "max_iters")
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
for label, value in (("0", 0), ("-1", -1), ("-2**64", -BIG)):
    row("declare_binding min_size " + label,
        lambda f, v=value: f.producer().declare_binding(0, "x", v), ValueError,
        "min_size")
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
row("run policy 7", lambda f: f.producer().run(None, 7), ValueError, "policy")
row("run policy -1", lambda f: f.producer().run(None, -1), ValueError, "policy")
row("run policy float", lambda f: f.producer().run(None, 1.0), TypeError, "policy")
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
row("release_wait timeout str", lambda f: tx.release_wait("1"), TypeError, "timeout")
row("retain graph -1", lambda f: _native.retain(-1, object()), ValueError, "graph")
row("retain graph 0", lambda f: _native.retain(0, object()), ValueError, "graph")
row("family_name 2**40", lambda f: tracks.family_name(2 ** 40), ValueError, "family")
row("write_svg n_tracks -1",
    lambda f: tracks.write_svg("/dev/null", b"", b"", -1, 4, 1.0), ValueError, "n_tracks")


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
        self.assertNotIsInstance(caught.exception, SystemError)
        for word in r.words:
            self.assertIn(word, str(caught.exception))

    def child(self, r):
        """Runs the row's code in a child interpreter: it must exit cleanly,
        having printed the exception's class and message."""
        code = textwrap.dedent(r.subprocess)
        child = subprocess.run([sys.executable, "-c", code], capture_output=True,
                               text=True, timeout=120)
        self.assertEqual(child.returncode, 0, child.stdout + child.stderr)
        self.assertIn(r.exc.__name__, child.stdout, child.stdout + child.stderr)
        for word in r.words:
            self.assertIn(word, child.stdout)


for i, r in enumerate(ROWS):
    name = "".join(c if c.isalnum() else "_" for c in r.name)
    setattr(Table, "test_%03d_%s" % (i, name), lambda self, r=r: self.row(r))


if __name__ == "__main__":
    sys.exit(tap.main())
