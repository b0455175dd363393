# SPDX-License-Identifier: Apache-2.0
"""torch's allocations inside TrackGen's captures stay memory-safe: a
temporary a stage allocates while its work is captured (REPLAY's own graph,
RECORD's trial capture) is never handed to another tensor while the graph
that holds it lives.  The test records the temporaries' addresses, allocates
and fills other tensors between replays, and checks both the replays'
results and that the other tensors are untouched."""
import sys

import tap
import tgtest
from track_gen import exec as tx

N = 1 << 16


class Temporaries(tgtest.GpuCase):
    def producer(self, x, y, addresses):
        """y = ((x * 3) + 1) * 2 through two temporaries of the stage."""
        p = tx.Producer("temporaries")

        def stage(ctx):
            t = ctx.binding("x") * 3
            u = t + 1
            if ctx.is_capturing:
                addresses.update({t.data_ptr(), u.data_ptr()})
            ctx.binding("y").copy_(u * 2)

        s = p.add_device_stage("compute", stage, capture_safe=True)
        p.declare_binding(s, "x", 4 * N, dtype="float32")
        p.declare_binding(s, "y", 4 * N, dtype="float32")
        p.bind("x", x)
        p.bind("y", y)
        return p

    def churn(self, addresses, rounds=20):
        """Allocates and fills tensors the size of the temporaries; none may
        land on a temporary's memory.  Returns them, to check later."""
        torch = self.torch
        others = []
        for r in range(rounds):
            t = torch.full((N,), float(r + 1000), device="cuda")
            self.assertNotIn(t.data_ptr(), addresses)
            others.append((t, float(r + 1000)))
        return others

    def check(self, x, y, others):
        torch = self.torch
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(y, (x * 3 + 1) * 2))
        for t, value in others:
            self.assertTrue(bool((t == value).all()), "a tensor was overwritten by a replay")

    def test_own_graph_temporaries(self):
        torch = self.torch
        x = torch.rand(N, device="cuda")
        y = torch.zeros(N, device="cuda")
        addresses = set()
        p = self.producer(x, y, addresses)
        p.run(torch.cuda.current_stream(), tx.Policy.REPLAY)
        self.assertEqual(len(addresses), 2)
        torch.cuda.empty_cache()  # free what torch caches: the pool keeps its own
        others = []
        for r in range(10):
            others += self.churn(addresses)
            x.copy_(torch.rand(N, device="cuda"))
            p.run(torch.cuda.current_stream(), tx.Policy.REPLAY)
            self.check(x, y, others)
        self.assertEqual(p.runner.stats.n_captures, 1)
        p.close()

    def test_recorded_temporaries(self):
        torch = self.torch
        x = torch.rand(N, device="cuda")
        y = torch.zeros(N, device="cuda")
        addresses = set()
        p = self.producer(x, y, addresses)
        g = torch.cuda.CUDAGraph()
        with self.interop.graph(g):
            p.run()
        p.close()
        torch.cuda.empty_cache()
        others = []
        for r in range(10):
            others += self.churn(addresses)
            x.copy_(torch.rand(N, device="cuda"))
            g.replay()
            self.check(x, y, others)
        del g


if __name__ == "__main__":
    sys.exit(tap.main())
