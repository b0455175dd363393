# SPDX-License-Identifier: Apache-2.0
"""No circles: the call graph of the C files and the imports of track_gen.

Dependencies run one way (ARCHITECTURE.md): a file may call the files below
it, never one that calls it back, in lib/ (house rule 7) as in the
native module, and a module of the package may import the modules below it.
A circle means two files that cannot be read, tested or moved apart.

The C graph comes from the objects the build made, not from the sources: a
file calls another when its object uses (nm: undefined) a symbol that the
other's object defines.  lib/'s three archives form one graph, so a circle
within an archive and one across archives both show; the native module's
files form another (the archives lie below them all).  Kernels' objects take
part like any file.

The Python graph comes from the modules' imports (ast).  Both kinds count:
a module-level import, and an import inside a function, which only defers
the same dependency to the first call (a circle of that kind is how a
"lazy" import hides one).  ``from P import n`` depends on the module P.n
when it is one, on P otherwise; the import of a package's __init__ that
Python makes on the way to its submodules is not an edge (the package's
__init__ gathers its modules, it is above them).

ARCHITECTURE.md, which draws these layers, must name only files that exist.
"""
import ast
import glob
import os
import re
import shutil
import subprocess
import sys
import unittest

import tap

SRCDIR = os.environ.get("abs_top_srcdir",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
BUILDDIR = os.environ.get("abs_top_builddir", SRCDIR)

# Symbol types nm prints for a global definition (text, data, bss, read-only,
# common, weak); local ones (lower case) cannot be called from another file.
DEFINED = set("TDBRCVWGSi")


def circles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def one_cycle(graph, component):
    """A closed path through the component, from its first node."""
    members = set(component)
    start = component[0]
    path, seen = [start], {start}
    # Walk within the component until a node repeats: a cycle, since every
    # node of a component reaches every other.
    node = start
    while True:
        succ = sorted(s for s in graph[node] if s in members)
        nxt = next((s for s in succ if s == start), None) or \
            next((s for s in succ if s not in seen), succ[0])
        path.append(nxt)
        if nxt in seen:
            return path[path.index(nxt):]
        seen.add(nxt)
        node = nxt


def check_circles(test, graph, why, what):
    """Fails, printing each circle, when the graph has one."""
    found = circles(graph)
    test.assertFalse(found, "call or import circles in %s:\n%s"
                     % (what, describe(graph, why, found)))


def describe(graph, why, found):
    """Each circle as its files and one cycle with the names on each edge."""
    lines = []
    for component in found:
        lines.append("circle of %d files: %s" % (len(component), " ".join(component)))
        cycle = one_cycle(graph, component)
        for a, b in zip(cycle, cycle[1:]):
            names = sorted(why.get((a, b), ()))
            lines.append("  %s -> %s (%s%s)" % (a, b, ", ".join(names[:4]),
                                                ", ..." if len(names) > 4 else ""))
    return "\n".join(lines)


def objects(directories):
    """{source path: object} for the objects built from the directories' sources.

    Automake names a target's object PREFIX-stem.o; an object whose source is
    gone (a file moved away in an in-tree build) is left out.
    """
    found = {}
    for directory in directories:
        for obj in glob.glob(os.path.join(BUILDDIR, directory, "*.o")):
            stem = os.path.basename(obj)[:-2].split("-", 1)
            stem = stem[1] if len(stem) == 2 and "_" in stem[0] else "-".join(stem)
            for ext in (".c", ".cu"):
                source = os.path.join(directory, stem + ext)
                if os.path.exists(os.path.join(SRCDIR, source)):
                    found[source] = obj
    return found


def call_graph(directories):
    """(graph, why): who calls whom among the objects, and through which names."""
    if shutil.which("nm") is None:
        raise unittest.SkipTest("no nm (binutils) on PATH")
    objs = objects(directories)
    sources = [os.path.join(d, os.path.basename(s)) for d in directories
               for s in glob.glob(os.path.join(SRCDIR, d, "*.c"))]
    missing = sorted(s for s in sources if s not in objs)
    if missing:
        raise AssertionError("no object for %s: run make first" % ", ".join(missing))
    defines, uses = {}, {}
    for source, obj in objs.items():
        out = subprocess.run(["nm", "-P", obj], check=True, capture_output=True,
                             text=True).stdout
        uses[source] = set()
        for line in out.splitlines():
            fields = line.split()
            if len(fields) < 2:
                continue
            name, kind = fields[0], fields[1]
            if kind == "U":
                uses[source].add(name)
            elif kind in DEFINED:
                defines.setdefault(name, source)
    graph, why = {s: set() for s in objs}, {}
    for source, names in uses.items():
        for name in names:
            callee = defines.get(name)
            if callee is not None and callee != source:
                graph[source].add(callee)
                why.setdefault((source, callee), set()).add(name)
    return graph, why


def module_name(path, root):
    rel = os.path.relpath(path, root)[:-3].split(os.sep)
    if rel[-1] == "__init__":
        rel = rel[:-1]
    return ".".join(rel)


def import_graph(package_dir):
    """(graph, why): which module of the package imports which, and where."""
    root = os.path.dirname(package_dir)
    package = os.path.basename(package_dir)
    paths = glob.glob(os.path.join(package_dir, "**", "*.py"), recursive=True)
    modules = {module_name(p, root): p for p in paths}
    # The native module is a module of the package too, built, not in the tree.
    modules.setdefault(package + "._native", None)
    graph, why = {m: set() for m in modules}, {}
    for name, path in modules.items():
        if path is None:
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        is_package = os.path.basename(path) == "__init__.py"
        deferred = {id(inner) for fn in ast.walk(tree)
                    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                    for inner in ast.walk(fn)}
        # Every import node, at any depth: module level and in functions alike.
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = name.split(".")
                    parts = parts[:len(parts) - node.level + (1 if is_package else 0)]
                    base = ".".join(parts + ([base] if base else []))
                for alias in node.names:
                    sub = base + "." + alias.name
                    targets.append(sub if sub in modules else base)
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):
                    graph[name].add(target)
                    where = "%s:%d%s" % (os.path.basename(path), node.lineno,
                                         " (in a function)" if id(node) in deferred else "")
                    why.setdefault((name, target), set()).add(where)
    return graph, why


class CallCircles(unittest.TestCase):
    """No two C files call each other, directly or around a circle."""

    def check(self, directories):
        graph, why = call_graph(directories)
        self.assertGreater(len(graph), 1, "no objects found under %s" % BUILDDIR)
        check_circles(self, graph, why, ", ".join(directories))

    def test_lib(self):
        self.check(["lib/exec", "lib/seeds", "lib/interop"])

    def test_native_module(self):
        if not glob.glob(os.path.join(BUILDDIR, "python", "native", "*.o")):
            self.skipTest("the native module is not built here")
        self.check(["python/native"])


class ImportCircles(unittest.TestCase):
    """No two modules of track_gen import each other, directly or around a circle."""

    def test_track_gen(self):
        graph, why = import_graph(os.path.join(SRCDIR, "python", "track_gen"))
        self.assertIn("track_gen.exec", graph)
        check_circles(self, graph, why, "track_gen")


class NoDriverDoor(unittest.TestCase):
    """No module opens a CUDA library with ctypes but _cupti (CUPTI, for
    checked mode): libtrackgen makes the driver calls, the package reaches
    them through its native module."""

    def test_ctypes_only_in_cupti(self):
        package = os.path.join(SRCDIR, "python", "track_gen")
        users = set()
        for path in glob.glob(os.path.join(package, "**", "*.py"), recursive=True):
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module] if isinstance(node, ast.ImportFrom) else [])
                if any((n or "").split(".")[0] == "ctypes" for n in names):
                    users.add(os.path.relpath(path, package))
        self.assertEqual(users, {"_cupti.py"})


class ArchitecturePage(unittest.TestCase):
    """ARCHITECTURE.md names files that exist: it says where a change goes."""

    def test_every_file_named_exists(self):
        with open(os.path.join(SRCDIR, "ARCHITECTURE.md"), encoding="utf-8") as f:
            text = f.read()
        # File names and paths; a pattern (<concept>-private.h, *.py) is none.
        names = {n for n in re.findall(r"(?<![<>*\w./-])[\w./-]+\.(?:c|h|cu|py|md|rst)\b",
                                       text) if not n.startswith("-")}
        files = []
        for root, _dirs, found in os.walk(SRCDIR):
            rel = os.path.relpath(root, SRCDIR)
            files.extend("/" + os.path.normpath(os.path.join(rel, n)) for n in found)
        # A name may be given from any folder down: interop/torch.py.
        missing = sorted(n for n in names if not any(f.endswith("/" + n) for f in files))
        self.assertEqual(missing, [])


class CirclesSeen(unittest.TestCase):
    """The check itself finds a circle and only a circle."""

    def test_finds_a_circle(self):
        graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
        self.assertEqual(circles(graph), [["a", "b", "c"]])
        self.assertEqual(one_cycle(graph, ["a", "b", "c"]), ["a", "b", "c", "a"])

    def test_a_chain_is_no_circle(self):
        self.assertEqual(circles({"a": {"b"}, "b": {"c"}, "c": set()}), [])


if __name__ == "__main__":
    sys.exit(tap.main())
