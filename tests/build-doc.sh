#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# build-doc.sh: runs the commands of doc/build.md, as written, against the
# install that tests/consumer.sh made and moved to another directory (make
# check runs this test after that one); the page's pkg-config finds it
# through PKG_CONFIG_PATH alone.  A code block whose
# first line names a file ("/* NAME.c: ...", "# NAME.py: ...") is written to
# that file; then every sh block runs, in page order, in one directory, as
# one TAP test: it passes when it exits 0 (77: skipped, no GPU) and nvcc
# warned nothing about GLib's headers (#1217).  Every py block must compile.
# Python runs with its debug allocator, so a page's ctypes code that writes
# past a buffer Python allocated aborts its block.
# Prints TAP.
set -u
build=${abs_top_builddir:?}
src=${abs_top_srcdir:?}
moved=$build/tests/consumer-install/moved
work=$build/tests/build-doc
pc=$(find "$moved" -path '*/pkgconfig/trackgen.pc' 2>/dev/null | head -1)
if [ -z "$pc" ] && [ -d "$build/tests/consumer-install/stage" ]; then
  echo "1..0 # SKIP the install cannot move (libdir or includedir outside the prefix)"
  exit 0
elif [ -z "$pc" ]; then
  echo "1..1"
  echo "not ok 1 - no moved install from tests/consumer.sh in $moved"
  exit 0
fi
PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}; export PKG_CONFIG_PATH
# The nvcc of the toolkit that libtrackgen was built with comes first.
PATH=$(pkg-config --variable=cudaincludedir trackgen)/../bin:$PATH; export PATH

rm -rf "$work"
mkdir -p "$work/blocks" "$work/bin"
# The pages say cc; the build's compiler is $CC (a sanitizer build's carries
# its flags, which linking its instrumented archives needs).
wrap () {
  printf '#!/bin/sh\nexec %s "$@"\n' "$2" >"$work/bin/$1"
  chmod +x "$work/bin/$1"
}
[ -n "${CC:-}" ] && [ "$CC" != cc ] && wrap cc "$CC"
[ -n "${CXX:-}" ] && [ "$CXX" != c++ ] && wrap c++ "$CXX"
PATH=$work/bin:$PATH; export PATH
PYTHONMALLOC=debug; export PYTHONMALLOC
# python3 cannot load a library built with a sanitizer runtime it lacks.
case "${CC:-}" in *-fsanitize=*) sanitized=yes ;; *) sanitized=no ;; esac
for page in "$src/doc/build.md"; do
  awk -v dir="$work" -v page="$(basename "$page" .md)" '
    /^```/ && !inside {
      inside = 1; first = 1; n++; lang = substr($0, 4); block = ""; named = ""
      if (lang == "sh" || lang == "py")
        block = sprintf("%s/blocks/%s-%02d.%s", dir, page, n, lang)
      next
    }
    /^```/ { inside = 0; if (block != "") close(block); if (named != "") close(named); next }
    inside && first {
      first = 0
      if (match($0, /^(\/\*|#) [A-Za-z0-9_.-]+\.(c|cu|py): /)) {
        named = $0; sub(/^(\/\*|#) /, "", named); sub(/: .*/, "", named)
        named = dir "/" named
      }
    }
    inside && block != "" { print > block }
    inside && named != "" { print > named }
  ' "$page"
done

have_python=no
command -v python3 >/dev/null 2>&1 && have_python=yes
set -- "$work"/blocks/*.sh
echo "1..$(($# + 1))"
i=0
for block in "$@"; do
  i=$((i + 1))
  what="$(basename "$block" .sh): $(head -1 "$block" | sed 's/ *\\$//')"
  if [ $have_python = no ] && grep -q '^python3 ' "$block"; then
    echo "ok $i - $what # SKIP no python3"
    continue
  fi
  if [ $sanitized = yes ] && grep -q '^python3 ' "$block"; then
    echo "ok $i - $what # SKIP python3 cannot load a sanitizer build's library"
    continue
  fi
  (cd "$work" && sh -e "$block") >"$block.out" 2>"$block.err"
  rc=$?
  sed 's/^/# /' "$block.out" "$block.err"
  if grep -q '#1217' "$block.err"; then
    echo "not ok $i - $what (nvcc warned about GLib's headers)"
  elif [ $rc -eq 0 ]; then
    echo "ok $i - $what"
  elif [ $rc -eq 77 ]; then
    echo "ok $i - $what # SKIP no CUDA device"
  else
    echo "not ok $i - $what (exit $rc)"
  fi
done
i=$((i + 1))
if [ $have_python = no ]; then
  echo "ok $i - the pages' Python compiles # SKIP no python3"
elif python3 -m py_compile "$work"/blocks/*.py 2>"$work/py_compile.err"; then
  echo "ok $i - the pages' Python compiles"
else
  sed 's/^/# /' "$work/py_compile.err"
  echo "not ok $i - the pages' Python compiles"
fi
