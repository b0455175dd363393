"""The Python snippets of doc/python.md, doc/torch.md and doc/tracks.md, each
page's run in order in one namespace on a GPU (each one compiled
everywhere), so the pages cannot show code that does not work."""
import gc
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


def snippets(page):
    with open(os.path.join(DOC, page)) as f:
        return re.findall(r"^```python\n(.*?)^```", f.read(), re.S | re.M)


class Pages(unittest.TestCase):
    def test_snippets_compile(self):
        for page in PAGES:
            blocks = snippets(page)
            self.assertGreater(len(blocks), 2, page)
            for i, block in enumerate(blocks):
                compile(block, "%s, snippet %d" % (page, i + 1), "exec")

    def test_snippets_run(self):
        tgtest.require_gpu()
        for page in PAGES:
            namespace = {"__name__": "doc_" + page[:-3]}
            for i, block in enumerate(snippets(page)):
                with self.subTest(page=page, snippet=i + 1):
                    exec(compile(block, "%s, snippet %d" % (page, i + 1), "exec"),
                         namespace)
            # A page's functions hold its namespace in a cycle: free its
            # graphs and producers before the next page waits for releases.
            namespace.clear()
            gc.collect()


if __name__ == "__main__":
    sys.exit(tap.main())
