# SPDX-License-Identifier: Apache-2.0
"""The same producer of torch stages, bit-identical eagerly, replayed from its
own graph, and recorded into a torch.cuda.graph in each capture mode; and
what a refused or failing call leaves behind.  GPU cases skip without torch
or a device."""
import sys
import unittest

import tap
import tgtest
from track_gen import exec as tx

MODES = ("global", "thread_local", "relaxed")
INPUTS = [(3, 5), (11, 2), (12345, 77), (0, 0)]


class Policies(tgtest.GpuCase):
    def test_eager_replay_record_bit_identical(self):
        torch = self.torch
        chain = tgtest.Chain()
        stream = torch.cuda.current_stream()
        for param, k in INPUTS:
            chain.set_inputs(param, k)
            chain.producer.run(stream, tx.Policy.EAGER)
            eager = chain.result()
            self.assertTrue(torch.equal(eager, tgtest.expected(param, k)))
            chain.producer.run(stream)  # AUTO: REPLAY
            self.assertTrue(torch.equal(chain.result(), eager))
        stats = chain.producer.runner.stats
        self.assertEqual(stats.n_captures, 1)
        self.assertEqual(stats.n_replays, len(INPUTS))
        self.assertEqual(tx.resolve(chain.producer, stream)[0], tx.Policy.REPLAY)
        for mode in MODES:
            with self.subTest(mode=mode):
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g, capture_error_mode=mode):
                    with self.interop.registered(mode):
                        self.assertEqual(tx.resolve(chain.producer)[0], tx.Policy.RECORD)
                        chain.producer.run()
                for param, k in INPUTS:
                    chain.set_inputs(param, k)
                    g.replay()
                    self.assertTrue(torch.equal(chain.result(), tgtest.expected(param, k)))
                del g
        chain.producer.close()

    def test_stage_called_once_per_policy(self):
        torch = self.torch
        chain = tgtest.Chain()
        stream = torch.cuda.current_stream()
        chain.producer.run(stream, tx.Policy.EAGER)
        self.assertEqual(chain.calls["seed"], 1)
        chain.producer.run(stream, tx.Policy.REPLAY)
        chain.producer.run(stream, tx.Policy.REPLAY)
        self.assertEqual(chain.calls["seed"], 2)  # captured once, replayed twice
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            chain.producer.run(torch.cuda.current_stream(), tx.Policy.RECORD)
        self.assertEqual(chain.calls["seed"], 3)
        g.replay()
        self.assertEqual(chain.calls["seed"], 3)
        del g
        chain.producer.close()

    def test_refused_record_leaves_torch_capture_intact(self):
        torch = self.torch
        chain = tgtest.Chain(capture_safe=False)
        x = torch.zeros(16, device="cuda")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            x.add_(1)
            state, _id, graph = tx._native.capture_info(torch.cuda.current_stream())
            before = tx._native._graph_n_nodes(graph)
            with self.assertRaises(tx.NotCapturableError) as caught:
                chain.producer.run(torch.cuda.current_stream())
            self.assertEqual(caught.exception.stage, "seed")
            self.assertEqual(tx._native._graph_n_nodes(graph), before)
            self.assertEqual(tx.capture_state(torch.cuda.current_stream())[0],
                             tx.CaptureState.ACTIVE)
            x.add_(1)
        g.replay()
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(x.cpu(), torch.full((16,), 2.0)))  # one replay
        self.assertEqual(chain.calls["seed"], 0)
        del g
        chain.producer.close()

    def test_stage_exception_is_the_cause(self):
        torch = self.torch
        p = tx.Producer("raises")

        class Boom(Exception):
            pass

        def stage(ctx):
            raise Boom("no track today")

        p.add_device_stage("boom", stage, capture_safe=True)
        for policy in (tx.Policy.EAGER, tx.Policy.REPLAY):
            with self.subTest(policy=policy.name):
                with self.assertRaises(tx.StageError) as caught:
                    p.run(torch.cuda.current_stream(), policy)
                self.assertIsInstance(caught.exception.__cause__, Boom)
                self.assertEqual(caught.exception.stage, "boom")
                self.assertEqual(caught.exception.producer, "raises")
                self.assertIn("no track today", str(caught.exception))
        # Recorded: refused before anything reaches torch's capture.
        x = torch.zeros(4, device="cuda")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            x.add_(1)
            with self.assertRaises(tx.TrackGenError) as caught:
                p.run(torch.cuda.current_stream())
            self.assertIsInstance(caught.exception.__cause__, Boom)
            x.add_(1)
        g.replay()
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(x.cpu(), torch.full((4,), 2.0)))  # one replay
        del g
        p.close()

    def test_policy_refusals(self):
        torch = self.torch
        chain = tgtest.Chain()
        with self.assertRaises(tx.StateError):
            chain.producer.run(torch.cuda.current_stream(), tx.Policy.RECORD)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for policy in (tx.Policy.EAGER, tx.Policy.REPLAY):
                with self.assertRaises(tx.StateError):
                    chain.producer.run(torch.cuda.current_stream(), policy)
        del g
        chain.producer.close()


class Arguments(unittest.TestCase):
    """What is refused before any CUDA call: runs everywhere."""

    def test_bad_policy_and_stream(self):
        p = tx.Producer("args")
        with self.assertRaises(ValueError):
            p.run(None, 9)
        with self.assertRaises(TypeError):
            p.run("not a stream")
        p.close()
        with self.assertRaises(ValueError):
            p.run()

    def test_stage_setup_misuse(self):
        p = tx.Producer("setup")
        with self.assertRaises(ValueError):
            p.add_device_stage("", lambda ctx: None)
        with self.assertRaises(TypeError):
            p.add_device_stage("x", 42)
        p.add_device_stage("x", lambda ctx: None)
        with self.assertRaises(ValueError):
            p.add_device_stage("x", lambda ctx: None)
        with self.assertRaises(ValueError):
            p.add_loop_stage("loop", lambda ctx: None, flag="go", status="go", max_iters=4)
        with self.assertRaises(ValueError):
            p.add_loop_stage("loop", lambda ctx: None, flag="go", status="st", max_iters=0)
        with self.assertRaises(ValueError):
            p.add_switch_stage("sw", [], index="i")
        self.assertEqual(p.n_stages, 1)
        p.close()


if __name__ == "__main__":
    sys.exit(tap.main())
