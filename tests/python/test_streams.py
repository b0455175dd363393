"""The stream rule: a call that names no stream uses a capture registered on
this thread, the producer's bound stream, torch's current stream on the
producer's device when torch is imported (found in sys.modules, never
imported), else TrackGen's stream; work never runs beside a capture in
progress on torch's current stream.  The host cases put a fake torch in
sys.modules; the GPU cases use the real one."""
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


GPU = have_gpu()


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

        if raw:
            self._C = types.SimpleNamespace(_cuda_getCurrentRawStream=current)
        else:
            self.cuda = types.SimpleNamespace(
                current_stream=lambda d: types.SimpleNamespace(cuda_stream=current(d)))


class HostRule(unittest.TestCase):
    def setUp(self):
        self.saved = sys.modules.get("torch")
        self.producer = tx.Producer("rule")

    def tearDown(self):
        self.producer.close()
        if self.saved is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = self.saved

    def call(self, func):
        """Calls *func*.  Without a GPU the CUDA query that follows the
        stream choice fails; these cases look at the choice alone."""
        if GPU:
            return func()
        with self.assertRaises(tx.CudaError):
            func()

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
        sys.modules["torch"] = types.ModuleType("torch")  # a CPU-only build
        self.call(self.producer.run)

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


class TorchRule(tgtest.GpuCase):
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
                with self.assertRaisesRegex(tx.StateError, "policy=Policy.AUTO"):
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
