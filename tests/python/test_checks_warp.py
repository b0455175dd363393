# SPDX-License-Identifier: Apache-2.0
"""A plain stage (no ``interop.warp.stage``) whose Warp launch has no
``stream=``, inside a torch capture registered with Warp
(``interop.torch.graph()`` once ``interop.warp.prepare()`` ran), where
Warp's current stream is the caller's capture: the launch is recorded in
the producer's work, not beside it (a stage under a condition of 0 leaves
``out`` alone at replay), and checked mode has nothing to report.  Its own
process: test_checks.py's Warp case needs Warp never set up."""
import sys

import tap
import test_checks
from track_gen import exec as tx

try:
    import warp as wp
except ImportError:
    wp = None

N = test_checks.N


class Registered(test_checks.EscapeCase):
    def setUp(self):
        super().setUp()
        if wp is None:
            self.skipTest("no warp (pip install warp-lang)")
        from track_gen.interop import warp as twarp
        twarp.prepare(0)
        self.flag = self.torch.ones(1, dtype=self.torch.int32, device="cuda")
        wout, wparam = wp.from_torch(self.out), wp.from_torch(self.param)
        # Compiled outside a capture.
        wp.launch(test_checks.write_kernel, N, inputs=[wout, wparam])
        wp.synchronize()

        def plain(ctx):
            wp.launch(test_checks.write_kernel, N, inputs=[wout, wparam])

        self.plain = plain

    def conditional_producer(self):
        p = self.producer(self.plain)
        p.bind("flag", self.flag)
        p.set_stage_condition(0, "flag")
        return p

    def record(self, checks):
        torch = self.torch
        tx.set_checks(checks)
        self.set_param(3)
        g = torch.cuda.CUDAGraph()
        with self.conditional_producer() as p, self.interop.graph(g):
            p.run()
        self.out.zero_()
        for param, flag in ((5, 1), (7, 0), (9, 1)):
            self.set_param(param)
            self.flag.fill_(flag)
            g.replay()
            got = self.got()
            if flag:
                self.assertTrue(torch.equal(got, self.want(param)), (param, flag))
                continue
            self.assertTrue(torch.equal(got, self.want(5)), "the stage ran under flag 0")
        del g

    def test_recorded_in_the_producers_work(self):
        self.record(checks=False)

    def test_checked_mode_reports_nothing(self):
        self.record(checks=True)


if __name__ == "__main__":
    sys.exit(tap.main())
