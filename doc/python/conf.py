# SPDX-License-Identifier: Apache-2.0
"""Sphinx configuration of track_gen's Python documentation.

The reference (reference.rst) comes from the docstrings of the installed
package; the guide's pages are the markdown pages of doc/, which Doxygen
renders for the C reference too.  Each page here is a stub naming its page
(```{include} ../NAME.md```); read_page() puts the page in its place, with
Doxygen's markup made MyST's, so that both sets share one text: {#id}
anchors become labels, @ref links to them, \\snippet and \\image the
snippet's lines and the figure, [TOC] the page's contents, #TG_NAME
autolinks code.  An @ref to a name no page defines is a group of the C
reference, which lies beside this HTML (../html/, as make install puts both).
"""
import os
import re

import track_gen

project = "track_gen"
author = "the libtrackgen authors"
release = track_gen.__version__
version = ".".join(release.split(".")[:2])

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser", "sphinx_copybutton"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
nitpicky = True
# Python's and torch's own names: no inventory of theirs is at hand offline
# (intersphinx would fetch one), so they are not links; every name of
# track_gen's must resolve.
nitpick_ignore_regex = [
    ("py:(class|obj|data|exc)",
     r"(int|str|bytes|bool|float|object|None|type|Ellipsis"
     r"|BaseException|Exception|ValueError|RuntimeError|UserWarning|ImportError"
     r"|Any|Callable|Dict|Iterator|List|Optional|Sequence|Tuple|Union"
     r"|(typing|collections\.abc|contextlib|enum|torch|warp|wp)\..*)"),
]

# The guide shows torch code; building the reference needs no torch.
autodoc_mock_imports = ["torch", "warp"]
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 0
# Furo, the theme of NVIDIA Warp's documentation: the title with the
# version and the search box head the sidebar, the C reference follows the
# pages (_templates/sidebar/c-reference.html); a copy button on each code
# block (sphinx-copybutton).
html_theme = "furo"
html_title = "track_gen %s" % release
templates_path = ["_templates"]
html_sidebars = {"**": [
    "sidebar/brand.html", "sidebar/search.html", "sidebar/scroll-start.html",
    "sidebar/navigation.html", "sidebar/c-reference.html", "sidebar/scroll-end.html"]}

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.dirname(HERE)
STUB = re.compile(r"\A```\{include\} (\S+\.md)\n```\n?\Z")
FENCE = re.compile(r"^(```|~~~)")


def labels():
    """Every {#id} anchor of the pages of doc/."""
    found = set()
    for name in os.listdir(DOC):
        if name.endswith(".md"):
            with open(os.path.join(DOC, name)) as f:
                found.update(re.findall(r"\{#([\w-]+)\}", f.read()))
    return found


def snippet(name, tag):
    """\\snippet FILE TAG: the lines between the file's two //! [TAG] marks."""
    language = "cpp" if name.endswith(".cu") else "c"
    return ("```{literalinclude} ../snippets/%s\n:language: %s\n"
            ":start-after: //! [%s]\n:end-before: //! [%s]\n```"
            % (name, language, tag, tag))


def to_myst(text, known):
    """A page of doc/ with Doxygen's markup made MyST's (code blocks kept)."""
    def ref(m):
        target = m[1]
        if target in known:
            return "{ref}`%s`" % target
        return '<a href="../html/group__%s.html">%s (C reference)</a>' % (target, target)

    out, in_code = [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            in_code = not in_code
        elif not in_code:
            heading = re.match(r"^(#+ .*?)\s*\{#([\w-]+)\}\s*$", line)
            if heading:
                out += ["(%s)=" % heading[2], heading[1]]
                continue
            m = re.match(r"^\\snippet (\S+) (\S+)\s*$", line)
            if m:
                out.append(snippet(m[1], m[2]))
                continue
            if line.strip() == "[TOC]":
                out.append("```{contents}\n:local:\n```")
                continue
            m = re.match(r'^\\image html (\S+) "(.*)"\s*$', line)
            if m:
                out.append("```{figure} ../images/%s\n%s\n```" % (m[1], m[2]))
                continue
            line = re.sub(r"@ref ([\w-]+)", ref, line)
            line = re.sub(r"(?<![\w`])#(T[Gg]_?\w+)", r"`\1`", line)
        out.append(line)
    return "\n".join(out)


def read_page(app, docname, source):
    stub = STUB.match(source[0])
    if stub is None:
        return
    path = os.path.normpath(os.path.join(HERE, stub[1]))
    app.env.note_dependency(path)
    with open(path) as f:
        source[0] = to_myst(f.read(), labels())


def setup(app):
    app.connect("source-read", read_page)
