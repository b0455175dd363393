# SPDX-License-Identifier: Apache-2.0
"""track_gen.interop.warp without a GPU: what its helpers ask of Warp
under EAGER, under a capture Warp does not know, under one it knows, in a
condition or loop body, when a stage raises, and under a registered torch
capture, checked against a fake of Warp that records each call.  Runs
wherever warp is installed (the real thing runs in test_warp.py and
test_warp_stages.py on a GPU)."""
import contextlib
import sys
import unittest

import tap
from track_gen import exec as tx

try:
    import warp as wp
except ImportError:
    wp = None


def warp_or_skip():
    """track_gen.interop.warp, or a skip when warp is not installed."""
    if wp is None:
        raise unittest.SkipTest("no warp (pip install warp-lang)")
    from track_gen.interop import warp as twarp
    return twarp


class FakeContext:
    """What the helpers read of a LaunchContext, for refusals made before any
    CUDA call."""

    device = 0
    stream = 0x1234
    is_capturing = True
    capture_id = 7
    depth = 0
    stage_name = "relax"
    producer_name = "track"


class FakeWarp:
    """The part of warp the helpers call, recording each call: what they ask
    of Warp under each capture state, without a GPU."""

    class Stream:
        def __init__(self, device, cuda_stream):
            self.device, self.cuda_stream = device, cuda_stream

    class Graph:
        def __init__(self, capture_id):
            self.capture_id = capture_id

    def __init__(self, capture_ids):
        self.CaptureMode = wp.CaptureMode
        self.capture_ids = capture_ids  # stream handle -> its capture's id
        self.calls = []
        self.broken = False  # capture_end fails: the capture was invalidated
        self.allocator = "Warp's"
        warp_self = self

        class Device:
            captures = {}
            null_stream = FakeWarp.Stream(None, 0)
            stream = FakeWarp.Stream(None, 0x42)

            def get_allocator(self):
                return warp_self.allocator

        self.device = Device()

    def get_device(self, ident):
        return self.device

    @contextlib.contextmanager
    def ScopedStream(self, ws, sync_enter=True):
        self.calls.append(("stream", ws.cuda_stream, sync_enter))
        yield ws

    @contextlib.contextmanager
    def ScopedAllocator(self, device, allocator):
        saved, self.allocator = self.allocator, allocator
        yield
        self.allocator = saved

    def capture_begin(self, stream, external, capture_mode):
        self.calls.append(("begin", stream.cuda_stream, external, capture_mode))
        self.device.captures[stream] = self.Graph(self.capture_ids[stream.cuda_stream])

    def capture_end(self, stream):
        self.calls.append(("end", stream.cuda_stream))
        graph = self.device.captures.pop(stream)
        if self.broken:
            raise RuntimeError("CUDA graph capture failed.")
        graph.graph = None  # an external capture's: never Warp's
        return graph

    def capture_launch(self, graph, stream):
        self.calls.append(("launch", stream.cuda_stream))

    def get_stream(self, device):
        return self.device.stream


class FakeNative:
    """_native.capture_info: every capture active."""

    @staticmethod
    def capture_info(stream):
        return tx.CaptureState.ACTIVE, 0, None


class Flow(unittest.TestCase):
    """What the helpers ask of Warp under EAGER, under a capture Warp does not
    know, under one it knows, in a body, when a stage raises, and under a
    registered torch capture, with a recording fake of Warp."""

    def setUp(self):
        twarp = self.twarp = warp_or_skip()
        self.fake = FakeWarp({0x100: 7, 0x200: 8, 0x300: 9})
        self.saved = (twarp.wp, twarp._native, twarp.retain_capture, set(twarp._prepared),
                      dict(twarp._streams))
        twarp.wp, twarp._native = self.fake, FakeNative
        twarp._prepared.add(0)
        self.retained = []
        twarp.retain_capture = lambda *a: self.retained.append(a)

    def tearDown(self):
        twarp = self.twarp
        twarp.wp, twarp._native, twarp.retain_capture, prepared, streams = self.saved
        twarp._prepared.clear()
        twarp._prepared.update(prepared)
        twarp._streams.clear()
        twarp._streams.update(streams)

    def context(self, stream=0x100, capturing=True, depth=0):
        ctx = FakeContext()
        ctx.stream, ctx.is_capturing, ctx.depth = stream, capturing, depth
        ctx.capture_id = self.fake.capture_ids.get(stream, 0) if capturing else 0
        ctx.kept = []
        ctx.keep = ctx.kept.append
        return ctx

    def test_eager_registers_nothing(self):
        ctx = self.context(capturing=False)
        with self.twarp.scope(ctx) as ws:
            self.assertEqual(ws.cuda_stream, 0x100)
        self.assertEqual(self.fake.calls, [("stream", 0x100, False)])
        self.assertEqual(ctx.kept, [])

    def test_unknown_capture_registered_for_the_call(self):
        ctx = self.context()
        with self.twarp.scope(ctx) as ws:
            self.assertEqual(self.fake.allocator, "Warp's")  # top level: allocations
            self.assertIn(ws, self.fake.device.captures)
        self.assertEqual(self.fake.calls, [
            ("stream", 0x100, False),
            ("begin", 0x100, True, wp.CaptureMode.THREAD_LOCAL),
            ("end", 0x100)])
        self.assertEqual([g.capture_id for g in ctx.kept], [7])  # Warp's Graph kept
        self.assertEqual(self.fake.device.captures, {})

    def test_known_capture_used_as_it_is(self):
        users = FakeWarp.Stream(self.fake.device, 0x100)
        self.fake.device.captures[users] = FakeWarp.Graph(7)
        ctx = self.context()
        with self.twarp.scope(ctx) as ws:
            self.assertIs(ws, users)  # the object Warp looks the capture up by
        self.assertEqual(self.fake.calls, [("stream", 0x100, False)])
        self.assertEqual(ctx.kept, [])

    def test_a_resumed_capture_is_still_known(self):
        # capture_if pauses and resumes the capture, which gets a new id: a
        # scope nested after it registers nothing twice.
        ctx = self.context()
        with self.twarp.scope(ctx) as ws:
            self.fake.device.captures[ws].capture_id = 70
            with self.twarp.scope(ctx):
                pass
        self.assertEqual([c[0] for c in self.fake.calls], ["stream", "begin", "stream", "end"])

    def test_body_allocations_refused_then_restored(self):
        ctx = self.context(depth=1)
        with self.twarp.scope(ctx):
            with self.assertRaises(tx.NotCapturableError) as raised:
                self.fake.allocator.allocate(64)
        self.assertEqual(self.fake.allocator, "Warp's")
        # Made as the native module makes libtrackgen's errors.
        e = raised.exception
        self.assertEqual((e.domain, e.code, e.producer, e.stage),
                         ("tg-capture-error-quark", tx.CaptureErrorCode.NOT_CAPTURABLE,
                          ctx.producer_name, "relax"))

    def test_a_raising_stage_ends_the_registration(self):
        ctx = self.context()
        with self.assertRaises(KeyError):
            with self.twarp.scope(ctx):
                raise KeyError("stage")
        self.assertEqual([c[0] for c in self.fake.calls], ["stream", "begin", "end"])
        self.assertEqual((ctx.kept, self.fake.device.captures), ([], {}))

    def test_a_broken_capture_is_a_capture_error_naming_the_stage(self):
        # Warp's Graph no longer names the capture's CUDA graph (a pause for
        # capture_if leaves it there), or dropping it would destroy it.
        ctx = self.context()
        self.fake.broken = True
        with self.assertRaises(tx.CaptureError) as raised:
            with self.twarp.scope(ctx) as ws:
                graph = self.fake.device.captures[ws]
                graph.graph = "the capture's graph"  # what capture_pause leaves
        self.assertEqual((raised.exception.stage, raised.exception.code),
                         ("relax", tx.CaptureErrorCode.FAILED))
        self.assertIsNone(graph.graph)
        self.assertEqual(ctx.kept, [])

    def test_launch_graph_outside_a_capture_and_outside_the_scope(self):
        self.twarp.launch_graph(self.context(capturing=False), FakeWarp.Graph(0))
        self.assertEqual(self.fake.calls, [("launch", 0x100)])
        # Under a capture Warp does not know (no scope): refused, nothing added.
        with self.assertRaises(tx.StateError) as raised:
            self.twarp.launch_graph(self.context(), FakeWarp.Graph(0))
        self.assertEqual((raised.exception.domain, raised.exception.code,
                          raised.exception.stage),
                         ("tg-state-error-quark", tx.StateErrorCode.FAILED, "relax"))
        self.assertIn("scope", str(raised.exception))
        self.assertEqual(len(self.fake.calls), 1)

    def test_torch_capture_registered_in_its_mode(self):
        # torch's relaxed capture on 0x200; a stage's own capture inside it
        # is registered relaxed too; torch's graph keeps Warp's Graph.
        relaxed = wp.CaptureMode.RELAXED
        with self.twarp._torch_capture(0x200, 0, int(relaxed)):
            with self.twarp.scope(self.context(0x300)):
                pass
            with self.twarp.scope(self.context(0x200)):  # pass 2 on torch's stream
                pass
        self.assertEqual(self.fake.calls, [
            ("begin", 0x200, True, relaxed), ("stream", 0x200, False),
            ("stream", 0x300, False), ("begin", 0x300, True, relaxed), ("end", 0x300),
            ("stream", 0x200, False),
            ("end", 0x200)])
        self.assertEqual([(h, g.capture_id) for h, g in self.retained], [(0x200, 8)])
        with self.twarp.scope(self.context(0x300)):  # after it: thread-local again
            pass
        self.assertEqual(self.fake.calls[-2][3], wp.CaptureMode.THREAD_LOCAL)

    def test_torch_registration_reaches_warp_through_its_hook(self):
        # What interop.torch.registered() calls: interop.warp added its hook
        # on import, and torch's adapter never imports Warp's.
        from track_gen import _frameworks
        relaxed = wp.CaptureMode.RELAXED
        with _frameworks.capture_registered(0x200, 0, int(relaxed)):
            self.assertEqual(self.fake.calls[0], ("begin", 0x200, True, relaxed))
        self.assertEqual(self.fake.calls[-1], ("end", 0x200))
        self.assertEqual(len(self.retained), 1)

    def test_torch_capture_on_an_unprepared_device_registers_nothing(self):
        # Warp is not set up on device 99, so no Warp work can run in torch's
        # capture there: nothing is asked of Warp, no wrapper is made, the
        # torch graph keeps nothing, and a stage's own capture inside it is
        # registered in Warp's default mode, not torch's.
        with self.twarp._torch_capture(0x200, 99, int(wp.CaptureMode.RELAXED)):
            self.assertEqual(self.fake.calls, [])
            with self.twarp.scope(self.context(0x300)):
                pass
        self.assertEqual(self.fake.calls, [
            ("stream", 0x300, False),
            ("begin", 0x300, True, wp.CaptureMode.THREAD_LOCAL), ("end", 0x300)])
        self.assertEqual(self.retained, [])
        self.assertEqual([key for key in self.twarp._streams if key[0] == 99], [])


if __name__ == "__main__":
    sys.exit(tap.main())
