# SPDX-License-Identifier: Apache-2.0
"""A producer from Python: declared bindings checked by size and dtype, the
launch context a stage sees, rebinds after capture as a real Python warning
(the old tensor kept alive for graphs that recorded it), HOST stages and
their host operations, and the errors naming the stage and binding."""
import gc
import os
import subprocess
import sys
import unittest
import warnings
import weakref

import tap
import tgtest
from track_gen import exec as tx


class Bindings(tgtest.GpuCase):
    def test_unbound_and_too_small(self):
        torch = self.torch
        p = tx.Producer("unbound")
        s = p.add_device_stage("use", lambda ctx: None, capture_safe=True)
        p.declare_binding(s, "buf", 64)
        with self.assertRaises(tx.StateError) as caught:
            p.run(torch.cuda.current_stream())
        self.assertEqual((caught.exception.stage, caught.exception.binding), ("use", "buf"))
        p.bind("buf", torch.zeros(8, dtype=torch.int32, device="cuda"))  # 32 bytes
        with self.assertRaises(tx.StateError):
            p.run(torch.cuda.current_stream())
        p.bind("buf", torch.zeros(16, dtype=torch.int32, device="cuda"))
        p.run(torch.cuda.current_stream())
        with self.assertRaises(tx.ArgumentError) as caught:
            p.bind("buf", torch.zeros(4, device="cuda"), size=64)  # more than it holds
        self.assertEqual((caught.exception.producer, caught.exception.binding),
                         ("unbound", "buf"))
        p.close()

    def test_dtype_and_host_memory(self):
        torch = self.torch
        p = tx.Producer("dtype")
        s = p.add_device_stage("use", lambda ctx: None)
        p.declare_binding(s, "ids", 4, dtype="int32")
        with self.assertRaises(tx.ArgumentError):
            p.bind("ids", torch.zeros(4, dtype=torch.float32, device="cuda"))
        with self.assertRaises(ValueError):
            p.bind("ids", torch.zeros(4, dtype=torch.int32))  # CPU memory
        p.bind("ids", torch.zeros(4, dtype=torch.int32, device="cuda"))
        p.close()

    def test_context_of_a_stage(self):
        torch = self.torch
        seen = {}
        buf = torch.zeros(32, dtype=torch.int32, device="cuda")
        p = tx.Producer("ctx")

        def stage(ctx):
            seen.update(stream=ctx.stream, policy=ctx.policy, capturing=ctx.is_capturing,
                        device=ctx.device, depth=ctx.depth, name=ctx.stage_name,
                        same=ctx.binding("buf") is buf, size=ctx.binding_size("buf"),
                        ptr=ctx.binding_ptr("buf"), producer=ctx.producer_name)
            with self.assertRaises(KeyError):
                ctx.binding("undeclared")
            seen["ctx"] = ctx

        s = p.add_device_stage("look", stage, capture_safe=True)
        p.declare_binding(s, "buf", 16)
        p.bind("buf", buf)
        stream = torch.cuda.Stream()
        p.run(stream, tx.Policy.EAGER)
        self.assertEqual(seen["stream"], stream.cuda_stream)
        self.assertEqual((seen["policy"], seen["capturing"], seen["depth"]),
                         (tx.Policy.EAGER, False, 0))
        self.assertEqual((seen["name"], seen["producer"]), ("look", "ctx"))
        self.assertTrue(seen["same"])
        self.assertEqual((seen["size"], seen["ptr"]), (128, buf.data_ptr()))
        with self.assertRaises(RuntimeError):
            seen["ctx"].stream  # the call returned
        p.run(stream, tx.Policy.REPLAY)
        self.assertEqual((seen["policy"], seen["capturing"]), (tx.Policy.REPLAY, True))
        self.assertNotEqual(seen["stream"], stream.cuda_stream)  # the own capture's
        p.close()

    def test_rebind_after_capture_warns_and_keeps_the_old_tensor(self):
        torch = self.torch
        chain = tgtest.Chain("rebind")
        stream = torch.cuda.current_stream()
        chain.set_inputs(1, 2)
        chain.producer.run(stream)  # REPLAY: captured
        old = weakref.ref(chain.b)
        new_b = torch.zeros_like(chain.b)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            chain.producer.bind("b", new_b)
        self.assertEqual([w.category for w in caught], [tx.RebindAfterCaptureWarning])
        self.assertIn("binding 'b'", str(caught[0].message))
        self.assertEqual(caught[0].filename, __file__)  # points at the bind
        chain.b = new_b
        gc.collect()
        self.assertIsNotNone(old())  # retired, not dropped
        chain.producer.run(stream)
        self.assertTrue(torch.equal(chain.result(), tgtest.expected(1, 2)))
        stats = chain.producer.runner.stats
        self.assertEqual(stats.n_rebinds, 1)
        self.assertEqual(stats.last_rebind, tx.RebindOutcome.UPDATED)
        with warnings.catch_warnings():
            warnings.simplefilter("error", tx.RebindAfterCaptureWarning)
            with self.assertRaises(tx.RebindAfterCaptureWarning):
                chain.producer.bind("b", torch.zeros_like(chain.b))
        chain.producer.close()


class Declarations(unittest.TestCase):
    """Bindings declared in bytes, like an array, or by shape and dtype, as
    producer.bindings lists them.  Host only: nothing runs."""

    class Array:
        """Four rows of three float32 at a made-up device address."""
        __cuda_array_interface__ = {"data": (0x10000, False), "shape": (4, 3),
                                    "typestr": "<f4", "version": 3}

    def test_like_shape_and_bytes(self):
        with tx.Producer("declared") as p:
            first = p.add_device_stage("first", lambda ctx: None)
            second = p.add_device_stage("second", lambda ctx: None)
            p.declare_binding(first, "x", like=self.Array())
            p.declare_binding(second, "x", shape=(8, 3), dtype="float32")
            p.declare_binding(second, "count", 8)
            self.assertEqual(p.bindings, (
                tx.Binding("x", (first, second), 8 * 3 * 4, "float32"),
                tx.Binding("count", (second,), 8, None)))

    def test_subclasses_of_subclasses(self):
        # The native module's state is found up the bases of any subclass.
        class Mine(tx.Producer):
            pass

        class Deeper(Mine):
            pass

        with Deeper("deeper") as p:
            s = p.add_device_stage("s", lambda ctx: None)
            p.declare_binding(s, "x", like=self.Array())
            with self.assertRaises(tx.ArgumentError):
                p.add_device_stage("s", lambda ctx: None)
        with self.assertRaises(TypeError):
            tx.Producer.__new__(int, "not a producer")

    def test_a_refused_declaration_is_not_listed(self):
        with tx.Producer("refused") as p:
            with self.assertRaises(tx.ArgumentError):
                p.declare_binding(3, "x", like=self.Array())  # no stage 3
            self.assertEqual(p.bindings, ())

    def test_a_stage_refused_for_its_switch_is_not_added(self):
        """capture_safe="no" is refused, not taken for True: a stage declared
        capture-safe by accident would be captured and replayed."""
        with tx.Producer("switches") as p:
            for kwargs in ({"capture_safe": "no"}, {"capture_safe": 1},
                           {"legacy_stream": None}):
                with self.subTest(**kwargs):
                    with self.assertRaisesRegex(TypeError, "True or False"):
                        p.add_device_stage("s", lambda ctx: None, **kwargs)
                    self.assertEqual(p.n_stages, 0)
            p.add_device_stage("s", lambda ctx: None, capture_safe=True)
            self.assertEqual(p.n_stages, 1)


class Nvtx(unittest.TestCase):
    """NVTX ranges: off by default, on with set_nvtx() or TG_NVTX=1.  Host only
    (with no profiler attached the ranges are NVTX's own no-ops)."""

    def test_switch_and_environment(self):
        self.assertFalse(tx.nvtx_enabled())
        tx.set_nvtx(True)
        self.assertTrue(tx.nvtx_enabled())
        tx.set_nvtx(False)
        self.assertFalse(tx.nvtx_enabled())
        code = "from track_gen import exec as tx; print(tx.nvtx_enabled())"
        env = dict(os.environ, TG_NVTX="1")
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                             capture_output=True, text=True).stdout
        self.assertEqual(out.strip(), "True")

    def test_refused_switch_changes_nothing(self):
        """set_nvtx() and set_checks() take True or False alone: a truthy "no"
        or 1 turned the switch on before, a None off; now each is refused,
        and the switch stays as it was."""
        checks = tx.checks_enabled()
        for on in (True, False):
            tx.set_nvtx(on)
            for bad in ("no", 1, 0, None):
                with self.subTest(on=on, bad=bad):
                    with self.assertRaisesRegex(TypeError, "on: True or False"):
                        tx.set_nvtx(bad)
                    self.assertIs(tx.nvtx_enabled(), on)
                    with self.assertRaisesRegex(TypeError, "on: True or False"):
                        tx.set_checks(bad)
                    self.assertIs(tx.checks_enabled(), checks)


class HostStages(tgtest.GpuCase):
    def test_host_operations(self):
        torch = self.torch
        buf = torch.arange(8, dtype=torch.int32, device="cuda")
        got = bytearray(32)
        runs = []
        p = tx.Producer("host")
        p.add_device_stage("double", lambda ctx: buf.mul_(2), capture_safe=True)

        def host(ops):
            ops.copy_to_host(got, buf)
            ops.enqueue(lambda: runs.append(1))

        p.add_host_stage("read", host)
        p.add_device_stage("inc", lambda ctx: buf.add_(1), capture_safe=True)
        for policy in (tx.Policy.EAGER, tx.Policy.REPLAY):
            p.run(torch.cuda.current_stream(), policy)
        torch.cuda.synchronize()
        # Twice doubled and incremented; the copy saw the second doubling.
        self.assertEqual(buf.cpu().tolist(), [((i * 2 + 1) * 2) + 1 for i in range(8)])
        self.assertEqual(list(memoryview(got).cast("i")), [(i * 2 + 1) * 2 for i in range(8)])
        self.assertEqual(len(runs), 2)
        self.assertEqual(p.runner.stats.n_segments, 2)
        p.close()

    def test_recorded_host_function_runs_at_every_replay(self):
        torch = self.torch
        runs = []
        p = tx.Producer("host-node")
        p.add_host_stage("count", lambda ops: ops.enqueue(lambda: runs.append(1)),
                         capture_safe=True)
        g = torch.cuda.CUDAGraph()
        with self.interop.graph(g):
            p.run()
        p.close()
        for _ in range(3):
            g.replay()
        torch.cuda.synchronize()
        self.assertEqual(len(runs), 3)
        del g

    def test_synchronizing_host_stage_refused_under_record(self):
        torch = self.torch
        p = tx.Producer("host-sync")
        p.add_host_stage("sync", lambda ops: ops.synchronize(), capture_safe=True)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            with self.assertRaises(tx.NotCapturableError) as caught:
                p.run(torch.cuda.current_stream())
            self.assertEqual(caught.exception.stage, "sync")
        del g
        p.close()


if __name__ == "__main__":
    sys.exit(tap.main())
