"""doc/python.md's snippets, run in order in one namespace on a GPU (each one
compiled everywhere), so the page cannot show code that does not work."""
import os
import re
import sys
import unittest

import tap
import tgtest

PAGE = os.path.join(os.environ.get("abs_top_srcdir",
                                   os.path.join(os.path.dirname(__file__), "..", "..")),
                    "doc", "python.md")


def snippets():
    with open(PAGE) as f:
        return re.findall(r"^```python\n(.*?)^```", f.read(), re.S | re.M)


class Page(unittest.TestCase):
    def test_snippets_compile(self):
        blocks = snippets()
        self.assertGreater(len(blocks), 3)
        for i, block in enumerate(blocks):
            compile(block, "%s, snippet %d" % (PAGE, i + 1), "exec")

    def test_snippets_run(self):
        tgtest.require_gpu()
        namespace = {"__name__": "doc_python"}
        for i, block in enumerate(snippets()):
            with self.subTest(snippet=i + 1):
                exec(compile(block, "%s, snippet %d" % (PAGE, i + 1), "exec"), namespace)


if __name__ == "__main__":
    sys.exit(tap.main())
