# SPDX-License-Identifier: Apache-2.0
"""Checked mode (track_gen.exec.set_checks, TG_CHECK=1): the switch and its
environment variable, a clear error where CUPTI cannot be loaded (host
only); on a GPU, a torch op on a side stream that is not joined and a Warp
launch without ``stream=`` are refused under REPLAY and RECORD with checks
on, and replay stale results silently with checks off, which proves the
check is what catches them.  With Warp's current stream the caller's
capture: test_checks_warp.py."""
import os
import subprocess
import sys
import unittest

import tap
import tgtest
from track_gen import exec as tx

try:
    import warp as wp
except ImportError:
    wp = None

N = 4096
TIMEOUT = 120  # seconds, for each subprocess


def run_python(code, **env):
    """Runs *code* in a new interpreter with *env* added to the environment;
    returns its stdout, stripped."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=TIMEOUT, env=dict(os.environ, **env))
    if run.returncode != 0:
        raise AssertionError(run.stderr)
    return run.stdout.strip()


class Switch(unittest.TestCase):
    """Host only."""

    def setUp(self):
        self.was = tx.checks_enabled()

    def tearDown(self):
        try:
            tx.set_checks(self.was)
        except tx.StateError:
            pass  # no CUPTI subscription here: it stays off

    def test_round_trip(self):
        tx.set_checks(False)
        self.assertFalse(tx.checks_enabled())
        try:
            tx.set_checks(True)
        except tx.StateError as e:
            # No GPU driver here for CUPTI: a clear error, and the mode off.
            self.assertIn("TG_CUPTI_PATH", str(e))
            self.assertFalse(tx.checks_enabled())
        else:
            self.assertTrue(tx.checks_enabled())
        tx.set_checks(False)
        self.assertFalse(tx.checks_enabled())

    def test_environment(self):
        code = "from track_gen import exec as tx; print(tx.checks_enabled())"
        env = {k: v for k, v in os.environ.items() if k != "TG_CHECK"}
        run = subprocess.run([sys.executable, "-c", code], capture_output=True,
                             text=True, timeout=TIMEOUT, env=env)
        self.assertEqual((run.returncode, run.stdout.strip()), (0, "False"), run.stderr)
        # Asked for: on (or, where CUPTI cannot serve, failing every stage).
        self.assertEqual(run_python(code, TG_CHECK="1"), "True")

    def test_no_cupti_is_a_clear_error(self):
        code = """if True:
            from track_gen import exec as tx
            try:
                tx.set_checks(True)
            except tx.StateError as e:
                assert "TG_CUPTI_PATH=/nonexistent/cupti" in str(e), e
                assert not tx.checks_enabled()
                print("refused")
        """
        self.assertEqual(run_python(code, TG_CUPTI_PATH="/nonexistent/cupti"), "refused")


if wp is not None:
    @wp.kernel
    def write_kernel(out: wp.array(dtype=wp.int64), param: wp.array(dtype=wp.int64)):
        i = wp.tid()
        out[i] = wp.int64(i) * wp.int64(3) + param[0]


class EscapeCase(tgtest.GpuCase):
    """A producer of one stage "escape" that makes out[i] = i * 3 + param
    (int64; src holds those values, set outside any capture, so that a torch
    stage copies without allocating), sending its work where the test says;
    checks restored after.  No test of its own (test_checks_warp.py has
    more)."""

    def setUp(self):
        super().setUp()
        torch = self.torch
        self.was = tx.checks_enabled()
        self.param = torch.zeros(1, dtype=torch.int64, device="cuda")
        self.out = torch.zeros(N, dtype=torch.int64, device="cuda")
        self.src = torch.zeros(N, dtype=torch.int64, device="cuda")
        self.i = torch.arange(N, dtype=torch.int64, device="cuda")

    def tearDown(self):
        tx.set_checks(self.was)
        self.torch.cuda.synchronize()
        super().tearDown()

    def producer(self, escape):
        p = tx.Producer("checked")
        s = p.add_device_stage("escape", escape, capture_safe=True)
        p.declare_binding(s, "param", 8, dtype="int64")
        p.declare_binding(s, "out", 8 * N, dtype="int64")
        p.bind("param", self.param)
        p.bind("out", self.out)
        return p

    def want(self, param):
        return self.i.cpu() * 3 + param

    def set_param(self, value):
        self.param.fill_(value)
        self.src.copy_(self.i * 3 + value)
        self.torch.cuda.synchronize()

    def got(self):
        self.torch.cuda.synchronize()
        return self.out.cpu()

    def assert_escaped(self, error):
        self.assertEqual(error.code, tx.CaptureErrorCode.ESCAPED)
        self.assertEqual((error.producer, error.stage), ("checked", "escape"))
        self.assertIn("stream", str(error))

    def check_refused_and_stale(self, escape):
        """*escape* refused under REPLAY and RECORD with checks on, and
        replaying the first call's result with checks off."""
        torch = self.torch
        stream = torch.cuda.current_stream()
        tx.set_checks(True)
        with self.producer(escape) as p:
            self.set_param(3)
            with self.assertRaises(tx.NotCapturableError) as caught:
                p.run(stream, tx.Policy.REPLAY)
            self.assert_escaped(caught.exception)
        with self.producer(escape) as p:
            g = torch.cuda.CUDAGraph()
            with self.interop.graph(g):
                capturing = torch.cuda.current_stream()
                _state, _id, graph = tx._native.capture_info(capturing)
                before = tx._native._graph_n_nodes(graph)
                with self.assertRaises(tx.NotCapturableError) as caught:
                    p.run()
                self.assert_escaped(caught.exception)
                # Refused as every refusal: the capture as it was, going on.
                self.assertEqual(tx._native._graph_n_nodes(graph), before)
                self.assertEqual(tx.capture_state(capturing)[0], tx.CaptureState.ACTIVE)
            del g
        tx.set_checks(False)
        with self.producer(escape) as p:
            for param in (3, 5):
                self.set_param(param)
                p.run(stream, tx.Policy.REPLAY)
                self.assertTrue(torch.equal(self.got(), self.want(3)))
        with self.producer(escape) as p:
            self.set_param(3)
            g = torch.cuda.CUDAGraph()
            with self.interop.graph(g):
                p.run()
            self.set_param(5)
            g.replay()
            self.assertTrue(torch.equal(self.got(), self.want(3)))
            del g


class Checked(EscapeCase):
    def test_torch_side_stream_not_joined(self):
        torch = self.torch
        side = torch.cuda.Stream()

        def escape(ctx):
            with torch.cuda.stream(side):
                self.out.copy_(self.src)

        self.check_refused_and_stale(escape)
        side.synchronize()

    def test_torch_side_stream_joined_passes(self):
        torch = self.torch
        side = torch.cuda.Stream()

        def forked(ctx):
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                self.out.copy_(self.src)
            torch.cuda.current_stream().wait_stream(side)

        tx.set_checks(True)
        with self.producer(forked) as p:
            for param in (3, 5):
                self.set_param(param)
                p.run(torch.cuda.current_stream(), tx.Policy.REPLAY)
                self.assertTrue(torch.equal(self.got(), self.want(param)))

    def test_warp_launch_without_stream(self):
        """Warp not set up by track_gen.interop.warp in this process, so no
        capture is registered with Warp: its current stream is its own, and
        a launch without ``stream=`` runs there, now."""
        if wp is None:
            self.skipTest("no warp (pip install warp-lang)")
        self.assertNotIn("track_gen.interop.warp", sys.modules)
        wp.init()
        out, param = wp.from_torch(self.out), wp.from_torch(self.param)
        wp.launch(write_kernel, N, inputs=[out, param])  # compiled outside a capture
        wp.synchronize()

        def escape(ctx):
            wp.launch(write_kernel, N, inputs=[out, param])  # Warp's stream: escapes

        self.check_refused_and_stale(escape)
        wp.synchronize()

if __name__ == "__main__":
    sys.exit(tap.main())
