"""track_gen.interop.torch: registering torch.cuda.graph's capture in every
mode, producers and tensors kept by the graph after Python let go, the
reaper releasing a producer inside another torch capture, and an
interpreter that exits with producers still retained by live graphs."""
import gc
import os
import subprocess
import sys
import textwrap
import time
import unittest

import tap
import tgtest
from track_gen import exec as tx

ROUNDS = 100


class Interop(tgtest.GpuCase):
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
                for param, k in [(1, 2), (3, 4)]:
                    chain.set_inputs(param, k)
                    g.replay()
                    self.assertTrue(torch.equal(chain.result(), tgtest.expected(param, k)))
                del g
                self.assertTrue(tx.release_wait(10.0))
                self.assertEqual(tx.live_objects().producers, before)

    def test_bound_tensors_live_as_long_as_the_graph(self):
        torch = self.torch
        import weakref
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

    def test_registered_outside_a_capture_is_refused(self):
        with self.assertRaises(tx.StateError):
            with self.interop.registered():
                pass
        with self.assertRaises(ValueError):
            with self.interop.registered("sideways"):
                pass

    def test_reaper_releases_inside_another_capture(self):
        torch = self.torch
        x = torch.zeros(1024, device="cuda")

        class SlowRelease:
            """Drops its producer a moment after the graph let it go: while
            the next capture is in progress, on TrackGen's reaper thread."""

            def __init__(self, producer):
                self.producer = producer

            def __del__(self):
                time.sleep(0.02)
                self.producer.close()

        for round_ in range(ROUNDS):
            chain = tgtest.Chain("reaped")
            chain.producer.run(torch.cuda.current_stream(), tx.Policy.EAGER)  # own buffers
            g1 = torch.cuda.CUDAGraph()
            with self.interop.graph(g1):
                chain.producer.run()
                self.interop.retain(SlowRelease(chain.producer))
            chain.producer = None
            g2 = torch.cuda.CUDAGraph()
            del g1  # the reaper now releases, during g2's global capture
            with torch.cuda.graph(g2):
                for _ in range(20):
                    x.add_(1)
                time.sleep(0.05)
                x.add_(1)
            g2.replay()
            torch.cuda.synchronize()
            self.assertEqual(float(x[0]), 21.0)
            x.zero_()
            del g2
        self.assertTrue(tx.release_wait(10.0))

    def test_exit_with_retained_producers(self):
        script = textwrap.dedent("""
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
        here = os.path.dirname(os.path.abspath(__file__))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [here] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        run = subprocess.run([sys.executable, "-c", script], capture_output=True,
                             text=True, timeout=120, env=env)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.strip(), "ok")
        self.assertNotIn("Fatal", run.stderr)
        self.assertNotIn("CRITICAL", run.stderr)


class Retained(unittest.TestCase):
    """The native half of a graph owner's retention (tg_retained_new)."""

    def test_none_needs_a_registered_capture(self):
        with self.assertRaisesRegex(ValueError, "^stream: None names the capture"):
            tx._native.retained_new(None)


if __name__ == "__main__":
    sys.exit(tap.main())
