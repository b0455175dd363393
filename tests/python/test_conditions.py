# SPDX-License-Identifier: Apache-2.0
"""Device-side decisions from Python: a call's condition skipped on the device,
a guarded stage with an else branch, a switch, bounded loops (cap and exit
reason), and the same inside a stage (ctx.if_, ctx.switch, ctx.while_), each
bit-identical eagerly, replayed and recorded into a torch.cuda.graph, with
the flags changed on the device between replays."""
import sys

import tap
import tgtest
from track_gen import exec as tx


class Conditions(tgtest.GpuCase):
    def setUp(self):
        super().setUp()
        torch = self.torch
        self.flag = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.index = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.value = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.target = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.go = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.status = torch.zeros(2, dtype=torch.int32, device="cuda")
        self.buf = torch.zeros(64, dtype=torch.int64, device="cuda")

    def policies(self, producer, set_up, check, runs, condition=None):
        """Runs @producer under EAGER, REPLAY and RECORD (a torch graph replayed),
        calling set_up(i) before and check(i) after run i."""
        torch = self.torch
        stream = torch.cuda.current_stream()
        for policy in (tx.Policy.EAGER, tx.Policy.REPLAY):
            for i in range(runs):
                set_up(i)
                producer.run(stream, policy, condition)
                torch.cuda.synchronize()
                check(i, policy.name)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            producer.run(torch.cuda.current_stream(), tx.Policy.RECORD, condition)
        for i in range(runs):
            set_up(i)
            g.replay()
            torch.cuda.synchronize()
            check(i, "RECORD")
        del g

    def test_call_skipped_on_the_device(self):
        p = tx.Producer("guarded")
        p.add_device_stage("add", lambda ctx: self.buf.add_(1), capture_safe=True)
        state = {"before": 0}

        def set_up(i):
            self.flag.fill_(i % 2)
            state["before"] = int(self.buf[0])

        def check(i, how):
            self.assertEqual(int(self.buf[0]) - state["before"], i % 2, how)

        self.policies(p, set_up, check, 4, tx.conditional(self.flag))
        p.close()

    def test_stage_with_an_else_branch(self):
        p = tx.Producer("if-else")
        s = p.add_device_stage("then", lambda ctx: self.buf[:8].add_(3),
                               capture_safe=True)
        p.set_stage_condition(s, "flag")
        p.set_stage_else(s, lambda ctx: self.buf[8:16].add_(5))
        p.bind("flag", self.flag)
        seen = {}

        def set_up(i):
            self.flag.fill_(i % 2)
            seen["b"] = self.buf.clone()

        def check(i, how):
            d = (self.buf - seen["b"]).cpu()
            self.assertEqual(int(d[0]), 3 if i % 2 else 0, how)
            self.assertEqual(int(d[8]), 0 if i % 2 else 5, how)

        self.policies(p, set_up, check, 4)
        p.close()

    def test_empty_else_branch(self):
        p = tx.Producer("empty-else")
        s = p.add_device_stage("then", lambda ctx: self.buf[:8].add_(3),
                               capture_safe=True)
        p.set_stage_condition(s, "flag")
        p.set_stage_else(s, lambda ctx: None)  # launches nothing
        p.bind("flag", self.flag)
        seen = {}

        def set_up(i):
            self.flag.fill_(i % 2)
            seen["b"] = self.buf.clone()

        def check(i, how):
            self.assertEqual(int((self.buf - seen["b"])[0]), 3 if i % 2 else 0, how)

        self.policies(p, set_up, check, 4)
        p.close()

    def test_switch_stage(self):
        p = tx.Producer("switch")
        cases = [lambda ctx, c=c: self.buf[c].add_(c + 1) for c in range(3)]
        p.add_switch_stage("pick", cases, index="index", capture_safe=True)
        p.bind("index", self.index)
        seen = {}
        picks = [0, 2, 1, 7, -1]

        def set_up(i):
            self.index.fill_(picks[i])
            seen["b"] = self.buf.clone()

        def check(i, how):
            d = (self.buf - seen["b"]).cpu()
            want = [0, 0, 0]
            if 0 <= picks[i] < 3:
                want[picks[i]] = picks[i] + 1
            self.assertEqual(d[:3].tolist(), want, how)

        self.policies(p, set_up, check, len(picks))
        p.close()

    def test_loop_stage_cap_and_exit(self):
        max_iters = 5
        p = tx.Producer("loop")

        def body(ctx):
            v, go = ctx.binding("value"), ctx.binding("go")
            v.add_(1)
            go.copy_((v < self.target).to(self.torch.int32))

        p.add_loop_stage("relax", body, flag="go", status="status", max_iters=max_iters,
                         capture_safe=True)
        p.bind("go", self.go)
        p.bind("status", self.status)
        p.bind("value", self.value)
        p.declare_binding(0, "value", 4)
        targets = [3, max_iters + 4, 0, 1]

        def set_up(i):
            self.value.zero_()
            self.target.fill_(targets[i])
            self.go.fill_(1 if targets[i] > 0 else 0)

        def check(i, how):
            it, end = self.status.tolist()
            t = targets[i]
            if t == 0:
                self.assertEqual((it, end), (0, tx.LoopEnd.SKIPPED), how)
            elif t <= max_iters:
                self.assertEqual((it, end), (t, tx.LoopEnd.CONVERGED), how)
            else:
                self.assertEqual((it, end), (max_iters, tx.LoopEnd.CAPPED), how)
            self.assertEqual(int(self.value), min(t, max_iters), how)

        self.policies(p, set_up, check, len(targets))
        p.close()

    def test_conditions_inside_a_stage(self):
        torch = self.torch
        loop_flag = torch.zeros(1, dtype=torch.int32, device="cuda")
        loop_status = torch.zeros(2, dtype=torch.int32, device="cuda")
        counter = torch.zeros(1, dtype=torch.int32, device="cuda")
        p = tx.Producer("inside")

        def stage(ctx):
            ctx.if_(tx.conditional(self.flag), lambda c: self.buf[0].add_(1),
                    lambda c: self.buf[1].add_(1))
            ctx.switch(self.index, [lambda c: self.buf[2].add_(1),
                                    lambda c: self.buf[3].add_(1)])
            counter.zero_()
            loop_flag.fill_(1)

            def body(c):
                counter.add_(1)
                loop_flag.copy_((counter < 4).to(torch.int32))

            ctx.while_(loop_flag, 10, loop_status, body)

        p.add_device_stage("all", stage, capture_safe=True)
        seen = {}

        def set_up(i):
            self.flag.fill_(i % 2)
            self.index.fill_(i % 3)
            seen["b"] = self.buf.clone()

        def check(i, how):
            d = (self.buf - seen["b"]).cpu().tolist()
            self.assertEqual(d[0:2], [1, 0] if i % 2 else [0, 1], how)
            want = [0, 0]
            if i % 3 < 2:
                want[i % 3] = 1
            self.assertEqual(d[2:4], want, how)
            self.assertEqual(loop_status.tolist(), [4, tx.LoopEnd.CONVERGED], how)

        self.policies(p, set_up, check, 6)
        p.close()

    def test_large_switch_replays(self):
        n = 100  # more than the 64 cases 0.2 could capture
        p = tx.Producer("many-cases")
        cases = [lambda ctx, c=c: self.buf[c % 64].add_(c) for c in range(n)]
        p.add_switch_stage("pick", cases, index="index", capture_safe=True)
        p.bind("index", self.index)
        self.assertEqual(tx.resolve(p, self.torch.cuda.current_stream())[0],
                         tx.Policy.REPLAY)
        seen = {}
        picks = [0, 99, 64, 100]

        def set_up(i):
            self.index.fill_(picks[i])
            seen["b"] = self.buf.clone()

        def check(i, how):
            d = (self.buf - seen["b"]).cpu()
            c = picks[i]
            self.assertEqual(int(d.sum()), c if c < n else 0, how)

        self.policies(p, set_up, check, len(picks))
        p.close()


class BrokenBodies(tgtest.GpuCase):
    """A body that breaks its capture (a synchronize inside it, the error
    swallowed) is a NotCapturableError naming the stage under REPLAY and
    RECORD, in every shape; the process lives, torch's capture stays valid,
    and the next call of the same producer works (issue 26 item 2)."""

    def setUp(self):
        super().setUp()
        torch = self.torch
        self.one = torch.ones(1, dtype=torch.int32, device="cuda")
        self.zero = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.go = torch.ones(1, dtype=torch.int32, device="cuda")
        self.status = torch.zeros(2, dtype=torch.int32, device="cuda")
        self.count = torch.zeros(1, dtype=torch.int64, device="cuda")
        self.breaking = True

    def breaker(self, ctx):
        self.count.add_(1)
        if self.breaking:
            try:
                self.torch.cuda.current_stream().synchronize()
            except RuntimeError:
                pass

    def shapes(self):
        count = lambda ctx: self.count.add_(1)
        return {
            "if": lambda ctx: ctx.if_(self.one, self.breaker),
            "else": lambda ctx: ctx.if_(self.zero, count, self.breaker),
            "switch": lambda ctx: ctx.switch(self.one, [count, self.breaker]),
            "while": lambda ctx: ctx.while_(self.go, 3, self.status, self.breaker),
            "nested": lambda ctx: ctx.if_(
                self.one, lambda inner: inner.if_(self.one, self.breaker)),
        }

    def test_refused_then_works(self):
        torch = self.torch
        for name, shape in self.shapes().items():
            runs = 3 if name == "while" else 1
            for policy in (tx.Policy.REPLAY, tx.Policy.RECORD):
                with self.subTest(shape=name, policy=policy.name):
                    p = tx.Producer("broken")
                    p.add_device_stage("outer", shape, capture_safe=True)
                    self.breaking = True
                    if policy == tx.Policy.REPLAY:
                        with self.assertRaises(tx.NotCapturableError) as cm:
                            p.run(None, policy)
                    else:
                        g = torch.cuda.CUDAGraph()
                        with self.assertRaises(tx.NotCapturableError) as cm:
                            with torch.cuda.graph(g):
                                p.run(None, policy)
                        del g
                    self.assertEqual(cm.exception.stage, "outer")
                    self.breaking = False
                    before = int(self.count)
                    if policy == tx.Policy.REPLAY:
                        p.run(None, policy)
                    else:
                        g = torch.cuda.CUDAGraph()
                        with torch.cuda.graph(g):
                            p.run(None, policy)
                        g.replay()
                    torch.cuda.synchronize()
                    self.assertEqual(int(self.count) - before, runs)
                    p.close()


if __name__ == "__main__":
    sys.exit(tap.main())
