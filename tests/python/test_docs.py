# SPDX-License-Identifier: Apache-2.0
"""The Python snippets of doc/python.md, doc/torch.md, doc/tracks.md,
doc/warp.md and doc/simulators.md, each page's run in order in one
namespace on a GPU (the last two with warp too; each one compiled
everywhere), and those of doc/seeds.md, host Python, run everywhere, so
the pages cannot show code that does not work; and a docstring for every
public name, which the Sphinx reference shows."""
import enum
import gc
import importlib
import inspect
import linecache
import os
import re
import sys
import unittest

import tap
import tgtest

DOC = os.path.join(os.environ.get("abs_top_srcdir",
                                  os.path.join(os.path.dirname(__file__), "..", "..")),
                   "doc")
PAGES = ("python.md", "torch.md", "tracks.md")
WARP_PAGES = ("warp.md", "simulators.md")
# Pages whose snippets need neither torch nor a device.
HOST_PAGES = ("seeds.md",)


def snippets(page):
    with open(os.path.join(DOC, page)) as f:
        return re.findall(r"^```python\n(.*?)^```", f.read(), re.S | re.M)


class Pages(unittest.TestCase):
    def test_snippets_compile(self):
        for page in PAGES + WARP_PAGES:
            blocks = snippets(page)
            self.assertGreater(len(blocks), 2, page)
            for i, block in enumerate(blocks):
                compile(block, "%s, snippet %d" % (page, i + 1), "exec")

    def run_pages(self, pages):
        for page in pages:
            namespace = {"__name__": "doc_" + page[:-3]}
            for i, block in enumerate(snippets(page)):
                name = "%s, snippet %d" % (page, i + 1)
                # Its source where inspect finds it: Warp reads a kernel's.
                linecache.cache[name] = (len(block), None, block.splitlines(True), name)
                with self.subTest(page=page, snippet=i + 1):
                    exec(compile(block, name, "exec"), namespace)
            # A page's functions hold its namespace in a cycle: free its
            # graphs and producers before the next page waits for releases.
            namespace.clear()
            gc.collect()

    def test_snippets_run(self):
        tgtest.require_gpu()
        self.run_pages(PAGES)

    def test_host_snippets_run(self):
        for page in HOST_PAGES:
            self.assertTrue(snippets(page), page)
        self.run_pages(HOST_PAGES)

    def test_warp_snippets_run(self):
        try:
            import warp  # noqa: F401
        except ImportError:
            raise unittest.SkipTest("no warp (pip install warp-lang)")
        tgtest.require_gpu()
        self.run_pages(WARP_PAGES)


class Reference(unittest.TestCase):
    """Every public name of the package's modules is on the Sphinx reference
    page (a docstring's link to one that is not fails .ci/run sphinx)."""

    def test_every_public_name_is_documented(self):
        with open(os.path.join(DOC, "python", "reference.rst")) as f:
            page = f.read()
        for name in Docstrings.MODULES:
            module = importlib.import_module(name)
            for public in module.__all__:
                if public.startswith("__"):
                    continue
                with self.subTest(name="%s.%s" % (name, public)):
                    self.assertTrue(re.search(r"\b%s\.%s\b" % (re.escape(name),
                                                               re.escape(public)), page)
                                    or re.search(r"::\s+\S*\b%s\b" % re.escape(public),
                                                 page),
                                    "%s.%s is not in doc/python/reference.rst"
                                    % (name, public))


class Docstrings(unittest.TestCase):
    # track_gen.interop.torch imports torch: the others stand for it here.
    MODULES = ("track_gen", "track_gen.exec", "track_gen.seeds", "track_gen.interop",
               "track_gen.tracks")

    def test_every_public_name_has_one(self):
        for name in self.MODULES:
            module = importlib.import_module(name)
            with self.subTest(name=name):
                self.assertTrue(inspect.getdoc(module))
            for public in module.__all__:
                obj = getattr(module, public)
                if inspect.ismodule(obj) or not (callable(obj) or inspect.isclass(obj)):
                    continue
                with self.subTest(name="%s.%s" % (name, public)):
                    self.assertTrue(obj.__doc__ and obj.__doc__.strip())
                # An enum's members are its values: the class says what they mean.
                plain = inspect.isclass(obj) and not issubclass(obj, enum.Enum)
                members = vars(obj).items() if plain else ()
                for attr, member in members:
                    if attr.startswith("_") or not hasattr(member, "__get__"):
                        continue
                    with self.subTest(name="%s.%s.%s" % (name, public, attr)):
                        self.assertTrue(member.__doc__ and member.__doc__.strip())


if __name__ == "__main__":
    sys.exit(tap.main())
