"""Builds the track_gen wheel with the project's own build: configure and make.

`pip install .` and `pip wheel .` run this from a clone or a release
tarball.  The native module and the package beside it come from make
python-package (Makefile.am), in a build tree of their own under setuptools'
build_temp; options for configure go in the environment variable
TG_CONFIGURE_FLAGS (for instance --with-cuda-arch=90).  The module is on the
stable ABI, so the wheel is cp310-abi3: one for every CPython >= 3.10.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

TOP = os.path.dirname(os.path.abspath(__file__))


def project_version():
    """The version AC_INIT gives the whole project in configure.ac."""
    with open(os.path.join(TOP, "configure.ac")) as f:
        return re.search(r"AC_INIT\(\[libtrackgen\], \[([^]]+)\]", f.read())[1]


class BuildWithMake(build_ext):
    """Builds the package with configure and make, and copies it to the wheel."""

    def build_extension(self, ext):
        build = self._configured_tree()
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

    def _configured_tree(self):
        """A configured build tree: out of tree in build_temp, made once."""
        if os.path.exists(os.path.join(TOP, "config.status")):
            # configure refuses to build out of tree from a source tree that
            # was configured in place: that build is the one to use.
            return TOP
        build = os.path.abspath(os.path.join(self.build_temp, "libtrackgen"))
        if not os.path.exists(os.path.join(build, "Makefile")):
            if not os.path.exists(os.path.join(TOP, "configure")):
                subprocess.run(["autoreconf", "-fi"], cwd=TOP, check=True)
            os.makedirs(build, exist_ok=True)
            # The headers and the load check of the python that builds the wheel.
            subprocess.run([os.path.join(TOP, "configure"), "PYTHON=" + sys.executable,
                            *shlex.split(os.environ.get("TG_CONFIGURE_FLAGS", ""))],
                           cwd=build, check=True)
        return build


setup(
    version=project_version(),
    # make stages the package's Python files beside the module: build_ext
    # copies them all, so setuptools has no packages of its own to collect.
    packages=[],
    ext_modules=[Extension("track_gen._native", sources=[], py_limited_api=True)],
    cmdclass={"build_ext": BuildWithMake},
    options={"bdist_wheel": {"py_limited_api": "cp310"}},
)
