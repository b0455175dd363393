# SPDX-License-Identifier: Apache-2.0
"""track_gen.interop.warp: Warp kernels as stages.  Import hygiene, the
stream-wrapper cache and the refusals made before any CUDA call run
wherever warp is installed (test_warp_flow.py adds what the helpers ask of
Warp under each capture state); the rows of issue 26's list run on a GPU
with torch and warp, each checking results bit-identical across EAGER,
REPLAY, RECORD into torch.cuda.graph and RECORD into a Warp capture."""
import faulthandler
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest

import tap
import tgtest
from test_warp_flow import FakeContext, warp_or_skip
from track_gen import exec as tx

try:
    import warp as wp
except ImportError:
    wp = None

N = 1 << 16
TIMEOUT = 300  # seconds, for each subprocess


class Imports(unittest.TestCase):
    def test_track_gen_imports_neither_torch_nor_warp(self):
        script = """if True:
            import sys
            import track_gen
            from track_gen import exec, seeds, interop
            assert "torch" not in sys.modules and "warp" not in sys.modules, \\
                [m for m in ("torch", "warp") if m in sys.modules]
        """
        run = subprocess.run([sys.executable, "-c", script], capture_output=True,
                             text=True, timeout=TIMEOUT)
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_interop_warp_imports_warp_alone(self):
        warp_or_skip()
        script = """if True:
            import sys
            import track_gen.interop.warp
            assert "warp" in sys.modules
            assert "torch" not in sys.modules
        """
        run = subprocess.run([sys.executable, "-c", script], capture_output=True,
                             text=True, timeout=TIMEOUT)
        self.assertEqual(run.returncode, 0, run.stderr)


class HostSide(unittest.TestCase):
    def setUp(self):
        self.twarp = warp_or_skip()

    def test_one_wrapper_per_stream_made_once(self):
        twarp = self.twarp
        made = []

        class FakeDevice:
            null_stream = object()
            stream = type("S", (), {"cuda_stream": 0x42})()
            captures = {}  # wp.Stream -> Graph of the captures Warp knows

        class FakeStream:
            def __init__(self, device, cuda_stream):
                made.append(cuda_stream)
                self.device, self.cuda_stream = device, cuda_stream

        saved = twarp._device, twarp.wp.Stream
        twarp._device, twarp.wp.Stream = (lambda ordinal: FakeDevice), FakeStream
        try:
            barrier = threading.Barrier(8)
            got = []

            def wrap():
                barrier.wait()
                got.append(twarp.stream_of(0x9000, 3))

            threads = [threading.Thread(target=wrap) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(10)
            self.assertEqual(made, [0x9000])  # made once, under contention
            self.assertTrue(all(ws is got[0] for ws in got))
            ctx = FakeContext()
            ctx.device, ctx.stream = 3, 0x9000
            self.assertIs(twarp.stream_of(ctx), got[0])
            # The legacy stream and Warp's own stream: Warp's wrappers.
            self.assertIs(twarp.stream_of(0, 3), FakeDevice.null_stream)
            self.assertIs(twarp.stream_of(0x42, 3), FakeDevice.stream)
            self.assertEqual(made, [0x9000])
            # A capture Warp knows on a handle: the wrapper it was registered
            # on, which Warp looks captures up by; not kept afterwards.
            users = type("S", (), {"cuda_stream": 0x9000})()
            FakeDevice.captures[users] = object()
            self.assertIs(twarp.stream_of(0x9000, 3), users)
            FakeDevice.captures.clear()
            self.assertIs(twarp.stream_of(0x9000, 3), got[0])
            self.assertEqual(made, [0x9000])
        finally:
            twarp._device, twarp.wp.Stream = saved
            for key in [(3, 0x9000), (3, 0), (3, 0x42)]:
                twarp._streams.pop(key, None)

    def test_capture_on_an_unprepared_device_is_refused(self):
        ctx = FakeContext()
        ctx.device = 99
        with self.assertRaises(tx.StateError) as raised:
            with self.twarp.scope(ctx):
                self.fail("ran")
        self.assertEqual(raised.exception.stage, "relax")
        self.assertIn("prepare(99)", str(raised.exception))

    def test_body_allocation_is_refused_naming_the_stage(self):
        allocator = self.twarp._BodyAllocator(FakeContext(), None)
        with self.assertRaises(tx.NotCapturableError) as raised:
            allocator.allocate(64)
        e = raised.exception
        self.assertEqual((e.stage, e.producer), ("relax", "track"))
        self.assertEqual(e.code, tx.CaptureErrorCode.NOT_CAPTURABLE)
        self.assertIn("scratch", str(e))

    def test_warp_dtype_checked_by_bind(self):
        # What a wp.array of vec3 shows (Warp's typestr, the vector flattened
        # into the shape) against a binding declared by shape and dtype: the
        # dtype is refused before any CUDA call.
        from warp._src.types import type_typestr  # what wp.array's interface uses

        class Interface:
            def __init__(self, dtype):
                self.__cuda_array_interface__ = {
                    "data": (1 << 40, False), "shape": (4, 3), "strides": (12, 4),
                    "typestr": type_typestr(dtype), "version": 2}

        p = tx.Producer("vec3")
        s = p.add_device_stage("use", lambda ctx: None)
        p.declare_binding(s, "x", shape=(4, 3), dtype="float32")
        with self.assertRaises(tx.ArgumentError) as raised:
            p.bind("x", Interface(wp.vec3i))
        self.assertIn("int32", str(raised.exception))
        p.close()

    def test_stage_decorator_keeps_the_function(self):
        def relax(ctx):
            """Relaxes."""

        wrapped = self.twarp.stage(device=None)(relax)
        self.assertEqual((wrapped.__name__, wrapped.__doc__), ("relax", "Relaxes."))


# -- on the GPU ---------------------------------------------------------------

if wp is not None:
    @wp.kernel
    def seed_kernel(a: wp.array(dtype=wp.uint32), param: wp.array(dtype=wp.uint32)):
        i = wp.tid()
        a[i] = wp.uint32(i) * wp.uint32(747796405) + param[0]

    @wp.kernel
    def mix_kernel(src: wp.array(dtype=wp.uint32), dst: wp.array(dtype=wp.uint32)):
        i = wp.tid()
        x = src[i]
        dst[i] = (x * wp.uint32(40503)) ^ (x >> wp.uint32(7))

    @wp.kernel
    def bump_kernel(a: wp.array(dtype=wp.uint32), go: wp.array(dtype=wp.int32),
                    limit: wp.array(dtype=wp.uint32), iters: wp.array(dtype=wp.int32)):
        # One relaxation step: every a[i] + 1; stop once a[0] + 1 reaches
        # limit, or after 16 steps whatever a holds (no test may hang).
        i = wp.tid()
        a[i] = a[i] + wp.uint32(1)
        if i == 0:
            iters[0] = iters[0] + 1
            if a[0] + wp.uint32(1) >= limit[0] or iters[0] >= 16:
                go[0] = 0


_user_stream = []


def user_stream():
    """A Warp stream of the test's own, kept for the process: a stream CUDA
    destroyed may hand its handle to another, which Warp's view of the
    first (kept by the package) would then name."""
    if not _user_stream:
        _user_stream.append(wp.Stream("cuda:0"))
    return _user_stream[0]


def seeded(param, n=N):
    """seed_kernel's output, on the host."""
    import numpy as np
    return np.arange(n, dtype=np.uint32) * np.uint32(747796405) + np.uint32(param)


def mixed(a):
    """mix_kernel's output, on the host."""
    import numpy as np
    return (a * np.uint32(40503)) ^ (a >> np.uint32(7))


def expected(param, n=N):
    return mixed(seeded(param, n))


class WarpCase(tgtest.GpuCase):
    """torch, a GPU and warp; Warp set up on device 0 before any capture;
    param (one uint32) and out (N uint32) as wp.arrays."""

    def setUp(self):
        super().setUp()
        self.twarp = warp_or_skip()
        self.twarp.prepare(0)
        self.param = wp.zeros(1, dtype=wp.uint32, device="cuda:0")
        self.out = wp.zeros(N, dtype=wp.uint32, device="cuda:0")

    def tearDown(self):
        wp.synchronize()
        super().tearDown()

    def producer(self, name, func):
        """A producer of one capture-safe stage *func*, named *name*, with the
        bindings param and out."""
        p = tx.Producer(name)
        s = p.add_device_stage(name, func, capture_safe=True)
        p.declare_binding(s, "param", 4, dtype="uint32")
        p.declare_binding(s, "out", 4 * N, dtype="uint32")
        p.bind("param", self.param)
        p.bind("out", self.out)
        return p

    def set_param(self, value):
        self.param.fill_(value)
        wp.synchronize()  # Warp's stream is not ordered with a user's

    def result(self):
        wp.synchronize()
        return self.out.numpy()

    def check_everywhere(self, p, want=expected, params=(3, 11), relaxed=False, arm=None,
                         condition=None):
        """Runs *p* (under *condition*, when given) under EAGER, REPLAY, RECORD
        into torch.cuda.graph and RECORD into a Warp capture, each with each
        of *params* (*arm*, when given, sets further inputs for a param),
        checking that the output is ``want(param)`` bit for bit; closes *p*."""
        import numpy as np
        torch = self.torch

        def runs(label, run):
            for param in params:
                with self.subTest(policy=label, param=param):
                    self.set_param(param)
                    if arm is not None:
                        arm(param)
                    run()
                    np.testing.assert_array_equal(self.result(), want(param))

        stream = torch.cuda.current_stream()
        runs("EAGER", lambda: p.run(stream, tx.Policy.EAGER, condition))
        runs("REPLAY", lambda: p.run(stream, tx.Policy.REPLAY, condition))
        g = torch.cuda.CUDAGraph()
        with self.interop.graph(g, capture_error_mode="relaxed" if relaxed else "global"):
            p.run(condition=condition)
        runs("RECORD into torch.cuda.graph", g.replay)
        del g
        ws = user_stream()
        with wp.ScopedStream(ws), wp.ScopedCapture(stream=ws) as capture:
            p.run(ws.cuda_stream, tx.Policy.RECORD, condition)
        runs("RECORD into a Warp capture",
             lambda: wp.capture_launch(capture.graph, stream=ws))
        del capture
        p.close()


class Rows(WarpCase):
    """Issue 26's list, each case through the package's helper."""

    def test_plain_stage(self):
        twarp = self.twarp

        @twarp.stage
        def gen(ctx):
            ws = twarp.stream_of(ctx)
            a = twarp.array(ctx, "out", wp.uint32)
            wp.launch(seed_kernel, N, inputs=[a, ctx.binding("param")], stream=ws)
            wp.launch(mix_kernel, N, inputs=[a, a], stream=ws)

        self.check_everywhere(self.producer("plain", gen))

    def test_launch_without_stream(self):
        # Without stream= Warp launches on its current stream: the stage's.
        @self.twarp.stage
        def gen(ctx):
            a = ctx.binding("out")
            wp.launch(seed_kernel, N, inputs=[a, ctx.binding("param")])
            wp.launch(mix_kernel, N, inputs=[a, a])

        self.check_everywhere(self.producer("nostream", gen))

    def test_temporaries_dropped_in_the_stage(self):
        @self.twarp.stage
        def gen(ctx):
            t = wp.empty(N, dtype=wp.uint32)
            wp.launch(seed_kernel, N, inputs=[t, ctx.binding("param")])
            z = wp.zeros(N, dtype=wp.uint32)
            wp.launch(mix_kernel, N, inputs=[t, z])
            wp.copy(ctx.binding("out"), z)
            del t, z  # freed inside the capture: free nodes, no legacy stream

        self.check_everywhere(self.producer("temps", gen))
        self.check_everywhere(self.producer("temps-relaxed", gen), relaxed=True)

    def test_scoped_stream_with_its_default_sync(self):
        # A Warp user's habit, ScopedStream(stream) with sync_enter=True,
        # inside the helper, where that stream is already Warp's current one.
        twarp = self.twarp

        def gen(ctx):
            with twarp.scope(ctx), wp.ScopedStream(twarp.stream_of(ctx)):
                a = ctx.binding("out")
                wp.launch(seed_kernel, N, inputs=[a, ctx.binding("param")])
                wp.launch(mix_kernel, N, inputs=[a, a])

        self.check_everywhere(self.producer("scoped", gen))

    def test_warp_frees_again_after_torch_captures(self):
        # torch's capture registered with Warp, a stage making 64 MB
        # temporaries, 8 captures: Warp knows no capture afterwards, and its
        # eager frees work again (a registration left behind defers them for
        # good, +512 MB over 8 x 64 MB).
        import numpy as np
        torch = self.torch
        big = (64 << 20) // 4
        dev = wp.get_device("cuda:0")

        @self.twarp.stage
        def gen(ctx):
            t = wp.zeros(big, dtype=wp.uint32)
            a = ctx.binding("out")
            wp.launch(seed_kernel, N, inputs=[a, ctx.binding("param")])
            wp.launch(mix_kernel, N, inputs=[a, t])
            wp.copy(a, t, count=N)

        p = self.producer("big", gen)
        wp.synchronize()
        before = wp.get_mempool_used_mem_current(dev)
        for _ in range(8):
            g = torch.cuda.CUDAGraph()
            with self.interop.graph(g):
                self.assertTrue(dev.captures)  # torch's, registered with Warp
                p.run()
            self.assertFalse(dev.captures)
            self.set_param(5)
            g.replay()
            np.testing.assert_array_equal(self.result(), expected(5))
            del g
            t = wp.zeros(big, dtype=wp.uint32, device=dev)
            del t
        wp.synchronize()
        self.assertLess(wp.get_mempool_used_mem_current(dev) - before, 2 * (64 << 20))
        p.close()

    def test_warp_work_in_a_registered_torch_capture(self):
        # Warp work outside any stage, without stream=, inside
        # interop.torch.graph(): Warp's current stream is torch's capturing one.
        import numpy as np
        g = self.torch.cuda.CUDAGraph()
        with self.interop.graph(g):
            wp.launch(seed_kernel, N, inputs=[self.out, self.param])
            wp.launch(mix_kernel, N, inputs=[self.out, self.out])
        for param in (2, 9):
            self.set_param(param)
            g.replay()
            np.testing.assert_array_equal(self.result(), expected(param))
        del g

    def retained_after_a_warp_if(self, name, capture, user_object):
        """Records a producer of one Warp stage (seeds, mixed) after a
        wp.capture_if, with *capture(p, warp_if)*, which returns the graph's
        replay; then checks that the graph alone keeps the producer,
        replays right, and lets it go with it.  *user_object*: the graph
        holds it by a CUDA user object, which counts as outstanding for
        release_wait() while the graph lives (its docstring), not by its
        owner's hold."""
        import gc
        import numpy as np
        flag = wp.zeros(1, dtype=wp.int32, device="cuda:0")

        @self.twarp.stage
        def gen(ctx):
            a = ctx.binding("out")
            wp.launch(seed_kernel, N, inputs=[a, ctx.binding("param")])
            wp.launch(mix_kernel, N, inputs=[a, a])

        def warp_if():
            wp.capture_if(flag, on_true=lambda: wp.launch(mix_kernel, N,
                                                            inputs=[self.out, self.out]))

        p = self.producer(name, gen)
        before = tx.live_objects()
        replay = capture(p, warp_if)
        self.assertEqual(tx.live_objects().user_objects,
                         before.user_objects + (1 if user_object else 0))
        del p
        gc.collect()
        # Anything wrongly queued runs meanwhile; a live user object is
        # outstanding, so the wait then lasts its whole timeout.
        self.assertEqual(tx.release_wait(2.0 if user_object else 10.0), not user_object)
        self.assertEqual(tx.live_objects().producers, before.producers)  # the graph's
        self.set_param(7)
        replay()
        np.testing.assert_array_equal(self.result(), expected(7))
        del replay
        gc.collect()
        self.assertTrue(tx.release_wait(10.0))
        self.assertEqual(tx.live_objects().producers, before.producers - 1)

    def test_recorded_after_a_warp_conditional_is_retained(self):
        # wp.capture_if pauses torch's capture and resumes it under a new
        # capture id: a producer recorded after it is still retained by the
        # torch graph's own hold (no user object), not lost.
        torch = self.torch

        def capture(p, warp_if):
            g = torch.cuda.CUDAGraph()
            with self.interop.graph(g):
                warp_if()
                p.run()
            return g.replay

        self.retained_after_a_warp_if("after-if", capture, user_object=False)

    def test_scope_in_a_warp_capture_after_a_warp_conditional(self):
        # The same in a wp.ScopedCapture registered with a CaptureScope: the
        # producer, recorded after a wp.capture_if that resumed the capture
        # under a new id, is the scope's and retained by the Warp graph
        # (doc/simulators.md; the order its snippet does not show).
        from track_gen.interop import CaptureMode, CaptureScope
        ws = user_stream()

        def capture(p, warp_if):
            with wp.ScopedStream(ws), wp.ScopedCapture(stream=ws) as cap:
                scope = CaptureScope(ws.cuda_stream, CaptureMode.THREAD_LOCAL)
                try:
                    warp_if()
                    p.run()                 # names no stream: the scope's capture
                finally:
                    scope.end()
            return lambda: wp.capture_launch(cap.graph, stream=ws)

        self.retained_after_a_warp_if("scope-after-if", capture, user_object=True)

    def warp_conditionals(self):
        """A stage whose Warp work holds a wp.capture_if and a wp.capture_while
        (seeds, mixed for an odd param, then three bumps), and its arm and
        want for check_everywhere."""
        import numpy as np
        flag = wp.zeros(1, dtype=wp.int32, device="cuda:0")
        go = wp.zeros(1, dtype=wp.int32, device="cuda:0")
        limit = wp.zeros(1, dtype=wp.uint32, device="cuda:0")
        iters = wp.zeros(1, dtype=wp.int32, device="cuda:0")

        @self.twarp.stage
        def gen(ctx):
            a = ctx.binding("out")
            wp.launch(seed_kernel, N, inputs=[a, ctx.binding("param")])
            wp.capture_if(flag, on_true=lambda: wp.launch(mix_kernel, N, inputs=[a, a]))
            wp.capture_while(go, lambda: wp.launch(bump_kernel, N,
                                                   inputs=[a, go, limit, iters]))

        def first(param):
            # a[0] before the loop: the seed of env 0, mixed when the flag is set
            a0 = seeded(param, 1)
            return mixed(a0) if param % 2 else a0

        def arm(param):
            flag.fill_(param % 2)
            go.fill_(1)
            iters.zero_()
            limit.fill_(int(first(param)[0]) + 4)  # three bumps
            wp.synchronize()

        def want(param):
            a = seeded(param)
            return (mixed(a) if param % 2 else a) + np.uint32(3)

        return gen, arm, want

    def test_capture_if_and_capture_while_in_a_stage(self):
        gen, arm, want = self.warp_conditionals()
        self.check_everywhere(self.producer("cond", gen), want, params=(3, 4, 11),
                              arm=arm)

    def test_warp_conditionals_inside_trackgen_conditions(self):
        # Issue 35 §5: that stage under a call's condition, as an else
        # branch, a switch case and a loop body: RECORD was refused ("the
        # second pass of RECORD met more stage functions than the trial
        # did"); now every policy gives the same bits, whether the
        # condition runs the stage or skips it.
        import numpy as np
        gen, arm_gen, want = self.warp_conditionals()
        on = wp.zeros(1, dtype=wp.int32, device="cuda:0")
        loop_go = wp.zeros(1, dtype=wp.int32, device="cuda:0")
        status = wp.zeros(2, dtype=wp.int32, device="cuda:0")

        @self.twarp.stage
        def body(ctx):
            gen(ctx)
            loop_go.zero_()

        def shaped(shape):
            p = tx.Producer("warp-" + shape)
            if shape == "else":
                s = p.add_device_stage("then", lambda ctx: None, capture_safe=True)
                p.set_stage_condition(s, "on")
                p.set_stage_else(s, gen)
            elif shape == "switch":
                s = p.add_switch_stage("pick", [lambda ctx: None, gen], index="on",
                                       capture_safe=True)
            elif shape == "loop":
                s = p.add_loop_stage("loop", body, flag="go", status="status",
                                     max_iters=2, capture_safe=True)
            else:
                s = p.add_device_stage("gen", gen, capture_safe=True)
            p.declare_binding(s, "param", 4, dtype="uint32")
            p.declare_binding(s, "out", 4 * N, dtype="uint32")
            for name, array in (("param", self.param), ("out", self.out), ("on", on),
                                ("go", loop_go), ("status", status)):
                p.bind(name, array)
            return p

        # What decides in each shape, the value that runs gen and the one
        # that skips it; out holds `skipped` where gen did not run.
        shapes = {"call-condition": (on, 1, 0), "else": (on, 0, 1), "switch": (on, 1, 0),
                  "loop": (loop_go, 1, 0)}
        skipped = 0x5EED5EED
        for shape, (decider, runs, skips) in shapes.items():
            for gen_runs in (True, False):
                def arm(param, decider=decider, value=runs if gen_runs else skips):
                    decider.fill_(value)
                    self.out.fill_(skipped)
                    arm_gen(param)  # then waits for the device

                with self.subTest(shape=shape, gen_runs=gen_runs):
                    self.check_everywhere(
                        shaped(shape),
                        want if gen_runs else lambda param: np.full(N, skipped, np.uint32),
                        params=(3, 4), arm=arm,
                        condition=tx.conditional(on) if shape == "call-condition" else None)

    def test_warp_graph_joins_as_a_child_node(self):
        twarp = self.twarp
        with wp.ScopedCapture(device="cuda:0") as capture:
            wp.launch(seed_kernel, N, inputs=[self.out, self.param])
            wp.launch(mix_kernel, N, inputs=[self.out, self.out])
        sub = capture.graph

        @twarp.stage
        def gen(ctx):
            twarp.launch_graph(ctx, sub)

        self.check_everywhere(self.producer("child", gen))

    def test_child_graph_with_an_allocation_is_refused(self):
        twarp = self.twarp
        with wp.ScopedCapture(device="cuda:0") as capture:
            t = wp.zeros(N, dtype=wp.uint32)
            wp.launch(seed_kernel, N, inputs=[t, self.param])
            wp.copy(self.out, t)
            del t
        sub = capture.graph

        @twarp.stage
        def gen(ctx):
            twarp.launch_graph(ctx, sub)

        p = self.producer("child-alloc", gen)
        stream = self.torch.cuda.current_stream()
        with self.assertRaises(tx.NotCapturableError) as raised:
            p.run(stream, tx.Policy.REPLAY)
        self.assertEqual(raised.exception.stage, "child-alloc")
        self.set_param(7)
        p.run(stream, tx.Policy.EAGER)  # launched as a graph: fine
        import numpy as np
        np.testing.assert_array_equal(self.result(), seeded(7))
        p.close()

    def test_temporary_in_a_body_is_refused_scratch_is_not(self):
        torch = self.torch
        twarp = self.twarp
        flag = torch.ones(1, dtype=torch.int32, device="cuda")

        @twarp.stage
        def allocates(ctx):
            t = wp.empty(N, dtype=wp.uint32)
            wp.launch(seed_kernel, N, inputs=[t, ctx.binding("param")])

        @twarp.stage
        def scratches(ctx):
            t = twarp.scratch(ctx, N, wp.uint32)
            wp.launch(seed_kernel, N, inputs=[t, ctx.binding("param")])
            wp.launch(mix_kernel, N, inputs=[t, ctx.binding("out")])

        def under_flag(body):
            return lambda ctx: ctx.if_(tx.conditional(flag), body)

        stream = torch.cuda.current_stream()
        bad = self.producer("in-body", under_flag(allocates))
        with self.assertRaises(tx.NotCapturableError) as raised:
            bad.run(stream, tx.Policy.REPLAY)
        self.assertEqual(raised.exception.stage, "in-body")
        self.assertIn("scratch", str(raised.exception))
        g = torch.cuda.CUDAGraph()
        with self.assertRaises(tx.NotCapturableError):
            with self.interop.graph(g):
                bad.run()
        del g
        bad.run(stream, tx.Policy.EAGER)  # eagerly a body may allocate
        bad.close()
        self.check_everywhere(self.producer("scratch", under_flag(scratches)))


class Threads(WarpCase):
    """Warp's current stream is one per device, shared by threads: two
    threads each running their own producer of Warp stages (launches
    without stream=) get their own results, under REPLAY and RECORD into
    their own thread-local torch captures (issue 35 §2: they replayed
    zeros).

    Each thread's own work outside the stages is torch's, on its stream:
    Warp's would not be the thread's.  A Warp memset or copy goes to the
    device's current stream, the other thread's capture while its stage
    runs; ``wp.array.numpy()`` sets that stream to the legacy one for the
    copy; ``wp.synchronize_device()`` raises while any thread's capture is
    registered with Warp on the device."""

    ROUNDS = 30

    def test_two_threads_each_their_own_results(self):
        import time

        import numpy as np
        torch, twarp = self.torch, self.twarp
        # The threads' stages run at the same moments: each captures after
        # the barrier and sleeps between its two launches (Python work of
        # the stage's own, the GIL released), so without interop.warp's
        # lock the other thread's stage sets Warp's current stream in that
        # gap, every time.
        together = threading.Barrier(2, timeout=60)

        def work(i):
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                # int32 storage, read as uint32 by the stage: torch's uint32
                # has few ops.
                param = torch.full((1,), 5 + i, dtype=torch.int32, device="cuda")
                out = torch.zeros(N, dtype=torch.int32, device="cuda")

                @twarp.stage
                def gen(ctx):
                    a = twarp.array(ctx, "out", wp.uint32, (N,))
                    wp.launch(seed_kernel, N,
                              inputs=[a, twarp.array(ctx, "param", wp.uint32, (1,))])
                    time.sleep(0.02)
                    wp.launch(mix_kernel, N, inputs=[a, a])

                p = tx.Producer("thread%d" % i)
                s = p.add_device_stage("gen", gen, capture_safe=True)
                p.declare_binding(s, "param", 4, dtype="int32")
                p.declare_binding(s, "out", 4 * N, dtype="int32")
                p.bind("param", param)
                p.bind("out", out)
                # Not interop.graph(): torch.cuda.graph() captures on one side
                # stream of the class, shared by the threads, and begins with
                # a device-wide synchronize, which breaks a capture another
                # thread has open.  Each thread captures on its own stream.
                g = torch.cuda.CUDAGraph()
                together.wait()
                g.capture_begin(capture_error_mode="thread_local")
                try:
                    with self.interop.registered("thread_local"):
                        p.run()
                finally:
                    g.capture_end()
                together.wait()  # round 0 captures the producer's own graph
                for k in range(self.ROUNDS):
                    out.zero_()
                    if k % 2:
                        g.replay()
                    else:
                        p.run(stream, tx.Policy.REPLAY)
                    np.testing.assert_array_equal(out.cpu().numpy().view(np.uint32),
                                                  expected(5 + i),
                                                  "thread %d, round %d" % (i, k))
            del g
            p.close()

        self.run_threads(work, 2)


class Bindings(WarpCase):
    def test_warp_arrays_bind_checked_and_read_back(self):
        p = tx.Producer("bind")
        s = p.add_device_stage("use", lambda ctx: None)
        p.declare_binding(s, "ids", 16, dtype="int32")
        with self.assertRaises(tx.ArgumentError):
            p.bind("ids", wp.zeros(4, dtype=wp.float32, device="cuda:0"))
        ids = wp.zeros(4, dtype=wp.int32, device="cuda:0")
        p.bind("ids", ids)
        seen = {}

        def look(ctx):
            seen["same"] = self.twarp.array(ctx, "ids", wp.int32)
            seen["view"] = self.twarp.array(ctx, "ids", wp.uint8)

        p.add_device_stage("look", look)
        p.declare_binding(1, "ids", 16, dtype="int32")
        p.run(self.torch.cuda.current_stream(), tx.Policy.EAGER)
        self.assertIs(seen["same"], ids)
        self.assertEqual((seen["view"].shape, seen["view"].ptr), ((16,), ids.ptr))
        p.close()

    def test_a_producers_bindings_read_outside_a_stage(self):
        """twarp.array(producer, ...): the bound wp.array itself, or a view of a
        C producer's memory that keeps the producer alive."""
        import gc
        import weakref

        import numpy as np
        from track_gen import seeds, tracks
        p = tx.Producer("outside")
        p.declare_binding(p.add_device_stage("use", lambda ctx: None), "ids", 16,
                          dtype="int32")
        ids = wp.zeros(4, dtype=wp.int32, device="cuda:0")
        p.bind("ids", ids)
        self.assertIs(self.twarp.array(p, "ids", wp.int32), ids)
        with self.assertRaises(KeyError):
            self.twarp.array(p, "nothing", wp.int32)
        p.close()
        state = seeds.SeedState(8, base_seed=3)
        track = tracks.TrackProducer(state, advance=True, n_points=64)
        track.run(self.torch.cuda.current_stream())
        points = self.twarp.array(track, "points", wp.vec2, (8, 64))
        self.assertEqual((points.shape, points.ptr), ((8, 64), track.get_binding("points")[0]))
        with self.assertRaises(ValueError):
            self.twarp.array(track, "points", wp.vec2, (9, 64))
        gone = weakref.ref(track)
        del track
        gc.collect()
        self.assertIsNotNone(gone())  # the view holds it
        self.torch.cuda.synchronize()
        self.assertTrue(np.isfinite(points.numpy()).all())
        del points
        gc.collect()
        self.assertIsNone(gone())
        state.close()


class FirstUse(unittest.TestCase):
    def test_first_warp_use_inside_a_torch_capture(self):
        # A fresh process whose first Warp work is a decorated stage recorded
        # into torch.cuda.graph: the decorator set Warp up beforehand.
        tgtest.require_gpu()
        warp_or_skip()
        script = textwrap.dedent("""
            import numpy as np, torch, warp as wp
            from track_gen import exec as tx
            from track_gen.interop import torch as tgt, warp as twarp

            @wp.kernel
            def fill(a: wp.array(dtype=wp.int32), v: int):
                a[wp.tid()] = v + wp.tid()

            @twarp.stage
            def gen(ctx):
                wp.launch(fill, 1024, inputs=[twarp.array(ctx, "a", wp.int32), 7])

            a = torch.zeros(1024, dtype=torch.int32, device="cuda")
            p = tx.Producer("first")
            s = p.add_device_stage("gen", gen, capture_safe=True)
            p.declare_binding(s, "a", like=a)
            p.bind("a", a)
            g = torch.cuda.CUDAGraph()
            with tgt.graph(g):
                p.run()
            g.replay()
            torch.cuda.synchronize()
            assert a.tolist() == list(range(7, 1031)), a[:4]
        """)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "first_use.py")  # Warp reads kernels' source
            with open(path, "w") as f:
                f.write(script)
            run = subprocess.run([sys.executable, path], capture_output=True, text=True,
                                 timeout=TIMEOUT)
        self.assertEqual(run.returncode, 0, run.stderr[-4000:])


if __name__ == "__main__":
    # No test may hang: a watchdog ends the run (a failure, with every
    # thread's traceback) if it takes longer than any sane run on a GPU.
    faulthandler.dump_traceback_later(1800, exit=True)
    sys.exit(tap.main())
