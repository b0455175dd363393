# SPDX-License-Identifier: Apache-2.0
"""Nothing is kept that should not be: every entry point that takes a callable
or an array, called 10,000 times, leaves the reference counts of the callable
and the array where they were (sys.getrefcount), the number of objects the
collector tracks where it was (gc.get_objects), and on the GPU torch's
allocated memory where it was.  Conditions, array parsing, stage
registration and refused calls run everywhere; calls that run need a GPU.

ctx.if_ and ctx.while_ leaked their tuple of bodies, with every closure in
it, at each call: Inside.test_if_ and Inside.test_while_ failed then."""
import gc
import sys
import unittest

import tap
import tgtest
from track_gen import _native
from track_gen import exec as tx
from track_gen import seeds

N_CALLS = 10000
# The collector's own bookkeeping may move by a few objects; a leak of one
# object a call moves by N_CALLS.
OBJECT_SLACK = 32


class FakeArray:
    """Device memory described by __cuda_array_interface__ alone (no memory
    behind it: only parsed here, never touched)."""

    def __init__(self, nbytes=16, typestr="<i4"):
        itemsize = int(typestr[2:])
        self.interface = {"data": (0x10000, False), "shape": (nbytes // itemsize,),
                          "typestr": typestr, "strides": None, "version": 3}

    @property
    def __cuda_array_interface__(self):
        return self.interface


class Steady(unittest.TestCase):
    def assertSteady(self, call, *watched, torch=None):
        """Calls call() N_CALLS times; the reference counts of *watched*, the
        tracked objects and torch's allocated memory end where they began."""
        def settle():
            # Host functions hold their callable until they ran on the
            # driver's thread: synchronize (which lets go of the GIL) first.
            if torch is not None:
                torch.cuda.synchronize()
            gc.collect()

        call()  # caches, interned names and the like, made once
        settle()
        refs = [sys.getrefcount(o) for o in watched]
        n_objects = len(gc.get_objects())
        memory = torch.cuda.memory_allocated() if torch is not None else 0
        for _ in range(N_CALLS):
            call()
        settle()
        self.assertEqual([sys.getrefcount(o) for o in watched], refs)
        self.assertLess(len(gc.get_objects()) - n_objects, OBJECT_SLACK)
        if torch is not None:
            self.assertEqual(torch.cuda.memory_allocated(), memory)

    def refused(self, exc_class, func, *args, **kwargs):
        """A call of func that must raise exc_class, as a callable."""
        def call():
            with self.assertRaises(exc_class):
                func(*args, **kwargs)
        return call


class HostSide(Steady):
    """What runs without a GPU."""

    def test_condition(self):
        flag = FakeArray()
        self.assertSteady(lambda: tx.conditional(flag), flag, flag.interface)

    def test_refused_condition(self):
        flag = FakeArray(typestr="<f4")
        self.assertSteady(self.refused(tx.ArgumentError, tx.conditional, flag), flag,
                          flag.interface)

    def test_array_info(self):
        array = FakeArray()
        self.assertSteady(lambda: _native.array_info(array), array, array.interface)

    def test_stages_registered_and_dropped(self):
        def stage(ctx):
            pass

        def case(ctx):
            pass

        def add_all():
            with tx.Producer("refs") as p:
                s = p.add_device_stage("device", stage, capture_safe=True)
                p.set_stage_condition(s, "flag")
                p.set_stage_else(s, case)
                p.add_host_stage("host", stage)
                p.add_loop_stage("loop", stage, flag="go", status="status",
                                 max_iters=3)
                p.add_switch_stage("switch", [case, case], index="index")

        self.assertSteady(add_all, stage, case)

    def test_refused_stage(self):
        def stage(ctx):
            pass

        p = tx.Producer("refused-stage")
        p.add_device_stage("twice", stage)
        self.assertSteady(self.refused(ValueError, p.add_device_stage, "twice", stage),
                          stage)
        p.close()


    def test_refused_and_declared_arrays(self):
        array, like, bad = FakeArray(), FakeArray(), FakeArray()
        bad.interface["shape"] = (0,)
        p = tx.Producer("arrays")
        p.add_device_stage("s", lambda ctx: None)
        p.declare_binding(0, "buf", 4)
        # A made-up address: refused by CUDA's pointer check, or without a GPU
        # by CUDA itself; either way after the array was read.
        self.assertSteady(self.refused(tx.TrackGenError, p.bind, "buf", array), array,
                          array.interface)
        self.assertSteady(lambda: p.declare_binding(0, "x", like=like), like,
                          like.interface)
        self.assertSteady(self.refused(tx.ArgumentError, p.run, None, tx.Policy.AUTO,
                                       bad), bad, bad.interface)
        # An array where a stream is meant, refused after its protocols were
        # looked for.
        self.assertSteady(self.refused(TypeError, p.run, array), array, array.interface)
        p.close()

    def test_stream_objects(self):
        """A stream given as an object (the CUDA stream protocol, or torch's
        .cuda_stream) is read and let go, taken or refused."""
        class Protocol:
            def __cuda_stream__(self):
                return (0, 0x7f0012345678)

        class TorchLike:
            cuda_stream = 0x7f0012345678

        class Broken:
            def __cuda_stream__(self):
                return (0, "not a handle")

        for stream in (Protocol(), TorchLike()):
            self.assertSteady(lambda s=stream: _native._stream_handle(s), stream)
        broken = Broken()
        self.assertSteady(self.refused(TypeError, _native._stream_handle, broken), broken)

    def test_refused_svg(self):
        from track_gen import tracks
        points, valid, label = b"\0" * 24, b"\1", "a track"
        labels = [label, 7]  # the second refused, after the first was read
        self.assertSteady(self.refused(TypeError, tracks.write_svg, "/dev/null", points,
                                       valid, 1, 3, 1.0, labels), points, valid, labels,
                          label)
        self.assertSteady(self.refused(ValueError, tracks.write_svg, "/dev/null", points,
                                       valid, 2, 3, 1.0), points, valid)


class Inside(Steady):
    """A stage's bodies and host operations, each called N_CALLS times inside
    one EAGER call."""

    def setUp(self):
        self.torch = tgtest.require_gpu()
        self.leaks = tgtest.LeakCheck(self)

    def tearDown(self):
        self.leaks.check()

    def in_stage(self, body, *watched, host=False):
        """Runs a producer whose one stage calls body(ctx) N_CALLS times and
        checks that the counts of *watched* and torch's memory are steady."""
        torch = self.torch
        p = tx.Producer("inside")

        def stage(ctx):
            self.assertSteady(lambda: body(ctx), *watched, torch=torch)

        if host:
            p.add_host_stage("host", stage)
        else:
            p.add_device_stage("device", stage)
        p.run(torch.cuda.current_stream(), tx.Policy.EAGER)
        p.close()

    def test_if_(self):
        torch = self.torch
        flag = torch.ones(1, dtype=torch.int32, device="cuda")
        cond = tx.conditional(flag)

        def then(ctx):
            pass

        def otherwise(ctx):
            pass

        self.in_stage(lambda ctx: ctx.if_(cond, then), then, cond, flag)
        self.in_stage(lambda ctx: ctx.if_(flag, then, otherwise), then, otherwise, flag)

    def test_while_(self):
        torch = self.torch
        flag = torch.ones(1, dtype=torch.int32, device="cuda")
        status = torch.zeros(2, dtype=torch.int32, device="cuda")

        def body(ctx):
            pass

        self.in_stage(lambda ctx: ctx.while_(flag, 1, status, body), body, flag, status)

    def test_switch(self):
        torch = self.torch
        index = torch.ones(1, dtype=torch.int32, device="cuda")

        def case(ctx):
            pass

        cases = [case, case]
        self.in_stage(lambda ctx: ctx.switch(index, cases), case, cases, index)

    def test_keep(self):
        kept = object()

        def keep_all(ctx):
            for _ in range(N_CALLS):
                ctx.keep(kept)

        p = tx.Producer("keep")
        p.add_device_stage("keep", keep_all)
        before = sys.getrefcount(kept)
        p.run(self.torch.cuda.current_stream(), tx.Policy.EAGER)
        gc.collect()
        self.assertEqual(sys.getrefcount(kept), before)  # EAGER: until the call returns
        p.close()

    def test_host_operations(self):
        torch = self.torch
        device = torch.zeros(4, dtype=torch.int32, device="cuda")
        host = bytearray(16)
        data = bytes(16)

        def func():
            pass

        self.in_stage(lambda ops: ops.copy_to_host(host, device), host, device, host=True)
        self.in_stage(lambda ops: ops.copy_to_device(device, data), data, device,
                      host=True)
        self.in_stage(lambda ops: ops.enqueue(func), func, host=True)


class Calls(Steady):
    """Producer and SeedState calls taking arrays, N_CALLS each."""

    def setUp(self):
        self.torch = tgtest.require_gpu()
        self.leaks = tgtest.LeakCheck(self)

    def tearDown(self):
        self.leaks.check()

    def test_run_with_a_condition_and_bind(self):
        torch = self.torch
        flag = torch.ones(1, dtype=torch.int32, device="cuda")
        buf = torch.zeros(4, dtype=torch.int32, device="cuda")
        stream = torch.cuda.current_stream()

        def stage(ctx):
            ctx.binding("buf").add_(1)

        p = tx.Producer("calls")
        s = p.add_device_stage("add", stage)
        p.declare_binding(s, "buf", 16)
        p.bind("buf", buf)
        self.assertSteady(lambda: p.run(stream, tx.Policy.EAGER, flag), stage, flag,
                          buf, stream, torch=torch)
        self.assertSteady(lambda: p.bind("buf", buf), buf, torch=torch)
        p.close()

    def test_seed_state(self):
        torch = self.torch
        mask = torch.ones(64, dtype=torch.uint8, device="cuda")
        out = torch.zeros(64, dtype=torch.int64, device="cuda")
        with seeds.SeedState(64, 7) as state:
            self.assertSteady(lambda: state.advance(mask=mask), mask, torch=torch)
            self.assertSteady(lambda: state.fill_effective(out), out, torch=torch)


if __name__ == "__main__":
    sys.exit(tap.main())
