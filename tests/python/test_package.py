# SPDX-License-Identifier: Apache-2.0
"""The track_gen package as built: its import, its native module's ABI and links.

Runs on the host (no GPU).  make check puts the build tree's python/ first
on PYTHONPATH; the native module must be a stable-ABI module that exports
PyInit__native alone and needs nothing but glibc's libraries (and libgcc_s)
at run time: no GLib, no CUDA runtime, no libpython.
"""
import os
import re
import shutil
import subprocess
import sys
import unittest

import tap
import track_gen
from track_gen import _native

# What every glibc system has: the C library's parts, the dynamic loader, and
# GCC's unwinder (C++ exceptions in the static libstdc++ unwind through it).
GLIBC_NEEDED = re.compile(r"(libc|libm|libdl|libpthread|librt|libgcc_s)\.so\.\d+"
                          r"|ld-linux[-\w]*\.so\.\d+")

# What the interpreter that imports the module provides: the C API.
PYTHON_SYMBOL = re.compile(r"^_?Py")


def binutils(tool, *args):
    """Output lines of a binutils tool run on the native module."""
    if shutil.which(tool) is None:
        raise unittest.SkipTest("no %s (binutils) on PATH" % tool)
    return subprocess.run([tool, *args, _native.__file__], check=True,
                          capture_output=True, text=True).stdout.splitlines()


class Import(unittest.TestCase):
    """import track_gen, in a fresh interpreter where needed."""

    def test_does_not_import_torch(self):
        # A finder first on sys.meta_path sees every import that is tried,
        # whether torch is installed or not.
        script = """if True:
            import sys

            class Spy:
                tried = []

                def find_spec(self, name, path=None, target=None):
                    if name.split(".")[0] == "torch":
                        self.tried.append(name)
                    return None

            sys.meta_path.insert(0, Spy())
            import track_gen
            assert not Spy.tried, "import track_gen tried to import %s" % Spy.tried
            assert "torch" not in sys.modules
        """
        run = subprocess.run([sys.executable, "-c", script], capture_output=True,
                             text=True)
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_version_is_the_configured_one(self):
        header = os.path.join(os.environ["abs_top_builddir"], "include", "trackgen",
                              "version.h")
        with open(header) as f:
            configured = re.search(r'#define TG_VERSION_STRING "(.*)"', f.read())[1]
        self.assertEqual(track_gen.__version__, configured)
        self.assertEqual(_native.__version__, configured)

    def test_pc_and_wheel_have_the_configured_version(self):
        # AC_INIT is the one place: version.h (the archives' and the
        # module's), trackgen.pc and the wheel's metadata (setup.py) take it.
        # What setup.py gives setup(), read with setup() replaced: setuptools
        # older than pyproject.toml's license field (PEP 639, setuptools 77)
        # cannot run it; .ci/run wheel checks the METADATA it writes.
        build, src = os.environ["abs_top_builddir"], os.environ["abs_top_srcdir"]
        with open(os.path.join(build, "trackgen.pc")) as f:
            pc = re.search(r"^Version: (.*)$", f.read(), re.M)[1]
        self.assertEqual(pc, track_gen.__version__)
        script = ("import runpy, setuptools, sys; "
                  "setuptools.setup = lambda **kw: print(kw['version']); "
                  "runpy.run_path(sys.argv[1], run_name='__main__')")
        wheel = subprocess.run([sys.executable, "-c", script, os.path.join(src, "setup.py")],
                               cwd=src, check=True, capture_output=True, text=True)
        self.assertEqual(wheel.stdout.split(), [track_gen.__version__])

    def test_native_module_calls_into_the_archives(self):
        # tg_policy_to_string() of libtrackgen-exec.a, and the live-object
        # counters of the same copy of it that the module's types use.
        self.assertEqual(_native.policy_name(0), "auto")
        self.assertEqual(len(_native.live_objects()), 8)

    def test_comes_from_the_build_tree(self):
        staged = os.path.join(os.environ["abs_top_builddir"], "python", "track_gen")
        self.assertEqual(os.path.dirname(os.path.abspath(track_gen.__file__)),
                         os.path.abspath(staged))
        self.assertEqual(os.path.dirname(_native.__file__), os.path.dirname(track_gen.__file__))

    def test_every_package_file_is_listed(self):
        # A file of python/track_gen/ missing from PY_PACKAGE_FILES in
        # Makefile.am would be left out of VPATH builds, make dist and wheels.
        listed = set(os.environ["PY_PACKAGE_FILES"].split())
        source = os.path.join(os.environ["abs_top_srcdir"], "python", "track_gen")
        for top, dirs, files in os.walk(source):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in files:
                # What an in-tree build writes there: the module, .dirstamp.
                if name == os.path.basename(_native.__file__) or name.startswith("."):
                    continue
                path = os.path.relpath(os.path.join(top, name),
                                       os.environ["abs_top_srcdir"])
                with self.subTest(path=path):
                    self.assertIn(path, listed)
        for path in listed:
            with self.subTest(path=path):
                self.assertTrue(os.path.isfile(os.path.join(os.environ["abs_top_builddir"],
                                                            path)), "not staged")


class NativeModule(unittest.TestCase):
    """track_gen/_native.abi3.so: the stable ABI and a self-contained link."""

    def test_is_a_stable_abi_module(self):
        self.assertEqual(os.path.basename(_native.__file__), "_native.abi3.so")

    def test_exports_pyinit_alone(self):
        defined = [line.split()[-1] for line in binutils("nm", "-D", "--defined-only")]
        self.assertEqual(defined, ["PyInit__native"])

    def test_needs_only_glibc(self):
        needed = [re.search(r"\[(.*)\]", line)[1]
                  for line in binutils("readelf", "-d", "-W") if "(NEEDED)" in line]
        self.assertTrue(needed)
        for name in needed:
            with self.subTest(needed=name):
                self.assertRegex(name, "^(%s)$" % GLIBC_NEEDED.pattern)

    def test_undefined_symbols_are_pythons_or_versioned(self):
        # Without -z defs (see Makefile.am), this is the check that nothing
        # of ours, GLib's or the CUDA runtime's was left out of the link:
        # glibc's and libgcc_s's symbols carry a version, Python's C API has
        # its prefix, weak references may stay unresolved.
        for line in binutils("nm", "-D", "--undefined-only"):
            kind, symbol = line.split()[-2:]
            if kind != "U" or "@" in symbol:
                continue
            with self.subTest(symbol=symbol):
                self.assertRegex(symbol, PYTHON_SYMBOL)


if __name__ == "__main__":
    sys.exit(tap.main())
