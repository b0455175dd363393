# SPDX-License-Identifier: Apache-2.0
# TG_CHECK_PYTHON_MODULE
# ----------------------
# Whether the Python package's native module, python/track_gen/_native.abi3.so,
# can be built.  It links the archives, GLib, the C++ runtime and the CUDA
# runtime statically, with every symbol but PyInit__native hidden, so that
# the installed package needs the NVIDIA driver and glibc alone.  That needs
# CPython >= 3.10 with its headers ($PYTHON), the static archives of GLib
# and of what it links (pkg-config --static), libstdc++.a,
# $CUDA_LIBDIR/libcudart_static.a, and a linker that takes
# --exclude-libs,ALL and a version script.  Run after PKG_CHECK_MODULES for
# GLib and TG_CHECK_CUDA.
#
# Sets and substitutes PYTHON_CPPFLAGS and PYTHON_MODULE_LIBS; sets
# tg_python_module to "yes", or to why the module cannot be built, which
# configure says in a notice: never an error, the rest builds without it.
AC_DEFUN([TG_CHECK_PYTHON_MODULE], [
AC_REQUIRE([PKG_PROG_PKG_CONFIG])
tg_python_module=yes
PYTHON_CPPFLAGS=
PYTHON_MODULE_LIBS=

AC_MSG_CHECKING([for CPython >= 3.10 headers])
AS_IF([test "x$cross_compiling" = xyes],
  [tg_python_module="not when cross-compiling"],
  [test "x$PYTHON" = "x:"],
  [tg_python_module="no python3 found"],
  [! "$PYTHON" -c 'import sys; sys.exit(sys.implementation.name != "cpython" or sys.version_info < (3, 10))' 2>/dev/null],
  [tg_python_module="$PYTHON is not CPython >= 3.10"],
  [tg_python_include=`"$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()@<:@"include"@:>@)'`
   PYTHON_CPPFLAGS="-I$tg_python_include"
   tg_save_CPPFLAGS=$CPPFLAGS
   CPPFLAGS="$CPPFLAGS $PYTHON_CPPFLAGS"
   AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#define Py_LIMITED_API 0x030A0000
#include <Python.h>]], [[return PyModuleDef_Init (NULL) == NULL;]])],
     [], [tg_python_module="no usable Python.h in $tg_python_include"])
   CPPFLAGS=$tg_save_CPPFLAGS])
AS_IF([test "x$tg_python_module" = xyes],
  [AC_MSG_RESULT([$tg_python_include])], [AC_MSG_RESULT([no])])

# Each -lNAME of GLib's static link line, and the C++ runtime that the
# kernels' host code needs, becomes the path of libNAME.a (searched in the
# -L directories, then where $CC looks), except glibc's own libraries,
# which every process has.
AS_IF([test "x$tg_python_module" = xyes], [
  AC_MSG_CHECKING([for the static archives of GLib and the C++ runtime])
  tg_libdirs=`$PKG_CONFIG --variable=libdir glib-2.0`
  tg_missing=
  for tg_arg in `$PKG_CONFIG --static --libs glib-2.0` -lstdc++; do
    AS_CASE([$tg_arg],
      [-L*], [tg_libdirs="$tg_libdirs `echo "$tg_arg" | sed 's/^-L//'`"],
      [-lc|-lm|-ldl|-lpthread|-lrt], [PYTHON_MODULE_LIBS="$PYTHON_MODULE_LIBS $tg_arg"],
      [-l*], [
        tg_archive=lib`echo "$tg_arg" | sed 's/^-l//'`.a
        tg_found=
        for tg_dir in $tg_libdirs; do
          AS_IF([test -z "$tg_found" && test -f "$tg_dir/$tg_archive"], [tg_found=$tg_dir/$tg_archive])
        done
        AS_IF([test -z "$tg_found"], [tg_found=`$CC -print-file-name=$tg_archive`])
        AS_IF([test -f "$tg_found"],
          [PYTHON_MODULE_LIBS="$PYTHON_MODULE_LIBS $tg_found"],
          [tg_missing="$tg_missing $tg_archive"])],
      [PYTHON_MODULE_LIBS="$PYTHON_MODULE_LIBS $tg_arg"])
  done
  AS_IF([test -z "$tg_missing"],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no:$tg_missing])
     tg_python_module="no$tg_missing (libglib2.0-dev, libpcre2-dev, libstdc++-12-dev ship them)"])])

AS_IF([test "x$tg_python_module" = xyes], [
  AC_MSG_CHECKING([for $CUDA_LIBDIR/libcudart_static.a])
  AS_IF([test -f "$CUDA_LIBDIR/libcudart_static.a"],
    [AC_MSG_RESULT([yes])
     # libcudart_static.a dlopen()s the driver and uses threads and clocks.
     PYTHON_MODULE_LIBS="$PYTHON_MODULE_LIBS $CUDA_LIBDIR/libcudart_static.a -ldl -lrt -lpthread"],
    [AC_MSG_RESULT([no])
     tg_python_module="no libcudart_static.a in $CUDA_LIBDIR"])])

# One link of a shared object as the module's: hidden archives, a version
# script, GLib and the CUDA runtime pulled in for real (so a non-PIC archive
# fails here, not in make); then $PYTHON loads it, as import would (a
# sanitizer runtime, for one, cannot be loaded into a python that lacks it).
AS_IF([test "x$tg_python_module" = xyes], [
  AC_MSG_CHECKING([whether $PYTHON can load a shared object with these archives hidden in it])
  cat >conftest.map <<_TG_EOF
{ global: main; local: *; };
_TG_EOF
  tg_save_CPPFLAGS=$CPPFLAGS; tg_save_CFLAGS=$CFLAGS; tg_save_LDFLAGS=$LDFLAGS; tg_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $GLIB_CFLAGS $CUDA_CFLAGS"
  CFLAGS="$CFLAGS -fPIC"
  LDFLAGS="$LDFLAGS -shared -Wl,--exclude-libs,ALL -Wl,--version-script=conftest.map"
  LIBS="$PYTHON_MODULE_LIBS $LIBS"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <glib.h>
#include <cuda_runtime_api.h>]], [[int n = 0;
g_free (g_strdup ("x"));
return (int) cudaGetDeviceCount (&n);]])],
    [AS_IF(["$PYTHON" -c 'import ctypes, sys; ctypes.CDLL(sys.argv@<:@1@:>@)' "./conftest$EXEEXT" >&AS_MESSAGE_LOG_FD 2>&1],
       [], [tg_python_module="$PYTHON cannot load a shared object that $CC makes (a sanitizer build?): see config.log"])],
    [tg_python_module="cannot link a shared object with --exclude-libs,ALL, a version script and the static archives: see config.log"])
  CPPFLAGS=$tg_save_CPPFLAGS; CFLAGS=$tg_save_CFLAGS; LDFLAGS=$tg_save_LDFLAGS; LIBS=$tg_save_LIBS
  rm -f conftest.map
  AS_IF([test "x$tg_python_module" = xyes], [AC_MSG_RESULT([yes])], [AC_MSG_RESULT([no])])])

AC_SUBST([PYTHON_CPPFLAGS])
AC_SUBST([PYTHON_MODULE_LIBS])
])
