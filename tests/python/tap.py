# SPDX-License-Identifier: Apache-2.0
"""Runs the unittest cases of the calling test module and prints TAP.

The Python tests run under the same TAP log driver as the GTest programs.
A test module ends with::

    if __name__ == "__main__":
        sys.exit(tap.main())

Each test case is one TAP line: ``ok N - name``, ``ok N - name # SKIP
reason`` for a skip (unittest's own, so ``python -m unittest`` reports the
same), ``not ok N - name`` followed by the traceback as ``#`` lines.  A
failing subtest is a ``not ok`` line of its own; expected failures are TAP's
TODO.  The plan comes last.
"""
import sys
import unittest

__all__ = ["main"]


class TapResult(unittest.TestResult):
    """A unittest result that prints each outcome as a TAP line."""

    def __init__(self, stream):
        super().__init__()
        self.stream = stream
        self.count = 0

    def _line(self, ok, test, directive="", err=None):
        self.count += 1
        # Ids name the module, always __main__ here: Class.method is enough.
        name = test.id().replace("__main__.", "")
        self.stream.write("%s %d - %s%s\n" % ("ok" if ok else "not ok", self.count,
                                             name, directive))
        if err is not None:
            # TestResult's own formatting leaves unittest's frames out.
            for line in self._exc_info_to_string(err, test).splitlines():
                self.stream.write("# %s\n" % line)
        self.stream.flush()

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(True, test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(False, test, err=err)

    def addError(self, test, err):
        super().addError(test, err)
        self._line(False, test, err=err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(True, test, " # SKIP %s" % reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._line(False, test, " # TODO expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._line(True, test, " # TODO unexpected success")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        # Passing subtests are part of their test's own line.
        if err is not None:
            self._line(False, subtest, err=err)


def main():
    """Runs every test case of __main__; returns 0 when none failed."""
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules["__main__"])
    result = TapResult(sys.stdout)
    suite.run(result)
    sys.stdout.write("1..%d\n" % result.count)
    return 0 if result.wasSuccessful() else 1
