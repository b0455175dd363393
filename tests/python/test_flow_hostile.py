# SPDX-License-Identifier: Apache-2.0
"""Hostile input to capture_if, capture_while and capture_switch, a table:
wrong types, non-callables, arrays of the wrong dtype, size or layout,
max_iters out of range, a bool or a float, streams that are none; each ends
in the documented exception class naming the argument, before anything
runs (so everywhere, without a GPU), and keeps nothing.  What needs a GPU
(exceptions of bodies, nested refusals) is in test_flow.py."""
import gc
import subprocess
import sys
import unittest

import tap
import tgtest
from track_gen import exec as tx


class Fake:
    """Device memory described by __cuda_array_interface__ alone (never
    touched: the refusals come first)."""

    def __init__(self, typestr="<i4", shape=(4,), strides=None, address=0x10000):
        self.__cuda_array_interface__ = {"data": (address, False), "shape": shape,
                                         "typestr": typestr, "strides": strides,
                                         "version": 3}


FLAG = Fake()


def noop():
    pass


# (name, call, exception class, words the message holds)
ROWS = [
    ("on_true not callable", lambda: tx.capture_if(FLAG, 42), TypeError, "on_true"),
    ("on_false not callable", lambda: tx.capture_if(FLAG, noop, "x"), TypeError,
     "on_false"),
    ("flag a list", lambda: tx.capture_if([1], noop), TypeError, "flag"),
    ("flag None", lambda: tx.capture_if(None, noop), TypeError, "flag"),
    ("flag at address 0", lambda: tx.capture_if(0, noop), ValueError, "flag", "NULL"),
    ("flag empty", lambda: tx.capture_if(Fake(shape=(0,)), noop), tx.ArgumentError,
     "flag", "no element"),
    ("flag strided", lambda: tx.capture_if(Fake(strides=(8,)), noop), tx.ArgumentError,
     "flag", ".contiguous()"),
    ("flag of two bytes", lambda: tx.capture_if(Fake("|V2", (1,)), noop),
     tx.ArgumentError, "flag", "fewer"),
    ("stream a str", lambda: tx.capture_if(FLAG, noop, stream="s"), TypeError, "stream"),
    ("stream -1", lambda: tx.capture_if(FLAG, noop, stream=-1), ValueError, "stream"),
    ("while_body None", lambda: tx.capture_while(FLAG, None, max_iters=2), TypeError,
     "while_body"),
    ("while_body not callable", lambda: tx.capture_while(FLAG, 3, max_iters=2),
     TypeError, "while_body"),
    ("max_iters missing", lambda: tx.capture_while(FLAG, noop), TypeError, "max_iters"),
    ("max_iters True", lambda: tx.capture_while(FLAG, noop, max_iters=True), TypeError,
     "max_iters"),
    ("max_iters 2.0", lambda: tx.capture_while(FLAG, noop, max_iters=2.0), TypeError,
     "max_iters"),
    ("max_iters a str", lambda: tx.capture_while(FLAG, noop, max_iters="2"), TypeError,
     "max_iters"),
    ("status of one int32", lambda: tx.capture_while(FLAG, noop, max_iters=2,
                                                     status=Fake(shape=(1,))),
     tx.ArgumentError, "status", "fewer"),
    ("status of bool", lambda: tx.capture_while(FLAG, noop, max_iters=2,
                                                status=Fake("|b1", (8,))),
     tx.ArgumentError, "status", ".int()"),
    ("cases not a sequence", lambda: tx.capture_switch(FLAG, 42), TypeError, "cases"),
    ("cases a str", lambda: tx.capture_switch(FLAG, "ab"), TypeError, "cases"),
    ("a case not callable", lambda: tx.capture_switch(FLAG, [noop, 3]), TypeError,
     "cases[1]"),
    ("index of uint8", lambda: tx.capture_switch(Fake("|u1"), [noop]), tx.ArgumentError,
     "index", ".int()"),
]
for label, typestr in (("bool", "|b1"), ("uint8", "|u1"), ("int8", "|i1"),
                       ("int64", "<i8"), ("float32", "<f4")):
    ROWS.append(("flag of " + label, lambda t=typestr: tx.capture_if(Fake(t), noop),
                 tx.ArgumentError, "flag", label, ".int()"))
    ROWS.append(("while flag of " + label,
                 lambda t=typestr: tx.capture_while(Fake(t), noop, max_iters=2),
                 tx.ArgumentError, "flag", ".int()"))
# The C width is converted here; the loop's range (1 to 2**31 - 1) and a
# switch of no case are libtrackgen's refusals, when the node is built: on
# the GPU (LibRefusals below).
for value in (-1, 2 ** 32, 2 ** 64):
    ROWS.append(("max_iters %d" % value,
                 lambda v=value: tx.capture_while(FLAG, noop, max_iters=v),
                 OverflowError, "max_iters"))


class Refusals(unittest.TestCase):
    """One test per row: the documented class itself, the argument named."""

    def row(self, call, exc, words):
        with self.assertRaises(exc) as caught:
            call()
        self.assertIs(type(caught.exception), exc, caught.exception)
        for word in words:
            self.assertIn(word, str(caught.exception))

    def test_status_none_without_torch(self):
        # Nothing imported torch in a fresh interpreter: no way to allocate.
        code = ("import sys\nfrom track_gen import exec as tx\n"
                "try:\n    tx.capture_while(0x10000, print, max_iters=2)\n"
                "except TypeError as e:\n    print(e)\n"
                "print('torch' in sys.modules)\n")
        child = subprocess.run([sys.executable, "-c", code], capture_output=True,
                               text=True, timeout=120)
        self.assertEqual(child.returncode, 0, child.stderr)
        self.assertIn("status", child.stdout)
        self.assertTrue(child.stdout.endswith("False\n"), child.stdout)

    def test_refused_calls_keep_nothing(self):
        body = lambda: None  # noqa: E731
        flag = Fake("<f4")
        refs = sys.getrefcount(body), sys.getrefcount(flag)
        for _ in range(1000):
            with self.assertRaises(tx.ArgumentError):
                tx.capture_if(flag, body, body)
        gc.collect()
        self.assertEqual((sys.getrefcount(body), sys.getrefcount(flag)), refs)


class LibRefusals(unittest.TestCase):
    """What libtrackgen refuses when the node is built (tg_launch_while(),
    tg_launch_switch()): ArgumentError naming the argument, no body ran, and
    the next call works."""

    def setUp(self):
        self.torch = tgtest.require_gpu()
        self.flag = self.torch.ones(1, dtype=self.torch.int32, device="cuda")
        self.ran = 0

    def body(self):
        self.ran += 1

    def check_next_call_works(self):
        status = tx.capture_while(self.flag, self.body, max_iters=2)
        self.torch.cuda.synchronize()
        self.assertEqual(status.tolist(), [2, int(tx.LoopEnd.CAPPED)])

    def test_max_iters_out_of_range(self):
        for value in (0, 2 ** 31, 2 ** 32 - 1):
            with self.subTest(max_iters=value):
                with self.assertRaises(tx.ArgumentError) as caught:
                    tx.capture_while(self.flag, self.body, max_iters=value)
                self.assertIn("max_iters", str(caught.exception))
                self.assertEqual(self.ran, 0)
        self.check_next_call_works()

    def test_switch_of_no_case(self):
        with self.assertRaises(tx.ArgumentError) as caught:
            tx.capture_switch(self.flag, [])
        self.assertIn("cases", str(caught.exception))
        self.check_next_call_works()


for i, (name, call, exc, *words) in enumerate(ROWS):
    test = "test_%03d_%s" % (i, "".join(c if c.isalnum() else "_" for c in name))
    setattr(Refusals, test, lambda self, c=call, e=exc, w=words: self.row(c, e, w))


if __name__ == "__main__":
    sys.exit(tap.main())
