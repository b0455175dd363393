# SPDX-License-Identifier: Apache-2.0
"""What the hostile-input tables share (test_hostile.py, test_hostile_arrays.py,
test_hostile_lifetimes.py): every entry point of the package given what a
user gets wrong ends in the documented exception class with a message that
names the argument, never a crash, a SystemError or a silent wrap.

Each row is one test: (name, call, exception class, words the message must
hold).  A call takes the fixture (producers, arrays, and torch on a GPU);
rows marked gpu skip without one, rows marked subprocess run in a child
interpreter, where a crash fails the row instead of the whole file.  A test
module adds its rows to a Rows, subclasses Table and calls add_tests().
"""
import subprocess
import sys
import textwrap
import unittest

import tgtest
from track_gen import exec as tx
from track_gen import seeds


class Row:
    def __init__(self, name, call, exc, *words, gpu=False, subprocess=None):
        self.name, self.call, self.exc, self.words = name, call, exc, words
        self.gpu = gpu
        #: Code run in a child interpreter instead of call: it must exit
        #: cleanly, printing the exception's class (unless None) and words.
        self.subprocess = subprocess


class Fixture:
    """What rows take: fresh objects for each row."""

    def __init__(self, torch=None):
        self.torch = torch

    def producer(self, name="hostile"):
        """A producer with one DEVICE stage declaring binding "buf"."""
        p = tx.Producer(name)
        s = p.add_device_stage("stage", lambda ctx: None, capture_safe=True)
        p.declare_binding(s, "buf", 16)
        return p

    def tensor(self, n=4, dtype="int32"):
        return self.torch.zeros(n, dtype=getattr(self.torch, dtype), device="cuda")

    def seed_state(self, n=4):
        return seeds.SeedState(n, 1)


BIG = 2 ** 64
HUGE = 2 ** 200


class Rows(list):
    """A table's rows, in order: add() appends one (Row's arguments)."""

    def add(self, *args, **kwargs):
        self.append(Row(*args, **kwargs))


def guarded(f):
    """The fixture's producer, its stage guarded by the binding "flag"."""
    p = f.producer()
    p.set_stage_condition(0, "flag")
    return p


class Table(unittest.TestCase):
    """Runs rows: a test module subclasses it, then calls add_tests()."""

    def row(self, r):
        if r.gpu:
            torch = tgtest.require_gpu()
        else:
            torch = None
        if r.subprocess is not None:
            return self.child(r)
        with self.assertRaises(r.exc) as caught:
            r.call(Fixture(torch))
        # The documented class itself, not one of its subclasses.
        self.assertIs(type(caught.exception), r.exc, caught.exception)
        for word in r.words:
            self.assertIn(word, str(caught.exception))

    def child(self, r):
        """Runs the row's code in a child interpreter: it must exit cleanly,
        having printed the exception's class and message."""
        code = textwrap.dedent(r.subprocess)
        child = subprocess.run([sys.executable, "-c", code], capture_output=True,
                               text=True, timeout=120)
        self.assertEqual(child.returncode, 0, child.stdout + child.stderr)
        if r.exc is not None:
            self.assertIn(r.exc.__name__, child.stdout, child.stdout + child.stderr)
        for word in r.words:
            self.assertIn(word, child.stdout)


def add_tests(case, rows):
    """One test per row of *rows* in *case*: test_NNN_name, NNN its place."""
    for i, r in enumerate(rows):
        name = "".join(c if c.isalnum() else "_" for c in r.name)
        setattr(case, "test_%03d_%s" % (i, name), lambda self, r=r: self.row(r))
