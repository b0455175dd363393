# SPDX-License-Identifier: Apache-2.0
"""What the Python tests share: skipping without torch or a GPU, a
deterministic torch producer, and a check that nothing leaked.

A test that needs the GPU calls require_gpu() (in setUp or setUpClass); it
skips with the reason when torch or a CUDA device is missing, so the
host-only tests of a file still run everywhere.
"""
import gc
import threading
import time
import unittest

from track_gen import exec as tx


def torch_or_skip():
    """torch, or a skip when it is not installed."""
    try:
        import torch
    except ImportError:
        raise unittest.SkipTest("no torch")
    return torch


def require_gpu():
    """torch with a CUDA device, or a skip saying which is missing."""
    torch = torch_or_skip()
    if not torch.cuda.is_available():
        raise unittest.SkipTest("no CUDA device")
    return torch


N = 4096
MIX = 0x9E37


def expected(param, k, n=N):
    """What the chain producer computes for inputs (param, k), on the host."""
    import torch
    i = torch.arange(n, dtype=torch.int64)
    a = (i * 2654435761 + param) & 0xFFFFFFFF
    a = (a * MIX + (a >> 7)) & 0xFFFFFFFF
    return ((a[(i * 7) % n] + k * 31) ^ i) & 0xFFFFFFFF


class Chain:
    """A producer of three capture-safe torch stages over int64 tensors (exact
    integer arithmetic, so every policy gives the same bits): a = hash(i,
    param); a = mix(a) (with a temporary); b = a[(i*7) % n] + k*31 ^ i.
    Bindings: param, k (one int64 each), a, b (n int64)."""

    def __init__(self, name="chain", n=N, capture_safe=True, stream=None):
        import torch
        self.torch = torch
        self.n = n
        dev = torch.device("cuda")
        self.param = torch.zeros(1, dtype=torch.int64, device=dev)
        self.k = torch.zeros(1, dtype=torch.int64, device=dev)
        self.a = torch.zeros(n, dtype=torch.int64, device=dev)
        self.b = torch.zeros(n, dtype=torch.int64, device=dev)
        self.i = torch.arange(n, dtype=torch.int64, device=dev)
        self.calls = {"seed": 0, "mix": 0, "combine": 0}
        p = self.producer = tx.Producer(name, stream=stream)
        s = p.add_device_stage("seed", self._seed, capture_safe=capture_safe)
        p.declare_binding(s, "param", 8, dtype="int64")
        p.declare_binding(s, "a", 8 * n, dtype="int64")
        s = p.add_device_stage("mix", self._mix, capture_safe=capture_safe)
        p.declare_binding(s, "a", 8 * n, dtype="int64")
        s = p.add_device_stage("combine", self._combine, capture_safe=capture_safe)
        p.declare_binding(s, "a", 8 * n, dtype="int64")
        p.declare_binding(s, "b", 8 * n, dtype="int64")
        p.declare_binding(s, "k", 8, dtype="int64")
        for name in ("param", "k", "a", "b"):
            p.bind(name, getattr(self, name))

    def _seed(self, ctx):
        self.calls["seed"] += 1
        a, param = ctx.binding("a"), ctx.binding("param")
        a.copy_((self.i * 2654435761 + param) & 0xFFFFFFFF)

    def _mix(self, ctx):
        self.calls["mix"] += 1
        a = ctx.binding("a")
        t = (a * MIX + (a >> 7)) & 0xFFFFFFFF  # a temporary of the stage
        a.copy_(t)

    def _combine(self, ctx):
        self.calls["combine"] += 1
        a, b, k = ctx.binding("a"), ctx.binding("b"), ctx.binding("k")
        b.copy_(((a[(self.i * 7) % self.n] + k * 31) ^ self.i) & 0xFFFFFFFF)

    def set_inputs(self, param, k):
        self.param.fill_(param)
        self.k.fill_(k)

    def result(self):
        self.torch.cuda.synchronize()
        return self.b.cpu()


def check_replays(case, graph, chain, inputs=((1, 2), (3, 4))):
    """Replays *graph* (which recorded *chain*) once per (param, k) of
    *inputs*, checking the chain's result after each."""
    for param, k in inputs:
        chain.set_inputs(param, k)
        graph.replay()
        case.assertTrue(chain.torch.equal(chain.result(), expected(param, k)))


class LeakCheck:
    """Counts TrackGen's live objects before a test and checks them after:
    the counters tests/tg-test.c checks but streams (see check()), torch and
    a GPU needed."""

    def __init__(self, case):
        self.case = case
        # TrackGen's default stream of a device is made once and kept: made
        # before counting (tg_test_live_snapshot()).
        for device in range(torch_or_skip().cuda.device_count()):
            tx.default_stream(device)
        self.before = tx.live_objects()

    def check(self):
        gc.collect()
        # The driver runs the user-object destructor of a graph deleted with
        # replays in flight once they completed: only then is its release
        # decided, which release_wait() waits for.
        deadline = time.monotonic() + 10.0
        while (tx.live_objects().user_objects > self.before.user_objects
               and time.monotonic() < deadline):
            time.sleep(0.001)
        self.case.assertTrue(tx.release_wait(10.0), "graph releases still pending")
        after = tx.live_objects()
        # Not "streams": the producers the package keeps for capture_if /
        # capture_while / capture_switch (one per thread, device, kind and
        # depth, for the process) make their private streams at their first
        # REPLAY, in whichever test that is (seen on the H200: one more
        # stream after a test whose producers count did not change).
        for name in ("producers", "graphs", "graph_execs", "failed_releases",
                     "user_objects"):
            self.case.assertEqual(getattr(after, name), getattr(self.before, name),
                                  (name, self.before, after))
        self.case.assertEqual(after.captures, 0, after)


class GpuCase(unittest.TestCase):
    """A case that needs torch and a GPU (skipped without them): ``self.torch``,
    ``self.interop`` (track_gen.interop.torch), and TrackGen's live objects
    checked after each test."""

    def setUp(self):
        self.torch = require_gpu()
        from track_gen.interop import torch as interop_torch
        self.interop = interop_torch
        self.leaks = LeakCheck(self)

    def tearDown(self):
        self.leaks.check()

    def run_threads(self, target, n):
        """Runs target(i) for i in range(n), each on a thread of its own; the
        first exception a thread raised is raised here, and a thread still
        running after 120 s fails the test."""
        errors = []

        def guarded(i):
            try:
                target(i)
            except BaseException as e:  # reported on the main thread
                errors.append(e)

        threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
            self.assertFalse(t.is_alive(), "a thread hung")
        if errors:
            raise errors[0]
