# SPDX-License-Identifier: Apache-2.0
"""What the Warp tests on a GPU share (test_warp.py, test_warp_stages.py):
three Warp kernels and their outputs computed on the host, a Warp stream of
the tests' own, WarpCase (a producer of one Warp stage, checked bit for bit
under every policy), and main(): tap's, under a watchdog.  Warp is None
where it is not installed; the kernels are defined only where it is."""
import faulthandler

import tap
import tgtest
from test_warp_flow import warp_or_skip
from track_gen import exec as tx

try:
    import warp as wp
except ImportError:
    wp = None

N = 1 << 16


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


def main():
    """tap.main() for the calling test module, under a watchdog."""
    # No test may hang: a watchdog ends the run (a failure, with every
    # thread's traceback) if it takes longer than any sane run on a GPU.
    faulthandler.dump_traceback_later(1800, exit=True)
    return tap.main()
