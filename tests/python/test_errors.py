# SPDX-License-Identifier: Apache-2.0
"""The exception classes of track_gen: one per GError domain, the capture
family under CaptureError, the producer, stage and binding C sets,
RebindAfterCaptureWarning as a real warning category, and the enums and
error codes the native module builds from the C headers.  Host only."""
import enum
import multiprocessing
import pickle
import sys
import unittest
import warnings

import tap
from track_gen import _native
from track_gen import exec as tx
from track_gen import seeds


def refuse_binding():
    """A refusal of libtrackgen's with all three fields (run in a child)."""
    p = tx.Producer("remote")
    first = p.add_device_stage("first", lambda ctx: None)
    try:
        p.declare_binding(first, "x", 0)
    finally:
        p.close()


class Classes(unittest.TestCase):
    def test_hierarchy(self):
        for cls in (tx.NotCapturableError, tx.LegacyPluginStreamError):
            self.assertTrue(issubclass(cls, tx.CaptureError))
        for cls in (tx.CaptureError, tx.CudaError, tx.ArgumentError, tx.StateError,
                    tx.StageError):
            self.assertTrue(issubclass(cls, tx.TrackGenError))
        self.assertTrue(issubclass(tx.ArgumentError, ValueError))
        self.assertTrue(issubclass(tx.StateError, RuntimeError))
        self.assertTrue(issubclass(tx.RebindAfterCaptureWarning, UserWarning))

    def test_fields_come_from_c_never_from_the_message(self):
        e = tx.StateError("producer 'tracks', stage 'relax' uses binding 'flag'",
                          "tg-state-error-quark", tx.StateErrorCode.UNBOUND)
        self.assertEqual((e.producer, e.stage, e.binding), (None, None, None))
        p = tx.Producer("fields")
        first = p.add_device_stage("first", lambda ctx: None)
        with self.assertRaises(tx.ArgumentError) as caught:
            p.declare_binding(first, "x", 0)
        e = caught.exception
        self.assertEqual((e.producer, e.stage, e.binding), ("fields", "first", "x"))
        with self.assertRaises(tx.ArgumentError) as caught:
            p.add_device_stage("first", lambda ctx: None)
        self.assertEqual((caught.exception.producer, caught.exception.stage,
                          caught.exception.binding), ("fields", "first", None))
        p.close()

    def test_pickles(self):
        e = tx.NotCapturableError("producer 'a', stage 'b' is not capture-safe",
                                  "tg-capture-error-quark",
                                  tx.CaptureErrorCode.NOT_CAPTURABLE, producer="a",
                                  stage="b")
        f = pickle.loads(pickle.dumps(e))
        self.assertIs(type(f), tx.NotCapturableError)
        self.assertEqual((f.message, f.domain, f.code, f.producer, f.stage, f.binding),
                         (e.message, e.domain, e.code, "a", "b", None))

    def test_pickles_what_was_added_later(self):
        # Everything an instance holds survives, not only the constructor's
        # arguments: notes, attributes a handler set (lost until 0.5).
        e = tx.StateError("m", "tg-state-error-quark", tx.StateErrorCode.BUSY, "p", "s")
        e.__notes__ = ["while stepping"]  # e.add_note() from Python 3.11
        e.rank = 3
        f = pickle.loads(pickle.dumps(e))
        self.assertEqual((f.producer, f.stage, f.binding, f.rank), ("p", "s", None, 3))
        self.assertEqual(getattr(f, "__notes__", None), ["while stepping"])

    def test_crosses_processes(self):
        # As multiprocessing (and so torchrun's workers) passes it: a
        # refusal libtrackgen raised in a spawned process, received here
        # with the fields C set there.
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(1) as pool:
            with self.assertRaises(tx.ArgumentError) as caught:
                pool.apply(refuse_binding)
        e = caught.exception
        self.assertEqual((e.producer, e.stage, e.binding), ("remote", "first", "x"))
        self.assertEqual(e.domain, "tg-argument-error-quark")
        self.assertIs(e.code, tx.ArgumentErrorCode.EMPTY)
        self.assertIn("producer 'remote'", e.message)

    def test_raised_by_the_native_module(self):
        with self.assertRaises(tx.ArgumentError) as caught:
            seeds.SeedState(0)
        self.assertIs(caught.exception.code, tx.ArgumentErrorCode.EMPTY)

    def test_enums_come_from_the_c_headers(self):
        # The classes the native module built from the headers, re-exported.
        for name in ("Policy", "StageFlags", "CaptureState", "LoopEnd", "RebindOutcome",
                     "CaptureErrorCode", "ArgumentErrorCode", "StateErrorCode"):
            cls = getattr(tx, name)
            self.assertIs(cls, getattr(_native, name))
            self.assertEqual(cls.__module__, "track_gen.exec")
        self.assertTrue(issubclass(tx.StageFlags, enum.IntFlag))
        self.assertTrue(issubclass(tx.Policy, enum.IntEnum))
        self.assertEqual([p.name for p in tx.Policy], ["AUTO", "EAGER", "REPLAY", "RECORD"])
        both = tx.StageFlags.CAPTURE_SAFE | tx.StageFlags.LEGACY_STREAM
        self.assertIs(type(both), tx.StageFlags)

    def test_rebind_warning_is_filterable(self):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("ignore", tx.RebindAfterCaptureWarning)
            warnings.warn("x", tx.RebindAfterCaptureWarning)
        self.assertEqual(seen, [])


class Arguments(unittest.TestCase):
    """What the Python layer refuses before any CUDA call."""

    def test_stage_builders_raise_libtrackgens_errors(self):
        p = tx.Producer("builders")
        first = p.add_device_stage("first", lambda ctx: None)
        code = tx.ArgumentErrorCode
        cases = [
            (lambda: p.add_device_stage("first", lambda ctx: None), tx.ArgumentError,
             code.DUPLICATE, "stage 'first': an earlier stage has this name"),
            (lambda: p.add_loop_stage("loop", lambda ctx: None, flag="go", status="go",
                                      max_iters=4), tx.ArgumentError, code.DUPLICATE,
             "both 'go'"),
            (lambda: p.add_loop_stage("loop", lambda ctx: None, flag="go", status="st",
                                      max_iters=0), tx.ArgumentError, code.OUT_OF_RANGE,
             "max_iters 0"),
            (lambda: p.add_switch_stage("sw", [], index="i"), tx.ArgumentError, code.EMPTY,
             "at least one case"),
            (lambda: p.declare_binding(7, "x", 4), tx.ArgumentError, code.OUT_OF_RANGE,
             "stage 7 does not exist"),
            (lambda: p.declare_binding(first, "x", 0), tx.ArgumentError, code.EMPTY,
             "binding 'x': min_size"),
            (lambda: p.set_stage_condition(9, "go"), tx.ArgumentError, code.OUT_OF_RANGE,
             "stage 9 does not exist"),
            (lambda: p.set_stage_else(first, lambda ctx: None), tx.ArgumentError,
             code.INVALID, "not a DEVICE stage with a condition"),
        ]
        for call, cls, want, text in cases:
            with self.subTest(text=text), self.assertRaises(cls) as caught:
                call()
            e = caught.exception
            self.assertEqual(e.domain, "tg-argument-error-quark")
            self.assertIs(e.code, want)
            self.assertIn("producer 'builders'", e.message)
            self.assertIn(text, e.message)
        self.assertEqual(p.n_stages, 1)
        p.close()

    def test_conditions(self):
        self.assertIsNone(tx.unconditional().flag_ptr)
        with self.assertRaises(ValueError):
            tx.conditional(0)
        with self.assertRaises(TypeError):
            tx.conditional("flag")
        self.assertEqual(tx.conditional(0x1000).flag_ptr, 0x1000)

    def test_streams(self):
        class Protocol:
            def __cuda_stream__(self):
                return (0, 0x1234)

        class Torchish:
            cuda_stream = 0x4321

        p = tx.Producer("streams")
        for bad in ("s", 1.5, object()):
            with self.assertRaises(TypeError):
                p.set_stream(bad)
        self.assertEqual(tx._native._stream_handle(Protocol()), 0x1234)
        self.assertEqual(tx._native._stream_handle(Torchish()), 0x4321)
        self.assertIsNone(tx._native._stream_handle(None))
        p.close()

    def test_policy_names(self):
        self.assertEqual([tx._native.policy_name(p) for p in tx.Policy],
                         ["auto", "eager", "replay", "record"])


if __name__ == "__main__":
    sys.exit(tap.main())
