# SPDX-License-Identifier: Apache-2.0
"""track_gen.interop.warp: Warp kernels as stages.  Import hygiene, the
stream-wrapper cache and the refusals made before any CUDA call run
wherever warp is installed (test_warp_flow.py adds what the helpers ask of
Warp under each capture state); on a GPU with torch and warp, two threads'
Warp stages each get their own results, wp.arrays bind checked, and Warp's
first use may be inside a torch capture.  Issue 26's list, each row under
every policy, is in test_warp_stages.py."""
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest

import tgtest
import warptest
from test_warp_flow import FakeContext, warp_or_skip
from track_gen import exec as tx
from warptest import N, WarpCase, expected, wp

if wp is not None:
    from warptest import mix_kernel, seed_kernel

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
    sys.exit(warptest.main())
