# SPDX-License-Identifier: Apache-2.0
"""Lifetimes and re-entrancy, a table (hostile.py says how a row runs): what
a stage receives (LaunchContext, HostOps) used after the stage returned or
given wrong arguments inside it, a stage that re-runs, rebinds, closes or
releases its own producer, objects released during a torch capture, and
objects used after close(), each end in the documented exception class,
never a crash: the rows that could crash run in a child interpreter.
"""
import sys
import threading

import hostile
import tap
from track_gen import exec as tx

ROWS = hostile.Rows()
row = ROWS.add


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


def from_another_thread(ctx):
    """Uses *ctx* from a thread of its own while the stage waits: what that
    raised, re-raised."""
    caught = []

    def use():
        try:
            ctx.stream
        except BaseException as e:
            caught.append(e)
    t = threading.Thread(target=use)
    t.start()
    t.join()
    if caught:
        raise caught[0]


row("LaunchContext used from another thread", lambda f: ran(f, from_another_thread),
    tx.StateError, "another thread", gpu=True)
row("HostOps used from another thread",
    lambda f: ran(f, from_another_thread, host=True), tx.StateError, "another thread",
    gpu=True)
row("HostOps.copy_to_host to address 0",
    lambda f: ran(f, lambda ops: ops.copy_to_host(0, f.tensor(4), 16), host=True),
    ValueError, "dst", "NULL", gpu=True)
row("HostOps.copy_to_device from address 0",
    lambda f: ran(f, lambda ops: ops.copy_to_device(f.tensor(4), 0, 16), host=True),
    ValueError, "src", "NULL", gpu=True)
# Sizes past either end, and a read-only destination, are refused before
# any copy (a copy past a tensor wrote past its allocation).
row("HostOps.copy_to_device past the device array",
    lambda f: ran(f, lambda ops: ops.copy_to_device(f.tensor(1), bytearray(1 << 20)),
                  host=True), ValueError, "size", "destination", gpu=True)
row("HostOps.copy_to_host past the device array",
    lambda f: ran(f, lambda ops: ops.copy_to_host(bytearray(64), f.tensor(1)), host=True),
    ValueError, "size", "source", gpu=True)
row("HostOps.copy_to_host into a read-only array",
    lambda f: ran(f, lambda ops: ops.copy_to_host(
        __import__("numpy").frombuffer(b"\0" * 16, "uint8"), f.tensor(4), 16), host=True),
    ValueError, "dst", "read-only", gpu=True)
row("SeedState.fill_effective out_len past the array",
    lambda f: f.seed_state().fill_effective(f.tensor(1, "int64"), None, 4), ValueError,
    "out", "holds 1", gpu=True)
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


# -- closed objects --------------------------------------------------------------
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


def closed(obj):
    obj.close()
    return obj


# -- closed by its own arguments -------------------------------------------------
# An argument's conversion (__index__, __cuda_stream__, an array's interface,
# a sequence's __iter__) runs the caller's code, which closes the object the
# call is on: the call then raises ValueError, before anything is done.
CLOSING = """
from track_gen import exec as tx
from track_gen import seeds, tracks

class Index:
    def __init__(self, obj, value):
        self.obj, self.value = obj, value
    def __index__(self):
        self.obj.close()
        return self.value

class Stream:
    def __init__(self, obj):
        self.obj = obj
    def __cuda_stream__(self):
        self.obj.close()
        return (0, 0)

class Array:
    def __init__(self, obj):
        self.obj = obj
    @property
    def __cuda_array_interface__(self):
        self.obj.close()
        return {"version": 3, "data": (0x10000, False), "shape": (4,), "typestr": "<i4"}

class Cases:
    def __init__(self, obj):
        self.obj = obj
    def __iter__(self):
        self.obj.close()
        return iter([print, print])

p = tx.Producer("closing")
p.add_device_stage("stage", print)
p.set_stage_condition(0, "flag")
try:
    %s
except ValueError as e:
    print("%%s: %%s" %% (type(e).__name__, e))
"""
for label, call in (
        ("_add_stage(flags=)", "p._add_stage('s', print, Index(p, 0))"),
        ("add_loop_stage(max_iters=)",
         "p.add_loop_stage('l', print, flag='f', status='t', max_iters=Index(p, 3))"),
        ("_add_switch_stage(cases=)", "p._add_switch_stage('w', Cases(p), 'i')"),
        ("declare_binding(stage=)", "p.declare_binding(Index(p, 0), 'x', 4)"),
        ("declare_binding(min_size=)", "p.declare_binding(0, 'x', Index(p, 4))"),
        ("set_stage_condition(stage=)", "p.set_stage_condition(Index(p, 0), 'g')"),
        ("set_stage_else(stage=)", "p.set_stage_else(Index(p, 0), print)"),
        ("bind(size=)", "p.bind('buf', 0x10000, Index(p, 16))"),
        ("bind(array=)", "p.bind('buf', Array(p))"),
        ("run(policy=)", "p.run(None, Index(p, 0))"),
        ("resolve(stream=)", "p.resolve(Stream(p))"),
        ("set_stream(stream=)", "p.set_stream(Stream(p))")):
    row("closed by its own argument: Producer." + label, None, ValueError, "closed",
        subprocess=CLOSING % call)
for label, call in (
        ("advance(mask=)", "state.advance(mask=Array(state))"),
        ("read(stream=)", "state.read(Stream(state))"),
        ("write(epochs=)", "state.write(seeds=[1] * 4, epochs=[Index(state, 1)] * 4)"),
        ("fill_effective(out_len=)", "state.fill_effective(0x10000, None, Index(state, 4))"),
        ("TrackProducer(n_points=)", "tracks.TrackProducer(state, n_points=Index(state, 24))")):
    row("closed by its own argument: " + label, None, ValueError, "closed", gpu=True,
        subprocess=CLOSING.replace("try:", "state = seeds.SeedState(4, 1)\ntry:") % call)


class Table(hostile.Table):
    """One test per row (added below)."""


hostile.add_tests(Table, ROWS)


if __name__ == "__main__":
    sys.exit(tap.main())
