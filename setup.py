# SPDX-License-Identifier: Apache-2.0
"""Builds the track_gen sdist and wheel with the project's own build: configure
and make.

The backend is setuptools (pyproject.toml) with two of its commands driven by
make, rather than an in-tree PEP 517 backend: setuptools writes the metadata
(PKG-INFO, METADATA, the abi3 tag) from pyproject.toml, so nothing here
repeats the wheel format or the core-metadata rules; make stays the one
build of the archives and the native module.

- sdist: the release tree of ``make distdir`` (what ``make dist`` tars),
  plus setuptools' PKG-INFO, so ``python -m build`` builds the wheel from a
  tree with configure in it (no autotools needed), and ``pip install
  track_gen-VERSION.tar.gz`` works the same way.
- build_ext: the native module and the package beside it from ``make
  python-package``.

Both use a configured tree: the source tree when it was configured in place,
else a tree of their own under setuptools' build_temp.  Options for
configure go in the environment variable TG_CONFIGURE_FLAGS (for instance
--with-cuda-arch=90; the default builds every GPU target the README lists).
The module is on the stable ABI, so the wheel is cp310-abi3: one for every
CPython >= 3.10.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

TOP = os.path.dirname(os.path.abspath(__file__))


def project_version():
    """The version AC_INIT gives the whole project in configure.ac."""
    with open(os.path.join(TOP, "configure.ac")) as f:
        return re.search(r"AC_INIT\(\[libtrackgen\], \[([^]]+)\]", f.read())[1]


def configured_tree(build_temp):
    """A configured build tree: out of tree in *build_temp*, made once."""
    if os.path.exists(os.path.join(TOP, "config.status")):
        # configure refuses to build out of tree from a source tree that
        # was configured in place: that build is the one to use.
        return TOP
    build = os.path.abspath(os.path.join(build_temp, "libtrackgen"))
    if not os.path.exists(os.path.join(build, "Makefile")):
        if not os.path.exists(os.path.join(TOP, "configure")):
            subprocess.run(["autoreconf", "-fi"], cwd=TOP, check=True)
        os.makedirs(build, exist_ok=True)
        # The headers and the load check of the python that builds the wheel.
        subprocess.run([os.path.join(TOP, "configure"), "PYTHON=" + sys.executable,
                        *shlex.split(os.environ.get("TG_CONFIGURE_FLAGS", ""))],
                       cwd=build, check=True)
    return build


class BuildWithMake(build_ext):
    """Builds the package with configure and make, and copies it to the wheel."""

    def build_extension(self, ext):
        build = configured_tree(self.build_temp)
        subprocess.run(["make", "-j%d" % (os.cpu_count() or 1), "python-package"],
                       cwd=build, check=True)
        target = self.get_ext_fullpath(ext.name)
        staged = os.path.join(build, "python", "track_gen")
        if not os.path.isfile(os.path.join(staged, os.path.basename(target))):
            raise RuntimeError("make python-package made no %s in %s"
                               % (os.path.basename(target), staged))
        # The package as make staged it; dot files (automake's .dirstamp)
        # and bytecode are the build's, not the package's.
        shutil.copytree(staged, os.path.dirname(target), dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".*", "__pycache__"))


class SdistOfMakeDist(sdist):
    """The sdist is make dist's tree, with PKG-INFO and setup.cfg added."""

    def make_release_tree(self, base_dir, files):
        build = configured_tree(self.get_finalized_command("build_ext").build_temp)
        subprocess.run(["make", "distdir", "distdir=" + os.path.abspath(base_dir)],
                       cwd=build, check=True)
        # setuptools' own list (setup.py, pyproject.toml, README.md, the
        # egg-info) is in make's tree already, but for the egg-info.
        super().make_release_tree(base_dir, files)


setup(
    version=project_version(),
    # make stages the package's Python files beside the module: build_ext
    # copies them all, so setuptools has no packages of its own to collect.
    packages=[],
    ext_modules=[Extension("track_gen._native", sources=[], py_limited_api=True)],
    cmdclass={"build_ext": BuildWithMake, "sdist": SdistOfMakeDist},
    options={"bdist_wheel": {"py_limited_api": "cp310"}},
)
