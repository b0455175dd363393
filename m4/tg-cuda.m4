# SPDX-License-Identifier: Apache-2.0
# TG_CHECK_CUDA
# -------------
# Finds the CUDA toolkit: --with-cuda=DIR, else nvcc on PATH, else /usr/local/cuda.
# Sets and substitutes NVCC, NVCCFLAGS, CUDA_HOME, CUDA_CFLAGS, CUDA_LIBS,
# CUDA_LIBDIR and CUDA_GENCODE (from --with-cuda-arch, or every default target
# that this nvcc supports, plus PTX for the newest one so newer GPUs JIT it).
AC_DEFUN([TG_CHECK_CUDA], [
AC_ARG_WITH([cuda],
  [AS_HELP_STRING([--with-cuda=DIR], [CUDA toolkit prefix (default: from nvcc on PATH, else /usr/local/cuda)])],
  [], [with_cuda=check])
AC_ARG_WITH([cuda-arch],
  [AS_HELP_STRING([--with-cuda-arch=LIST],
    [space- or comma-separated compute capabilities to build, e.g. "80 90" (default: 70 75 80 86 89 90, those nvcc supports, plus PTX for the newest)])],
  [], [with_cuda_arch=default])
AC_ARG_VAR([NVCC], [CUDA compiler driver])
AC_ARG_VAR([NVCCFLAGS], [flags for NVCC])

AS_CASE([$with_cuda],
  [no], [AC_MSG_ERROR([libtrackgen needs the CUDA toolkit; --without-cuda is not supported])],
  [check|yes], [
    AS_IF([test -z "$NVCC"], [AC_PATH_PROG([NVCC], [nvcc], [], [$PATH])])
    AS_IF([test -z "$NVCC" && test -x /usr/local/cuda/bin/nvcc], [NVCC=/usr/local/cuda/bin/nvcc])],
  [AS_IF([test -z "$NVCC"], [NVCC="$with_cuda/bin/nvcc"])])
AS_IF([test -z "$NVCC" || test ! -x "$NVCC"],
  [AC_MSG_ERROR([nvcc not found. Install the CUDA toolkit (>= 12.4) and put its bin/ on PATH, or pass --with-cuda=DIR or NVCC=/path/to/nvcc])])

AS_CASE([$with_cuda],
  [check|yes], [CUDA_HOME=`AS_DIRNAME(["$NVCC"])`; CUDA_HOME=`cd "$CUDA_HOME/.." && pwd`],
  [CUDA_HOME=$with_cuda])
CUDA_LIBDIR=$CUDA_HOME/lib64
AS_IF([test ! -d "$CUDA_LIBDIR"], [CUDA_LIBDIR=$CUDA_HOME/lib])
CUDA_CFLAGS="-I$CUDA_HOME/include"
# CUPTI's headers (checked mode): in include/ since CUDA 13, in extras/CUPTI
# before.  Its library is loaded at run time, from these folders if need be.
AS_IF([test -d "$CUDA_HOME/extras/CUPTI/include"],
  [CUDA_CFLAGS="$CUDA_CFLAGS -I$CUDA_HOME/extras/CUPTI/include"])
AC_DEFINE_UNQUOTED([TG_CUPTI_DIRS],
  ["$CUDA_LIBDIR:$CUDA_HOME/lib64:$CUDA_HOME/lib:$CUDA_HOME/extras/CUPTI/lib64"],
  [Folders where checked mode looks for libcupti.so.13 after the loader's own search.])
CUDA_LIBS="-L$CUDA_LIBDIR -lcudart -lstdc++"

tg_save_CPPFLAGS=$CPPFLAGS; tg_save_LIBS=$LIBS
CPPFLAGS="$CPPFLAGS $CUDA_CFLAGS"; LIBS="$CUDA_LIBS $LIBS"
AC_MSG_CHECKING([for the CUDA runtime >= 12.4 in $CUDA_HOME])
AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cuda_runtime_api.h>
#if CUDART_VERSION < 12040
#error CUDA runtime too old
#endif]], [[int n = 0; return (int) cudaGetDeviceCount (&n);]])],
  [AC_MSG_RESULT([yes])],
  [AC_MSG_RESULT([no])
   AC_MSG_ERROR([the CUDA runtime (cuda_runtime_api.h and libcudart, version >= 12.4) was not found under $CUDA_HOME; pass --with-cuda=DIR])])
AC_CHECK_HEADERS([cupti.h], [],
  [AC_MSG_WARN([CUPTI's headers (cupti.h, part of the CUDA toolkit) were not found under $CUDA_HOME/include or $CUDA_HOME/extras/CUPTI/include: checked mode (tg_set_checks) will be unavailable])])
AC_CHECK_HEADER([nvtx3/nvToolsExt.h], [],
  [AC_MSG_ERROR([NVTX 3 (nvtx3/nvToolsExt.h, header-only, part of the CUDA toolkit) was not found under $CUDA_HOME/include])])
CPPFLAGS=$tg_save_CPPFLAGS; LIBS=$tg_save_LIBS
# Checked mode loads CUPTI with dlopen (in libc since glibc 2.34).
AC_SEARCH_LIBS([dlopen], [dl])

AC_MSG_CHECKING([which GPU targets to build])
tg_supported=`"$NVCC" --list-gpu-arch 2>/dev/null | sed -n 's/^compute_//p' | tr '\n' ' '`
AS_IF([test "x$with_cuda_arch" = xdefault],
  [tg_wanted="70 75 80 86 89 90"; tg_filter=yes],
  [tg_wanted=`echo "$with_cuda_arch" | tr ',' ' '`; tg_filter=no])
CUDA_GENCODE=; tg_last=; tg_archs=
for tg_a in $tg_wanted; do
  AS_IF([test "x$tg_filter" = xyes && test -n "$tg_supported"],
    [AS_CASE([" $tg_supported "], [*" $tg_a "*], [], [continue])])
  CUDA_GENCODE="$CUDA_GENCODE -gencode=arch=compute_$tg_a,code=sm_$tg_a"
  tg_last=$tg_a; tg_archs="$tg_archs $tg_a"
done
AS_IF([test -z "$tg_last"], [AC_MSG_ERROR([no usable GPU target in "$tg_wanted" for $NVCC (it supports: $tg_supported)])])
CUDA_GENCODE="$CUDA_GENCODE -gencode=arch=compute_$tg_last,code=compute_$tg_last"
AC_MSG_RESULT([sm:$tg_archs, PTX: compute_$tg_last])

AC_SUBST([CUDA_HOME]) AC_SUBST([CUDA_CFLAGS]) AC_SUBST([CUDA_LIBS])
AC_SUBST([CUDA_LIBDIR]) AC_SUBST([CUDA_GENCODE])
])
