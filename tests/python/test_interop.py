# SPDX-License-Identifier: Apache-2.0
"""track_gen.interop.torch: registering torch.cuda.graph's capture in every
mode, producers and tensors kept by the graph after Python let go, the
reaper releasing a producer inside another torch capture, and an
interpreter that exits cleanly with producers still retained by live graphs
and after a torch capture failed."""
import gc
import math
import os
import subprocess
import sys
import textwrap
import threading
import unittest
import weakref

import tap
import tgtest
from track_gen import exec as tx
from track_gen import interop, seeds

ROUNDS = 100


class Arguments(unittest.TestCase):
    def test_release_wait_timeouts(self):
        for timeout in (None, 0, 0.25, math.inf):
            with self.subTest(timeout=timeout):
                self.assertTrue(tx.release_wait(timeout))  # nothing outstanding
        for timeout in (math.nan, -1, -1.0, -0.5, -math.inf):
            with self.subTest(timeout=timeout):
                with self.assertRaisesRegex(ValueError, "timeout"):
                    tx.release_wait(timeout)
        with self.assertRaises(TypeError):
            tx.release_wait("1")

    def test_retain_capture_needs_a_stream(self):
        # libtrackgen's refusal (tg_stream_get_capture_state()), the argument
        # named as Python passes it.
        with self.assertRaisesRegex(tx.ArgumentError,
                                    "^stream: None is not a stream here"):
            interop.retain_capture(None, object())
        with self.assertRaises(TypeError):
            interop.retain_capture()



class Interop(tgtest.GpuCase):
    def test_relaxed_sections_nest_and_give_the_mode_back(self):
        # interop.warp's scratch() allocates in one (no ctypes door to the
        # driver): each begin returns the mode it replaced, each end the mode
        # it leaves, and the thread's own mode comes back at the end.
        own = tx._native._relaxed_begin()
        relaxed = tx._native._relaxed_begin()
        self.assertEqual(tx._native._relaxed_end(relaxed), relaxed)
        self.assertEqual(tx._native._relaxed_end(own), relaxed)
        self.assertEqual(tx._native._relaxed_begin(), own)
        tx._native._relaxed_end(own)
        with self.assertRaises(ValueError):
            tx._native._relaxed_end(-1)

    def test_registered_retains_the_producer(self):
        torch = self.torch
        for mode in ("global", "thread_local", "relaxed"):
            with self.subTest(mode=mode):
                before = tx.live_objects().producers
                chain = tgtest.Chain("retained")
                g = torch.cuda.CUDAGraph()
                with self.interop.graph(g, capture_error_mode=mode) as scope:
                    self.assertTrue(tx._native.is_registered(None))
                    self.assertIsNotNone(scope.capture_id)
                    chain.producer.run()
                self.assertFalse(tx._native.is_registered(None))
                chain.producer.close()  # the graph keeps the C producer
                self.assertEqual(tx.live_objects().producers, before + 1)
                tgtest.check_replays(self, g, chain)
                del g
                self.assertTrue(tx.release_wait(10.0))
                self.assertEqual(tx.live_objects().producers, before)

    def test_the_torch_graph_holds_what_it_keeps(self):
        # interop.torch.graph(g): what the graph keeps (the producer, its
        # stages' memory pools) is held by g, not by a CUDA user object in
        # the graph (whose launches would pay for it); g deleted right after
        # a replay, its references are released only once that replay ran.
        torch = self.torch
        before = tx.live_objects()
        chain = tgtest.Chain("owned")
        chain.producer.add_device_stage(
            "sleep", lambda ctx: torch.cuda._sleep(1_000_000_000), capture_safe=True)
        g = torch.cuda.CUDAGraph()
        with self.interop.graph(g):
            chain.producer.run()
        self.assertEqual(tx.live_objects().user_objects, before.user_objects)
        chain.producer.close()  # g keeps the C producer
        self.assertEqual(tx.live_objects().producers, before.producers + 1)
        chain.set_inputs(5, 6)
        g.replay()  # about 0.5 s on the GPU: gc.collect() below may take 0.1 s
        del g
        gc.collect()
        # The replay still runs: its producer is decided to go, not gone.
        self.assertFalse(tx.release_wait(0.0))
        self.assertEqual(tx.live_objects().producers, before.producers + 1)
        self.assertTrue(torch.equal(chain.result(), tgtest.expected(5, 6)))
        self.assertTrue(tx.release_wait(10.0))
        self.assertEqual(tx.live_objects().producers, before.producers)

    def test_bound_tensors_live_as_long_as_the_graph(self):
        torch = self.torch
        chain = tgtest.Chain("bound")
        b_ref = weakref.ref(chain.b)
        g = torch.cuda.CUDAGraph()
        with self.interop.graph(g):
            chain.producer.run()
        chain.producer.close()
        b = chain.b
        del chain.b, chain.a
        gc.collect()
        self.assertIsNotNone(b_ref())  # held by the retained producer
        chain.set_inputs(5, 6)
        g.replay()
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(b.cpu(), tgtest.expected(5, 6)))
        del b, g
        self.assertTrue(tx.release_wait(10.0))
        gc.collect()
        self.assertIsNone(b_ref())

    def test_retain_capture_ties_objects_to_the_graph(self):
        torch = self.torch

        class Held:
            pass

        held, state = Held(), seeds.SeedState(8)
        chain = tgtest.Chain("held")
        ref = weakref.ref(held)  # a SeedState is kept through its C object
        stream = torch.cuda.current_stream()
        with self.assertRaises(tx.StateError) as outside:
            interop.retain_capture(stream, held)
        self.assertEqual(outside.exception.domain, "tg-state-error-quark")
        before = tx.live_objects().producers
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            interop.retain_capture(torch.cuda.current_stream(), held, state,
                                   chain.producer)
        chain.producer.close()
        del held, state
        gc.collect()
        self.assertIsNotNone(ref())
        self.assertEqual(tx.live_objects().producers, before)  # the graph holds it
        del g
        self.assertTrue(tx.release_wait(10.0))
        gc.collect()
        self.assertIsNone(ref())
        self.assertEqual(tx.live_objects().producers, before - 1)

    def test_registered_outside_a_capture_is_refused(self):
        with self.assertRaises(tx.StateError):
            with self.interop.registered():
                pass
        with self.assertRaises(ValueError):
            with self.interop.registered("sideways"):
                pass

    def test_conditional_chain_replays_match_eager(self):
        torch = self.torch
        chain, reference = tgtest.Chain("recorded"), tgtest.Chain("reference")
        flag = torch.zeros(1, dtype=torch.int32, device="cuda")
        stream = torch.cuda.current_stream()
        g = torch.cuda.CUDAGraph()
        with self.interop.graph(g):
            chain.param.add_(1)  # torch's work, recorded before TrackGen's
            chain.producer.run(condition=tx.conditional(flag))
        torch.manual_seed(0)

        def replays(first, count):
            """Replays with the flag and k changed by torch ops, each checked
            against an eager run of the reference on the same inputs."""
            for i in range(first, first + count):
                chain.b.zero_()
                reference.b.zero_()
                flag.fill_(1 if i % 3 else 0)
                chain.k.copy_(torch.randint(0, 1000, (1,), device="cuda"))
                g.replay()
                reference.param.copy_(chain.param)  # incremented by the graph
                reference.k.copy_(chain.k)
                reference.producer.run(stream, tx.Policy.EAGER, tx.conditional(flag))
                self.assertTrue(torch.equal(chain.result(), reference.result()), i)
                self.assertEqual(bool(chain.b.any()), i % 3 != 0, i)

        replays(0, 50)
        chain.producer.close()  # the graph keeps the producer
        replays(50, 50)
        reference.producer.close()
        del g

    def hold_reaper(self):
        """Makes TrackGen's reaper thread wait at a gate: a graph of its own
        retains an object whose release waits until the returned event is
        set, so releases queued meanwhile happen exactly then, in order.
        Call it outside any capture; returns once the reaper waits."""
        torch = self.torch
        held, opened = threading.Event(), threading.Event()

        class Gate:
            def __del__(self):
                held.set()
                opened.wait(10.0)

        x = torch.zeros(1, device="cuda")
        g0 = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g0):
            x.add_(1)
            self.interop.retain(Gate())
        del g0
        self.assertTrue(held.wait(10.0), "the reaper did not reach the gate")
        return opened

    def test_reaper_releases_inside_another_capture(self):
        # A loaded producer (a pinned readback buffer, an own graph, streams)
        # freed by the reaper while a global torch capture is in progress on
        # this thread: that capture must end valid, replay, and be right.
        torch = self.torch
        stream = torch.cuda.current_stream()
        flag = torch.ones(1, dtype=torch.int32, device="cuda")
        second = tgtest.Chain("second")
        for round_ in range(ROUNDS):
            first = tgtest.Chain("reaped")
            first.producer.run(stream, tx.Policy.EAGER, tx.conditional(flag))
            first.producer.run(stream)  # REPLAY
            g1 = torch.cuda.CUDAGraph()
            with self.interop.graph(g1):
                first.producer.run()
            first.producer.close()  # g1 alone holds it
            g1.replay()
            torch.cuda.synchronize()
            opened = self.hold_reaper()
            producers = tx.live_objects().producers
            del g1  # its release queues behind the gate
            g2 = torch.cuda.CUDAGraph()
            with self.interop.graph(g2):  # capture_error_mode="global"
                opened.set()
                # A host wait: the reaper frees the producer now, in the capture.
                released = tx.release_wait(10.0)
                freed = tx.live_objects().producers == producers - 1
                second.param.add_(1)  # raises if the capture was invalidated
                second.producer.run()
            self.assertTrue(released and freed, "round %d" % round_)
            second.b.zero_()
            g2.replay()
            param, k = int(second.param), int(second.k)
            self.assertTrue(torch.equal(second.result(), tgtest.expected(param, k)))
            del g2
        second.producer.close()
        self.assertTrue(tx.release_wait(10.0))

    def run_script(self, script):
        """Runs *script* in a fresh interpreter that imports tgtest; checks
        that it printed "ok" and exited 0 with nothing on stderr but Python
        warnings.  Returns the run."""
        here = os.path.dirname(os.path.abspath(__file__))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [here] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        run = subprocess.run([sys.executable, "-c", textwrap.dedent(script)],
                             capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.strip().splitlines()[-1:], ["ok"], run.stdout)
        noise = [line for line in run.stderr.splitlines()
                 if line.strip() and "Warning" not in line and not line.startswith("  ")]
        self.assertEqual(noise, [], run.stderr)
        return run

    def test_exit_after_a_failed_torch_capture(self):
        # torch's allocator keeps a failed capture "underway" for good, and
        # destroying a MemPool then aborts: the package's pools (a REPLAY's
        # own graph and a RECORD lease one each) must never be destroyed.
        self.run_script("""
            import torch, tgtest
            from track_gen import exec as tx
            chain = tgtest.Chain("failed")
            chain.producer.run(torch.cuda.current_stream(), tx.Policy.REPLAY)
            g = torch.cuda.CUDAGraph()
            try:
                with torch.cuda.graph(g):
                    chain.producer.run()
                    torch.cuda.synchronize()  # illegal in a capture: it fails
            except RuntimeError:
                pass
            else:
                raise SystemExit("the capture did not fail")
            chain.producer.close()
            del g
            print("ok", flush=True)
        """)

    def test_exit_with_retained_producers(self):
        self.run_script("""
            import torch, tgtest
            from track_gen.interop import torch as interop_torch
            graphs = []
            for i in range(4):
                chain = tgtest.Chain("exit%d" % i)
                g = torch.cuda.CUDAGraph()
                with interop_torch.graph(g):
                    chain.producer.run()
                chain.producer.close()
                g.replay()
                graphs.append(g)
            torch.cuda.synchronize()
            print("ok", flush=True)
        """)


class Retained(unittest.TestCase):
    """The native half of a graph owner's retention (tg_retained_new)."""

    def test_none_needs_a_registered_capture(self):
        with self.assertRaisesRegex(tx.ArgumentError,
                                    "^stream: None names the stream of a capture"):
            tx._native.retained_new(None)


if __name__ == "__main__":
    sys.exit(tap.main())
