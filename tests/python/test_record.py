# SPDX-License-Identifier: Apache-2.0
"""How often RECORD calls each stage function, from Python: once per call in
every shape (a call's condition, a guarded stage with an else branch, a
switch, a loop, a HOST stage beside a guarded stage), twice only for a stage
whose own work holds a condition (ctx.if_, ctx.switch, ctx.while_) (every
stage, in a producer without conditions of TrackGen's), and
``LaunchContext.record_pass`` says which pass runs.  The torch graph holding
the call then runs each function's work where the shape says."""
import sys

import tap
import tgtest
from track_gen import exec as tx


class RecordPasses(tgtest.GpuCase):
    def setUp(self):
        super().setUp()
        torch = self.torch
        self.flag = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.index = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.go = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.status = torch.zeros(2, dtype=torch.int32, device="cuda")
        self.count = torch.zeros(16, dtype=torch.int64, device="cuda")
        self.calls = {}
        self.passes = {}

    def stage(self, name, slot, then=None):
        """A stage function that counts its calls (and their passes) on the
        host and its work's runs in count[slot] on the device."""
        def func(ctx):
            self.calls[name] = self.calls.get(name, 0) + 1
            self.passes.setdefault(name, []).append(ctx.record_pass)
            self.count[slot].add_(1)
            if then is not None:
                then(ctx)
        return func

    def record(self, p, condition=None):
        torch = self.torch
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            p.run(torch.cuda.current_stream(), tx.Policy.RECORD, condition)
        return g

    def replay(self, g, on):
        """One replay with the inputs on (flag 1, index 1) or off (flag 0,
        index out of range); the counts it added."""
        before = self.count.clone()
        self.flag.fill_(1 if on else 0)
        self.index.fill_(1 if on else 7)
        g.replay()
        self.torch.cuda.synchronize()
        return [int(x) for x in (self.count - before).cpu()]

    def check(self, p, condition, once, twice, launches):
        """Records @p, checks the calls (@once: called in the trial only;
        @twice: in both passes), then replays with the inputs on and off and
        compares the counts with launches[on]."""
        g = self.record(p, condition)
        for name in once:
            self.assertEqual(self.calls.get(name), 1, name)
            self.assertEqual(self.passes[name], [1], name)
        for name in twice:
            self.assertEqual(self.calls.get(name), 2, name)
            self.assertEqual(self.passes[name], [1, 2], name)
        self.assertEqual(sorted(self.calls), sorted(once + twice))
        for on in (True, False, True):
            want = [0] * 16
            for slot, n in launches[on].items():
                want[slot] = n
            self.assertEqual(self.replay(g, on), want, "inputs on" if on else "off")
        del g
        p.close()

    def test_plain(self):
        p = tx.Producer("plain")
        p.add_device_stage("a", self.stage("a", 0), capture_safe=True)
        self.check(p, None, ["a"], [], {True: {0: 1}, False: {0: 1}})

    def test_call_condition(self):
        p = tx.Producer("call-condition")
        p.add_device_stage("a", self.stage("a", 0), capture_safe=True)
        p.add_device_stage("b", self.stage("b", 1), capture_safe=True)
        self.check(p, tx.conditional(self.flag), ["a", "b"], [],
                   {True: {0: 1, 1: 1}, False: {}})

    def test_else_branch(self):
        p = tx.Producer("else")
        s = p.add_device_stage("then", self.stage("then", 0), capture_safe=True)
        p.set_stage_condition(s, "flag")
        p.set_stage_else(s, self.stage("else", 1))
        p.bind("flag", self.flag)
        self.check(p, None, ["then", "else"], [], {True: {0: 1}, False: {1: 1}})

    def test_switch(self):
        p = tx.Producer("switch")
        cases = [self.stage("case%d" % c, c) for c in range(3)]
        p.add_switch_stage("pick", cases, index="index", capture_safe=True)
        p.bind("index", self.index)
        self.check(p, None, ["case0", "case1", "case2"], [],
                   {True: {1: 1}, False: {}})

    def test_loop(self):
        p = tx.Producer("loop")
        p.add_device_stage("arm", self.stage("arm", 0, lambda ctx: self.go.fill_(1)),
                           capture_safe=True)
        p.add_loop_stage("body", self.stage("body", 1, lambda ctx: self.go.fill_(0)),
                         flag="go", status="status", max_iters=4, capture_safe=True)
        p.bind("go", self.go)
        p.bind("status", self.status)
        self.check(p, None, ["arm", "body"], [],
                   {True: {0: 1, 1: 1}, False: {0: 1, 1: 1}})

    def test_host_stage_beside_a_guarded_stage(self):
        p = tx.Producer("host")
        runs = []

        def host(ops):
            self.calls["host"] = self.calls.get("host", 0) + 1
            self.passes.setdefault("host", []).append(ops.record_pass)
            ops.enqueue(lambda: runs.append(1))

        p.add_host_stage("host", host, capture_safe=True)
        s = p.add_device_stage("then", self.stage("then", 0), capture_safe=True)
        p.set_stage_condition(s, "flag")
        p.bind("flag", self.flag)
        self.check(p, None, ["host", "then"], [], {True: {0: 1}, False: {}})
        self.assertEqual(len(runs), 3)

    def test_stage_with_its_own_condition(self):
        p = tx.Producer("inner")
        inner = self.stage("inner", 0, lambda ctx: ctx.if_(
            self.flag, lambda c: self.count[1].add_(1)))
        p.add_device_stage("inner", inner, capture_safe=True)
        s = p.add_device_stage("b", self.stage("b", 2), capture_safe=True)
        p.set_stage_condition(s, "flag")
        p.bind("flag", self.flag)
        self.check(p, None, ["b"], ["inner"],
                   {True: {0: 1, 1: 1, 2: 1}, False: {0: 1}})

    def test_producer_without_conditions_of_its_own(self):
        # No condition of TrackGen's: a stage's own ctx.if_ makes the trial
        # one graph that cannot be a child, and the second pass calls every
        # stage again (documented).
        p = tx.Producer("inner-plain")
        p.add_device_stage("a", self.stage("a", 0), capture_safe=True)
        inner = self.stage("inner", 1, lambda ctx: ctx.if_(
            self.flag, lambda c: self.count[2].add_(1)))
        p.add_device_stage("inner", inner, capture_safe=True)
        self.check(p, None, [], ["a", "inner"],
                   {True: {0: 1, 1: 1, 2: 1}, False: {0: 1, 1: 1}})

    def test_passes_outside_record(self):
        p = tx.Producer("passes")
        p.add_device_stage("a", self.stage("a", 0), capture_safe=True)
        for policy in (tx.Policy.EAGER, tx.Policy.REPLAY):
            p.run(self.torch.cuda.current_stream(), policy)
        self.torch.cuda.synchronize()
        self.assertEqual(self.passes["a"], [0, 0])
        p.close()


if __name__ == "__main__":
    sys.exit(tap.main())
