# SPDX-License-Identifier: Apache-2.0
"""No value of libtrackgen's is typed a second time in the package's Python
code (track_gen/*.py, track_gen/interop/*.py): enum values, error domain
names and ranges come from C, through the native module (issue 33).

Read from the source's syntax tree (no import, no GPU).  Refused:
- a string that names a GError domain ("tg-...-quark"), outside docstrings;
- an int literal other than 0 and 1 (an enum value, a C width, a range
  bound such as ``2 ** 31 - 1``);
- a class body that assigns int literals to names (an enum mirrored);
- ``in`` against a literal tuple, list or set of ints (``handle in (0, 1)``);
- ``ctypes.c_int(N)`` of a literal (a C enum's value).
What is legitimately a number of Python's own is listed in ALLOWED, each
with the reason.
"""
import ast
import os
import re
import sys
import unittest

import tap

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                       "python", "track_gen")

DOMAIN = re.compile(r"tg-[\w-]*-quark")

# (file relative to PACKAGE, text of the line holding the literal) -> why it
# is not a value of libtrackgen's.
ALLOWED = {
    ("_flow.py", "status = keep = torch.empty(2, dtype=torch.int32,"):
        "capture_while's documented status shape: two int32 (iterations, LoopEnd), "
        "the public layout of TgLoopStatus that the caller allocates",
    ("_flow.py", 'status_address = _native._int32_array(status, "status", 2)[0]'):
        "the same documented status shape, checked on the caller's array",
    ("exec.py", "return int(match.group(1)) // 8 if match.group(1) else 1"):
        "bits per byte: a dtype name's width (float32) in bytes",
    ("interop/torch.py", '"version": 3,'):
        "the version of __cuda_array_interface__ (Numba's protocol), not ours",
    ("tracks.py", "def write_svg(self, path: str, envs: Sequence[int] = range(16),"):
        "how many envs a drawing shows by default: a presentation choice",
    ("tracks.py", "return tensor_at(ptr, (self.n_envs, n, 2), torch.float32, self)"):
        "x and y of a track point: the documented shape of TrackProducer's "
        "tensors",
}


def sources(root):
    for sub in ("", "interop"):
        folder = os.path.join(root, sub)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                yield os.path.join(sub, name) if sub else name, os.path.join(folder, name)


def docstrings(tree):
    """The id of every docstring constant of @tree."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def is_int(node):
    return (isinstance(node, ast.Constant) and type(node.value) is int) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
        and is_int(node.operand))


def findings(rel, source):
    """(line, why) for each value of libtrackgen's typed in @source."""
    tree = ast.parse(source)
    docs = docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docs and DOMAIN.search(node.value)):
            out.append((node.lineno, "an error domain's name %r" % node.value))
        elif (isinstance(node, ast.Constant) and type(node.value) is int
              and node.value not in (0, 1)):
            out.append((node.lineno, "the number %d" % node.value))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.Assign) and is_int(item.value):
                    out.append((item.lineno, "class %s mirrors an enum (%s = %s)"
                                % (node.name, ast.unparse(item.targets[0]),
                                   ast.unparse(item.value))))
        elif isinstance(node, ast.Compare):
            for op, right in zip(node.ops, node.comparators):
                if (isinstance(op, (ast.In, ast.NotIn))
                        and isinstance(right, (ast.Tuple, ast.List, ast.Set))
                        and right.elts and all(is_int(e) for e in right.elts)):
                    out.append((node.lineno, "a set of values %s" % ast.unparse(right)))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr.startswith("c_") and node.args
              and is_int(node.args[0])):
            out.append((node.lineno, "a C value %s" % ast.unparse(node)))
    lines = source.splitlines()
    return [(line, why) for line, why in out
            if (rel, lines[line - 1].strip()) not in ALLOWED]


def scan(root):
    """Every finding in the package at @root, as 'file:line: why'."""
    found = []
    for rel, path in sources(root):
        with open(path, encoding="utf-8") as f:
            for line, why in findings(rel, f.read()):
                found.append("%s:%d: %s" % (rel, line, why))
    return sorted(set(found))


class TypedOnce(unittest.TestCase):
    def test_no_value_of_lib_typed_in_python(self):
        found = scan(PACKAGE)
        self.assertEqual(found, [], "values of libtrackgen's typed in Python; take "
                         "them from the native module (enums.c, errors.c):\n"
                         + "\n".join(found))

    def test_allowed_literals_still_exist(self):
        # An entry whose line went away must go too: the list stays short.
        lines = {}
        for rel, path in sources(PACKAGE):
            with open(path, encoding="utf-8") as f:
                lines[rel] = {line.strip() for line in f}
        for rel, text in ALLOWED:
            self.assertIn(text, lines.get(rel, ()), "stale ALLOWED entry %s" % rel)

    def test_each_rule_catches_its_case(self):
        cases = {
            'raise E("m", "tg-state-error-quark", 7)': "error domain",
            "LIMIT = 2 ** 31 - 1": "the number 2",
            "class Mode:\n    GLOBAL = 0\n": "mirrors an enum",
            "ok = handle in (0, 1)": "a set of values",
            "import ctypes\nmode = ctypes.c_int(1)": "a C value",
            'def f():\n    """tg-capture-error-quark, as a docstring says."""\n': None,
        }
        for source, why in cases.items():
            with self.subTest(source=source):
                found = [w for _, w in findings("x.py", source)]
                if why is None:
                    self.assertEqual(found, [])
                else:
                    self.assertTrue(any(why in w for w in found), found)


if __name__ == "__main__":
    sys.exit(tap.main())
