# SPDX-License-Identifier: Apache-2.0
"""The stream rule (libtrackgen's, doc/python.md "Streams"): a call that
names no stream uses a capture registered on this thread, the producer's
bound stream, the ambient stream (torch's current stream on the call's
device when torch is imported, else Warp's when warp is imported and has set
the device up; both found in sys.modules, never imported), else TrackGen's
stream; work never runs beside a capture in progress on the ambient stream.
The binding only reads the ambient stream: the host cases put a fake torch
and a fake warp in sys.modules and check what is read; the GPU cases use the
real ones."""
import os
import subprocess
import sys
import textwrap
import types
import unittest

import tap
import tgtest
from track_gen import exec as tx
from track_gen import seeds


def have_gpu():
    try:
        tx.device_check(0)
    except tx.CudaError:
        return False
    return True


def device_count():
    n = 0
    while True:
        try:
            tx.device_check(n)
        except (tx.CudaError, tx.ArgumentError):
            return n
        n += 1


GPU = have_gpu()
DEVICES = device_count() if GPU else 0


class FakeTorch(types.ModuleType):
    """What the rule reads of torch: ``torch._C._cuda_getCurrentRawStream``,
    or without it ``torch.cuda.current_stream(device).cuda_stream``.  Records
    the devices asked for; returns CUDA's legacy stream (0), which is a
    stream on any machine."""

    def __init__(self, raw=True, error=None):
        super().__init__("torch")
        self.devices = []

        def current(device):
            self.devices.append(device)
            if error is not None:
                raise error
            return 0

        # current_device: the device of a flag given by address (_flow.py).
        self.cuda = types.SimpleNamespace(current_device=lambda: 0)
        if raw:
            self._C = types.SimpleNamespace(_cuda_getCurrentRawStream=current)
        else:
            self.cuda.current_stream = lambda d: types.SimpleNamespace(
                cuda_stream=current(d))


class FakeWarpDevice:
    """What the rule reads of a Warp device: ``has_stream``, then
    ``stream.cuda_stream``; counts the reads of ``stream``."""

    def __init__(self, set_up=True, handle=0, error=None):
        self.has_stream = set_up
        self.handle, self.error = handle, error
        self.reads = 0

    @property
    def stream(self):
        self.reads += 1
        if self.error is not None:
            raise self.error
        return types.SimpleNamespace(cuda_stream=self.handle)


def fake_warp(devices, initialized=True):
    """Puts a fake warp in sys.modules: ``warp`` and its runtime module
    ``warp._src.context``, whose ``runtime`` (None until ``wp.init()``)
    holds *devices* as ``cuda_devices``."""
    context = types.ModuleType("warp._src.context")
    context.runtime = (types.SimpleNamespace(cuda_devices=devices) if initialized
                       else None)
    sys.modules["warp"] = types.ModuleType("warp")
    sys.modules["warp._src.context"] = context
    return devices


class HostRule(unittest.TestCase):
    MODULES = ("torch", "warp", "warp._src.context")

    def setUp(self):
        self.saved = {name: sys.modules.pop(name, None) for name in self.MODULES}
        self.producer = tx.Producer("rule")

    def tearDown(self):
        self.producer.close()
        for name, module in self.saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module

    def call(self, func, gpu_refusal=None):
        """Calls *func*.  Without a GPU the CUDA query that follows the
        stream choice fails; these cases look at the choice alone.  On a GPU
        *gpu_refusal* (an ArgumentError lib raises after the choice: a fake
        flag, a device this machine lacks) is expected instead of success."""
        if GPU and gpu_refusal is None:
            return func()
        with self.assertRaises(tx.ArgumentError if GPU else tx.CudaError) as caught:
            func()
        if GPU:
            self.assertRegex(str(caught.exception), gpu_refusal)

    def test_torch_current_stream_on_the_producers_device(self):
        torch = sys.modules["torch"] = FakeTorch()
        self.call(self.producer.run)
        self.call(self.producer.resolve)
        self.call(lambda: tx.resolve(self.producer))
        self.call(tx.resolve_stream)
        self.assertEqual(torch.devices, [0, 0, 0, 0])
        if not GPU:  # a producer of device 2 needs no device until it runs
            with tx.Producer("two", 2) as two:
                self.call(two.run)
            self.call(lambda: tx.resolve_stream(None, 3))
            self.assertEqual(torch.devices[4:], [2, 3])

    def test_a_named_stream_wins(self):
        torch = sys.modules["torch"] = FakeTorch()
        self.call(lambda: self.producer.run(0))
        self.call(lambda: self.producer.resolve(0))
        self.call(lambda: tx.resolve_stream(0))
        self.assertEqual(torch.devices, [])

    def test_current_stream_object_without_the_raw_getter(self):
        torch = sys.modules["torch"] = FakeTorch(raw=False)
        self.call(self.producer.run)
        self.assertEqual(torch.devices, [0])

    def test_another_torch_in_sys_modules_is_read_again(self):
        first = sys.modules["torch"] = FakeTorch()
        self.call(self.producer.run)
        second = sys.modules["torch"] = FakeTorch(raw=False)
        self.call(self.producer.run)
        self.assertEqual((first.devices, second.devices), ([0], [0]))

    def test_torch_errors_propagate_unchanged(self):
        for error in (KeyboardInterrupt(), RuntimeError("no CUDA in this torch")):
            with self.subTest(error=type(error).__name__):
                sys.modules["torch"] = FakeTorch(error=error)
                with self.assertRaises(type(error)) as caught:
                    self.producer.run()
                self.assertIs(caught.exception, error)

    def test_torch_without_cuda_is_not_asked(self):
        # A torch with neither getter (a CPU-only build): each call has the
        # outcome it has with no torch at all, on a GPU TrackGen's stream
        # (test_torch_without_cuda_leaves_it_to_warp shows the fall-through
        # without one).
        def outcome(func):
            try:
                return func()
            except tx.CudaError as e:
                return str(e)

        calls = (self.producer.run, self.producer.resolve, tx.resolve_stream)
        want = [outcome(func) for func in calls]  # setUp took torch and warp away
        sys.modules["torch"] = types.ModuleType("torch")
        self.assertEqual([outcome(func) for func in calls], want)
        if GPU:
            self.assertEqual(want[2], tx.default_stream(0))

    def test_warp_current_stream_without_torch(self):
        devices = fake_warp([FakeWarpDevice() for _ in range(4)])
        for call in (self.producer.run, self.producer.resolve,
                     lambda: tx.resolve(self.producer), tx.resolve_stream):
            self.call(call)
        self.call(lambda: tx.capture_if(4096, on_true=lambda: None), "not device memory")
        self.assertEqual([d.reads for d in devices], [5, 0, 0, 0])
        if not GPU:
            with tx.Producer("two", 2) as two:
                self.call(two.run)
            self.call(lambda: tx.resolve_stream(None, 3))
            self.assertEqual([d.reads for d in devices], [5, 0, 1, 1])

    def test_both_imported_torch_wins(self):
        torch = sys.modules["torch"] = FakeTorch()
        devices = fake_warp([FakeWarpDevice()])
        for call in (self.producer.run, tx.resolve_stream):
            self.call(call)
        self.call(lambda: tx.capture_if(4096, on_true=lambda: None), "not device memory")
        self.assertEqual(torch.devices, [0, 0, 0])
        self.assertEqual(devices[0].reads, 0)

    def test_torch_without_cuda_leaves_it_to_warp(self):
        sys.modules["torch"] = types.ModuleType("torch")  # a CPU-only build
        devices = fake_warp([FakeWarpDevice()])
        self.call(self.producer.run)
        self.assertEqual(devices[0].reads, 1)

    def test_warp_never_set_up_is_not_asked(self):
        # Not initialized (no runtime), a device Warp never made current, a
        # device Warp does not have: TrackGen's stream, and Warp untouched.
        fake_warp([FakeWarpDevice(error=AssertionError("read"))], initialized=False)
        self.call(self.producer.run)
        devices = fake_warp([FakeWarpDevice(set_up=False,
                                            error=AssertionError("read"))])
        self.call(self.producer.run)
        self.call(lambda: tx.resolve_stream(None, 1),
                  None if DEVICES > 1 else "device 1 does not exist")
        self.assertEqual(devices[0].reads, 0)

    def test_a_named_stream_wins_over_warp(self):
        devices = fake_warp([FakeWarpDevice()])
        self.call(lambda: self.producer.run(0))
        self.call(lambda: tx.resolve_stream(0))
        self.assertEqual(devices[0].reads, 0)

    def test_warp_errors_propagate_unchanged(self):
        error = RuntimeError("Warp says no")
        fake_warp([FakeWarpDevice(error=error)])
        with self.assertRaises(RuntimeError) as caught:
            self.producer.run()
        self.assertIs(caught.exception, error)
        fake_warp([FakeWarpDevice(handle="not a handle")])
        with self.assertRaisesRegex(TypeError, "Warp's current stream handle"):
            tx.resolve_stream()

    def test_no_torch_is_imported(self):
        script = textwrap.dedent("""
            import sys
            from track_gen import exec as tx
            p = tx.Producer("quiet")
            for call in (p.run, p.resolve, tx.resolve_stream):
                try:
                    call()
                except tx.CudaError:
                    pass  # no GPU here
            print("torch" in sys.modules)
        """)
        run = subprocess.run([sys.executable, "-c", script], capture_output=True,
                             text=True, timeout=120, env=os.environ)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.strip(), "False")


WARP_SCRIPT = """if True:
    import sys
    import warp as wp
    from track_gen import exec as tx, seeds

    wp.init()
    dev = wp.get_device("cuda:0")
    state = seeds.SeedState(64)
    p = tx.Producer("warp-rule")
    p.add_device_stage("noop", lambda ctx: None, capture_safe=True)
    s = wp.Stream(dev)
    with wp.ScopedStream(s):
        # Outside a capture: Warp's current stream, ordered with Warp's work.
        assert tx.resolve_stream() == s.cuda_stream
        assert tx.resolve(p) == (tx.Policy.REPLAY, s.cuda_stream), tx.resolve(p)
        state.advance()
        with wp.ScopedCapture(device=dev) as capture:
            # Inside Warp's capture: recorded into it, never run beside it.
            assert tx.resolve(p) == (tx.Policy.RECORD, s.cuda_stream)
            state.advance()
            for call in (lambda: p.run(policy=tx.Policy.EAGER), state.read):
                try:
                    call()
                except tx.StateError as e:
                    assert "Warp's current stream is capturing" in str(e), e
                else:
                    raise AssertionError("ran beside Warp's capture")
        for _ in range(3):
            wp.capture_launch(capture.graph)
        wp.synchronize_device(dev)
    assert state.read()[1] == [4] * 64, state.read()[1][:4]
    assert "torch" not in sys.modules
    p.close()
    state.close()
    print("ok")
"""


class WarpRule(unittest.TestCase):
    def test_warp_current_stream_without_torch(self):
        try:
            import warp  # noqa: F401
        except ImportError:
            self.skipTest("no warp (pip install warp-lang)")
        if not GPU:
            self.skipTest("no CUDA device")
        run = subprocess.run([sys.executable, "-c", WARP_SCRIPT], capture_output=True,
                             text=True, timeout=300, env=os.environ)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertEqual(run.stdout.strip().splitlines()[-1], "ok")


class TorchRule(tgtest.GpuCase):
    def test_both_imported_torch_current_stream_wins(self):
        try:
            import warp as wp
        except ImportError:
            self.skipTest("no warp (pip install warp-lang)")
        torch = self.torch
        wp.init()
        ws, side = wp.Stream("cuda:0"), torch.cuda.Stream()
        with wp.ScopedStream(ws), torch.cuda.stream(side):
            self.assertEqual(tx.resolve_stream(), side.cuda_stream)
        with wp.ScopedStream(ws):
            self.assertEqual(tx.resolve_stream(), torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()

    def test_legacy_stream_reads_as_torch_names_it(self):
        # lib names it cudaStreamLegacy; Python hands back torch's 0.
        torch = self.torch
        self.assertEqual(torch.cuda.current_stream().cuda_stream, 0)
        self.assertEqual(tx.resolve_stream(), 0)
        self.assertEqual(tx.resolve_stream(0), 0)
        self.assertEqual(tx.resolve_stream(torch.cuda.default_stream()), 0)
        chain = tgtest.Chain("legacy")
        self.assertEqual(tx.resolve(chain.producer, 0), (tx.Policy.REPLAY, 0))
        chain.producer.close()

    def test_outside_a_capture_torch_current_stream(self):
        torch = self.torch
        chain = tgtest.Chain("current")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            self.assertEqual(tx.resolve(chain.producer),
                             (tx.Policy.REPLAY, side.cuda_stream))
            self.assertEqual(tx.resolve_stream(), side.cuda_stream)
            chain.set_inputs(3, 4)  # on side, so ordered with the run
            chain.producer.run()
        self.assertTrue(torch.equal(chain.result(), tgtest.expected(3, 4)))
        chain.producer.close()

    def test_bound_stream_then_registered_capture_win(self):
        torch = self.torch
        bound = torch.cuda.Stream()
        chain = tgtest.Chain("bound", stream=bound)
        self.assertEqual(tx.resolve(chain.producer)[1], bound.cuda_stream)
        other, x = torch.cuda.Stream(), torch.zeros(1, device="cuda")
        g = torch.cuda.CUDAGraph()
        with self.interop.graph(g):
            capturing = torch.cuda.current_stream().cuda_stream
            with torch.cuda.stream(other):
                self.assertEqual(tx.resolve(chain.producer),
                                 (tx.Policy.RECORD, capturing))
            x.add_(1)
        chain.producer.close()
        del g

    def test_torch_graph_records_and_retains(self):
        torch = self.torch
        before = tx.live_objects().producers
        chain = tgtest.Chain("unregistered")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):  # no registered(): torch's stream is the rule's
            self.assertEqual(tx.resolve(chain.producer)[0], tx.Policy.RECORD)
            chain.producer.run()
        self.assertEqual(chain.calls["seed"], 1)  # recorded, not run at capture time
        chain.producer.close()
        self.assertEqual(tx.live_objects().producers, before + 1)  # g holds it
        tgtest.check_replays(self, g, chain)
        del g
        self.assertTrue(tx.release_wait(10.0))
        self.assertEqual(tx.live_objects().producers, before)

    def test_work_beside_torch_capture_is_refused(self):
        torch = self.torch
        chain = tgtest.Chain("beside")
        bound = tgtest.Chain("beside-bound", stream=torch.cuda.Stream())
        state = seeds.SeedState(16)
        x = torch.zeros(4, device="cuda")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for policy in (tx.Policy.EAGER, tx.Policy.REPLAY):
                with self.assertRaisesRegex(tx.StateError,
                                            "torch's current stream is capturing.*"
                                            "pass Policy.AUTO to record it"):
                    chain.producer.run(policy=policy)
            with self.assertRaisesRegex(tx.StateError, "bound stream"):
                bound.producer.run()
            for call in (state.snapshot, state.read):
                with self.assertRaisesRegex(tx.StateError, "outside the capture"):
                    call()
            x.add_(1)  # the capture goes on
        g.replay()
        torch.cuda.synchronize()
        self.assertEqual(x.tolist(), [1.0] * 4)
        self.assertEqual(chain.calls["seed"], 0)
        for c in (chain, bound):
            c.producer.close()
        state.close()
        del g

    def test_legacy_plugin_stage_raises_its_error(self):
        # A stage that launches only on the legacy stream (torch's default
        # stream) is refused with LegacyPluginStreamError, before it runs:
        # on another stream, under an explicit REPLAY on the legacy stream,
        # and inside a torch capture, which goes on.  Eagerly on the legacy
        # stream it runs.
        torch = self.torch
        buf = torch.zeros(4, dtype=torch.int64, device="cuda")
        calls = []

        def plugin(ctx):
            calls.append(ctx.stream)
            with torch.cuda.stream(torch.cuda.default_stream()):
                buf.add_(1)

        p = tx.Producer("legacy-plugin")
        p.add_device_stage("plugin", plugin, capture_safe=True, legacy_stream=True)
        side = torch.cuda.Stream()

        def refused(call):
            with self.assertRaises(tx.LegacyPluginStreamError) as caught:
                call()
            e = caught.exception
            self.assertIsInstance(e, tx.CaptureError)
            self.assertIs(e.code, tx.CaptureErrorCode.LEGACY_PLUGIN_STREAM)
            self.assertEqual((e.producer, e.stage), ("legacy-plugin", "plugin"))

        refused(lambda: p.run(side))
        refused(lambda: p.run(0, policy=tx.Policy.REPLAY))
        x = torch.zeros(4, device="cuda")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            refused(p.run)
            x.add_(1)  # the capture goes on
        g.replay()
        torch.cuda.synchronize()
        self.assertEqual(x.tolist(), [1.0] * 4)
        self.assertEqual(calls, [])
        self.assertEqual(buf.tolist(), [0] * 4)
        p.run(0)
        torch.cuda.synchronize()
        self.assertEqual(calls, [0])
        self.assertEqual(buf.tolist(), [1] * 4)
        p.close()
        del g

    def test_calls_in_a_stage_go_to_its_stream_under_registered(self):
        # The registered capture is the caller's: inside a stage, a call that
        # names no stream goes to the stage's stream (torch's current one),
        # and capture_if records into the stage's work, where it belongs.
        torch = self.torch
        flag = torch.zeros(1, dtype=torch.int32, device="cuda")
        buf = torch.zeros(2, dtype=torch.int64, device="cuda")
        seen = []

        def stage(ctx):
            seen.append(tx.resolve_stream() == ctx.stream)
            tx.capture_if(flag, lambda: buf[0].add_(1), lambda: buf[1].add_(1))

        p = tx.Producer("calls-in-a-stage")
        p.add_device_stage("stage", stage, capture_safe=True)
        g = torch.cuda.CUDAGraph()
        with self.interop.graph(g):
            p.run()
        self.assertTrue(seen and all(seen), seen)
        for i in range(2):
            flag.fill_(i)
            buf.zero_()
            g.replay()
            torch.cuda.synchronize()
            self.assertEqual(buf.tolist(), [i, 1 - i])
        del g
        p.close()

    def test_seed_state_follows_torch_stream(self):
        torch = self.torch
        state = seeds.SeedState(64)
        mask = torch.ones(64, dtype=torch.uint8, device="cuda")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            state.advance(mask=mask)
        for _ in range(3):
            g.replay()
        torch.cuda.synchronize()
        self.assertEqual(state.read()[1], [3] * 64)
        del g
        state.close()


if __name__ == "__main__":
    sys.exit(tap.main())
