# SPDX-License-Identifier: Apache-2.0
"""capture_if, capture_while and capture_switch (track_gen.exec): device-side
control flow for torch code, with no producer to build.  Each is run eagerly
and recorded into torch.cuda.graph in every capture mode (global,
thread_local, relaxed), the replays bit-identical to the eager runs: a
branch taken and skipped, an else branch, loop exit reasons (the flag
cleared, the cap reached, skipped), a switch out of range running nothing,
nesting, a stage's own call; a callable's exception propagates unchanged and
torch's capture goes on; the stream rule and stream=; threads; nothing kept.
The refusals made before anything runs are in test_flow_hostile.py."""
import gc
import subprocess
import sys
import time
import unittest
import weakref

import tap
import tgtest
from track_gen import exec as tx

MODES = ("global", "thread_local", "relaxed")


def noop():
    pass


def mix(t, k):
    """In place, exact integer arithmetic with a temporary: the same bits
    eagerly and replayed."""
    t.copy_(((t * 0x9E37 + (t >> 7)) ^ k) & 0xFFFFFFFF)


class FlowCase(tgtest.GpuCase):
    """Makes this thread's producers before counting live objects: they are
    made on first use and kept for the thread, not leaked."""

    def setUp(self):
        torch = tgtest.require_gpu()
        self.flag = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.index = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.go = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.buf = torch.zeros(16, dtype=torch.int64, device="cuda")
        tx.capture_if(self.flag, noop)
        tx.capture_while(self.go, noop, max_iters=1)
        tx.capture_switch(self.index, [noop])
        torch.cuda.synchronize()
        super().setUp()

    def both_ways(self, build, set_up, result, runs):
        """Runs build() eagerly, then records it into torch.cuda.graph in each
        capture mode and replays it: set_up(i) before run i, result(i, how)
        after it (it checks the run and returns a CPU tensor); every replay's
        result equals the eager run's, bit for bit."""
        torch = self.torch
        eager = []
        for i in range(runs):
            set_up(i)
            build()
            torch.cuda.synchronize()
            eager.append(result(i, "eager"))
        for mode in MODES:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, capture_error_mode=mode):
                build()
            for i in range(runs):
                set_up(i)
                g.replay()
                torch.cuda.synchronize()
                self.assertTrue(torch.equal(result(i, mode), eager[i]), (mode, i))
            del g


class Branches(FlowCase):
    def test_if(self):
        def set_up(i):
            self.flag.fill_(i % 2)
            self.buf.zero_()

        def result(i, how):
            got = self.buf.cpu()
            self.assertEqual(got[:8].tolist(), [3 if i % 2 else 0] * 8, how)
            return got

        self.both_ways(lambda: tx.capture_if(self.flag, lambda: self.buf[:8].add_(3)),
                       set_up, result, 4)

    def test_if_else(self):
        torch = self.torch
        start = torch.arange(16, dtype=torch.int64)

        def set_up(i):
            self.flag.fill_(i % 2)
            self.buf.copy_(start * (i + 1))

        def result(i, how):
            want = start * (i + 1)
            mix(want, 3 if i % 2 else 5)
            got = self.buf.cpu()
            self.assertTrue(torch.equal(got, want), how)
            return got

        self.both_ways(lambda: tx.capture_if(self.flag, lambda: mix(self.buf, 3),
                                             lambda: mix(self.buf, 5)),
                       set_up, result, 4)

    def test_else_alone_and_kwargs(self):
        # Warp's forms: on_true None runs nothing; keywords go to the bodies.
        def set_up(i):
            self.flag.fill_(i % 2)
            self.buf.zero_()

        def result(i, how):
            got = self.buf.cpu()
            self.assertEqual(int(got[0]), 0 if i % 2 else 7, how)
            return got

        self.both_ways(lambda: tx.capture_if(self.flag, None,
                                             lambda amount: self.buf[0].add_(amount),
                                             amount=7),
                       set_up, result, 4)

    def test_switch_out_of_range_runs_nothing(self):
        picks = [0, 2, 1, 3, 7, -1]
        cases = [lambda c=c: self.buf[c].add_(c + 1) for c in range(3)] + [None]

        def set_up(i):
            self.index.fill_(picks[i])
            self.buf.zero_()

        def result(i, how):
            got = self.buf.cpu()
            want = [0] * 16
            if 0 <= picks[i] < 3:
                want[picks[i]] = picks[i] + 1
            self.assertEqual(got.tolist(), want, how)
            return got

        self.both_ways(lambda: tx.capture_switch(self.index, cases), set_up, result,
                       len(picks))


class Loops(FlowCase):
    MAX = 5
    TARGETS = [3, MAX + 4, 0, 1]

    def loop(self, status):
        torch = self.torch
        value = torch.zeros(1, dtype=torch.int32, device="cuda")
        target = torch.zeros(1, dtype=torch.int32, device="cuda")
        seen = {}

        def body():
            value.add_(1)
            self.go.copy_((value < target).to(torch.int32))

        def build():
            seen["status"] = tx.capture_while(self.go, body, max_iters=self.MAX,
                                              status=status)

        def set_up(i):
            value.zero_()
            target.fill_(self.TARGETS[i])
            self.go.fill_(1 if self.TARGETS[i] > 0 else 0)

        def result(i, how):
            t = self.TARGETS[i]
            if status is not None:
                self.assertIs(seen["status"], status)
            it, end = seen["status"].tolist()
            if t == 0:
                self.assertEqual((it, end), (0, tx.LoopEnd.SKIPPED), how)
            elif t <= self.MAX:
                self.assertEqual((it, end), (t, tx.LoopEnd.CONVERGED), how)
            else:
                self.assertEqual((it, end), (self.MAX, tx.LoopEnd.CAPPED), how)
            self.assertEqual(int(value), min(t, self.MAX), how)
            return torch.cat([seen["status"].cpu(), value.cpu()])

        self.both_ways(build, set_up, result, len(self.TARGETS))

    def test_exit_reasons_into_a_given_status(self):
        self.loop(self.torch.zeros(2, dtype=self.torch.int32, device="cuda"))

    def test_exit_reasons_into_a_returned_status(self):
        self.loop(None)


class Nesting(FlowCase):
    def test_nested_calls(self):
        # if > (if/else, and while > switch), each decided on the device.
        torch = self.torch
        inner = torch.zeros(1, dtype=torch.int32, device="cuda")
        count = torch.zeros(1, dtype=torch.int32, device="cuda")
        status = torch.zeros(2, dtype=torch.int32, device="cuda")

        def loop_body():
            tx.capture_switch(self.index, [lambda: self.buf[3].add_(1),
                                           lambda: self.buf[4].add_(10)])
            count.add_(1)
            self.go.copy_((count < 3).to(torch.int32))

        def on_true():
            self.buf[0].add_(1)
            tx.capture_if(inner, lambda: self.buf[1].add_(1), lambda: self.buf[2].add_(1))

        def on_false():
            count.zero_()
            self.go.fill_(1)
            tx.capture_while(self.go, loop_body, max_iters=8, status=status)

        def set_up(i):
            self.flag.fill_(i & 1)
            inner.fill_((i >> 1) & 1)
            self.index.fill_(i % 3)
            self.buf.zero_()

        def result(i, how):
            got = self.buf.cpu().tolist()
            want = [0] * 16
            if i & 1:
                want[0] = 1
                want[1 if (i >> 1) & 1 else 2] = 1
            else:
                if i % 3 < 2:
                    want[3 + i % 3] = 3 * (1, 10)[i % 3]
                self.assertEqual(status.tolist(), [3, tx.LoopEnd.CONVERGED], how)
            self.assertEqual(got, want, how)
            return self.buf.cpu()

        self.both_ways(lambda: tx.capture_if(self.flag, on_true, on_false), set_up,
                       result, 6)

    def test_recursion(self):
        # Four IF nodes, each in the body of the one before.
        def level(k):
            if k == 0:
                self.buf[0].add_(1)
            else:
                self.buf[k].add_(1)
                tx.capture_if(self.flag, lambda: level(k - 1))

        def set_up(i):
            self.flag.fill_(i % 2)
            self.buf.zero_()

        def result(i, how):
            got = self.buf.cpu()
            self.assertEqual(got[:5].tolist(), [i % 2] * 4 + [1], how)
            return got

        self.both_ways(lambda: level(4), set_up, result, 2)

    def test_inside_a_stage(self):
        # A producer's stage calls capture_if: on the stage's stream, under
        # each policy (the call runs a producer of its own, one level deeper).
        torch = self.torch
        p = tx.Producer("calls-capture-if")
        p.add_device_stage("stage", lambda ctx: tx.capture_if(
            self.flag, lambda: self.buf[0].add_(1), lambda: self.buf[1].add_(1)),
            capture_safe=True)
        stream = torch.cuda.current_stream()
        for policy in (tx.Policy.EAGER, tx.Policy.REPLAY):
            for i in range(2):
                self.flag.fill_(i)
                self.buf.zero_()
                p.run(stream, policy)
                torch.cuda.synchronize()
                self.assertEqual(self.buf[:2].tolist(), [i, 1 - i], policy.name)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            p.run()
        for i in range(2):
            self.flag.fill_(i)
            self.buf.zero_()
            g.replay()
            torch.cuda.synchronize()
            self.assertEqual(self.buf[:2].tolist(), [i, 1 - i], "RECORD")
        del g
        p.close()

    def test_torch_cond_inside_a_body(self):
        torch = self.torch
        if tuple(int(x) for x in torch.__version__.split(".")[:2]) < (2, 12):
            self.skipTest("torch %s cannot capture torch.cond" % torch.__version__)
        x = torch.zeros(4, dtype=torch.int64, device="cuda")
        pred = torch.zeros((), dtype=torch.bool, device="cuda")

        def on_true():
            x.copy_(torch.cond(pred, lambda t: t + 1, lambda t: t - 1, (x,)))

        def set_up(i):
            self.flag.fill_(i & 1)
            pred.fill_(bool(i & 2))
            x.zero_()

        def result(i, how):
            want = (1 if i & 2 else -1) if i & 1 else 0
            self.assertEqual(x.tolist(), [want] * 4, how)
            return x.cpu()

        self.both_ways(lambda: tx.capture_if(self.flag, on_true), set_up, result, 4)


class Failures(FlowCase):
    def test_exception_propagates_unchanged(self):
        mine = KeyError("mine")

        def boom():
            raise mine

        self.flag.fill_(1)
        self.index.fill_(0)
        for call in (lambda: tx.capture_if(self.flag, boom),
                     lambda: tx.capture_if(self.flag, boom, noop),
                     lambda: tx.capture_while(self.flag, boom, max_iters=2),
                     lambda: tx.capture_switch(self.index, [boom]),
                     lambda: tx.capture_if(
                         self.flag, lambda: tx.capture_switch(self.index, [boom]))):
            with self.assertRaises(KeyError) as caught:
                call()
            self.assertIs(caught.exception, mine)
            self.assertIsNone(caught.exception.__cause__)
        # And the next call works.
        tx.capture_if(self.flag, lambda: self.buf[0].add_(1))
        self.assertEqual(int(self.buf[0]), 1)

    def test_interrupt_and_nested_refusal_propagate_unchanged(self):
        torch = self.torch
        stop = KeyboardInterrupt()

        def interrupt():
            raise stop

        self.flag.fill_(1)
        with self.assertRaises(KeyboardInterrupt) as caught:
            tx.capture_while(self.flag, interrupt, max_iters=3)
        self.assertIs(caught.exception, stop)
        bad = torch.zeros(1, dtype=torch.uint8, device="cuda")
        with self.assertRaises(tx.ArgumentError) as caught:
            tx.capture_if(self.flag, lambda: tx.capture_if(bad, noop))
        self.assertIn("flag", str(caught.exception))

    def test_refused_inside_a_capture_changes_nothing(self):
        torch = self.torch
        mine = RuntimeError("mine")
        bool_flag = torch.ones(1, dtype=torch.bool, device="cuda")
        x = torch.zeros(4, dtype=torch.int64, device="cuda")

        def boom():
            x.add_(100)
            raise mine

        self.flag.fill_(1)
        for mode in MODES:
            x.zero_()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, capture_error_mode=mode):
                x.add_(1)
                with self.assertRaises(RuntimeError) as caught:
                    tx.capture_if(self.flag, lambda: x.add_(10), boom)
                self.assertIs(caught.exception, mine)
                with self.assertRaises(tx.ArgumentError):
                    tx.capture_if(bool_flag, boom)
                tx.capture_if(self.flag, lambda: x.add_(1000))  # still records
                x.mul_(3)
            self.assertEqual(x.tolist(), [0] * 4, mode)  # captured, not run
            g.replay()
            torch.cuda.synchronize()
            self.assertEqual(x.tolist(), [3003] * 4, mode)
            del g


    def test_raising_in_the_second_pass_loses_the_capture(self):
        # A body that raises only when RECORD calls it again: the call is
        # half recorded, which CaptureError says (in a child: torch's capture
        # is then discarded).
        code = """if True:
            import torch
            from track_gen import exec as tx
            flag = torch.ones(1, dtype=torch.int32, device="cuda")
            calls = []
            def flaky():
                calls.append(1)
                if len(calls) == 2:
                    raise KeyError("second")
            g = torch.cuda.CUDAGraph()
            try:
                with torch.cuda.graph(g):
                    try:
                        tx.capture_if(flag, lambda: None, flaky)
                    except tx.CaptureError as e:
                        print("raised", type(e).__name__, e.code.name,
                              type(e.__cause__).__name__)
            except Exception as e:  # torch's end of a discarded capture
                print("torch:", type(e).__name__)
        """
        child = subprocess.run([sys.executable, "-c", code], capture_output=True,
                               text=True, timeout=120)
        self.assertEqual(child.returncode, 0, child.stdout + child.stderr)
        self.assertIn("raised CaptureError FAILED", child.stdout, child.stderr)


class Streams(FlowCase):
    def test_stream_rule_and_keyword(self):
        torch = self.torch
        side = torch.cuda.Stream()
        seen = []

        def body():
            seen.append(torch.cuda.current_stream().cuda_stream)
            self.buf[0].add_(1)

        self.flag.fill_(1)
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            tx.capture_if(self.flag, body)          # torch's current stream
        tx.capture_if(self.flag, body, stream=side)
        tx.capture_if(self.flag, body, stream=side.cuda_stream)
        side.synchronize()
        self.assertEqual(seen, [side.cuda_stream] * 3)
        self.assertEqual(int(self.buf[0]), 3)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            tx.capture_if(self.flag, lambda: self.buf[0].add_(1),
                          stream=torch.cuda.current_stream())
        g.replay()
        torch.cuda.synchronize()
        self.assertEqual(int(self.buf[0]), 4)
        del g

    def test_registered_capture(self):
        # interop.torch.graph(): the capture registered, g holding what is kept.
        torch = self.torch
        self.flag.fill_(1)
        for mode in MODES:
            self.buf.zero_()
            g = torch.cuda.CUDAGraph()
            with self.interop.graph(g, capture_error_mode=mode):
                tx.capture_if(self.flag, lambda: self.buf[0].add_(1),
                              lambda: self.buf[1].add_(1))
                tx.capture_switch(self.flag, [noop, lambda: self.buf[2].add_(1)])
            g.replay()
            g.replay()
            torch.cuda.synchronize()
            self.assertEqual(self.buf[:3].tolist(), [2, 0, 2], mode)
            del g

    def test_threads(self):
        torch = self.torch

        def work(k):
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                # Made on the stream that uses them: torch's streams do not
                # wait for the default stream.
                flag = torch.zeros(1, dtype=torch.int32, device="cuda")
                buf = torch.zeros(2, dtype=torch.int64, device="cuda")
                for c in range(50):
                    flag.fill_(c % 2)
                    tx.capture_if(flag, lambda: buf[0].add_(k),
                                  lambda: buf[1].add_(1))
                stream.synchronize()
            if buf.tolist() != [25 * k, 25]:
                raise AssertionError("thread %d: %s" % (k, buf.tolist()))

        self.run_threads(work, 4)
        # Each thread's producers went with it (tearDown counts them).


class Exit(unittest.TestCase):
    def test_interpreter_exits_cleanly(self):
        # This thread's producers, and a graph holding recorded calls, still
        # alive at exit.
        tgtest.require_gpu()
        code = """if True:
            import torch
            from track_gen import exec as tx
            flag = torch.ones(1, dtype=torch.int32, device="cuda")
            go = torch.zeros(1, dtype=torch.int32, device="cuda")
            x = torch.zeros(4, device="cuda")
            tx.capture_if(flag, lambda: x.add_(1))
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                tx.capture_if(flag, lambda: x.add_(1), lambda: x.sub_(1))
                status = tx.capture_while(go, lambda: x.add_(1), max_iters=3)
            g.replay()
            torch.cuda.synchronize()
            print(x.tolist(), status.tolist())
        """
        child = subprocess.run([sys.executable, "-c", code], capture_output=True,
                               text=True, timeout=120)
        self.assertEqual(child.returncode, 0, child.stdout + child.stderr)
        self.assertIn("[2.0, 2.0, 2.0, 2.0] [0, %d]" % tx.LoopEnd.SKIPPED, child.stdout)


class Body:
    """A callable whose life a weak reference watches."""

    def __init__(self, buf):
        self.buf = buf

    def __call__(self):
        self.buf[0].add_(1)


class References(FlowCase):
    def test_nothing_kept(self):
        torch = self.torch
        body = Body(self.buf)
        status = torch.zeros(2, dtype=torch.int32, device="cuda")
        watched = (body, self.flag, self.go, self.index, status)
        self.flag.fill_(1)
        tx.capture_if(self.flag, body, body)
        torch.cuda.synchronize()
        gc.collect()
        refs = [sys.getrefcount(o) for o in watched]
        n_objects = len(gc.get_objects())
        memory = torch.cuda.memory_allocated()
        for _ in range(300):
            tx.capture_if(self.flag, body, body)
            tx.capture_while(self.go, body, max_iters=2, status=status)
            tx.capture_switch(self.index, [body, body])
        torch.cuda.synchronize()
        gc.collect()
        self.assertEqual([sys.getrefcount(o) for o in watched], refs)
        # A leak of one object a call would be 900 (the collector's own
        # bookkeeping moves by a few).
        self.assertLess(len(gc.get_objects()) - n_objects, 32)
        self.assertEqual(torch.cuda.memory_allocated(), memory)
        self.assertEqual(int(self.buf[0]), 601)
        # A graph keeps the recorded work, not the callables.
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            tx.capture_if(self.flag, body, body)
        ref = weakref.ref(body)
        del body, watched
        gc.collect()
        self.assertIsNone(ref())
        g.replay()
        torch.cuda.synchronize()
        self.assertEqual(int(self.buf[0]), 602)
        del g

    def test_a_dropped_status_lives_with_the_graph(self):
        # The status capture_while allocated is written at every replay: the
        # graph keeps it, even when the caller drops it.
        torch = self.torch
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            ref = weakref.ref(tx.capture_while(self.go, noop, max_iters=3))
        gc.collect()
        self.assertIsNotNone(ref())
        g.replay()
        torch.cuda.synchronize()
        self.assertEqual(ref().tolist(), [0, tx.LoopEnd.SKIPPED])
        del g
        # Released once the driver ran the graph's destructors (polled, as
        # tgtest.LeakCheck does).
        deadline = time.monotonic() + 10.0
        while ref() is not None and time.monotonic() < deadline:
            tx.release_wait(1.0)
            gc.collect()
            time.sleep(0.001)
        self.assertIsNone(ref())


if __name__ == "__main__":
    sys.exit(tap.main())
