#!/bin/sh
# consumer.sh: installs libtrackgen into a DESTDIR, then builds tests/consumer.c
# with nothing but `pkg-config --cflags --libs trackgen` and runs it (on a GPU).
# Prints TAP.
set -u
echo "1..3"
build=${abs_top_builddir:?}
dest=$build/tests/consumer-install
rm -rf "$dest"
if ${MAKE:-make} -s -C "$build" install DESTDIR="$dest" >"$build/tests/consumer-install.log" 2>&1; then
  echo "ok 1 - make install DESTDIR"
else
  echo "not ok 1 - make install DESTDIR (see tests/consumer-install.log)"; exit 0
fi
prefix=$(sed -n 's/^prefix=//p' "$build/trackgen.pc")
libdir=$(find "$dest" -name trackgen.pc -path '*/pkgconfig/*' | head -1 | xargs dirname)
# A copy of the .pc with the DESTDIR prefix: --define-variable=prefix would
# also move the prefix of glib-2.0 (Requires), and its headers with it.
mkdir -p "$dest/pc"
sed "s|^prefix=.*|prefix=$dest$prefix|" "$libdir/trackgen.pc" >"$dest/pc/trackgen.pc"
PKG_CONFIG_PATH=$dest/pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}; export PKG_CONFIG_PATH
flags=$(${PKG_CONFIG:-pkg-config} --cflags --libs trackgen)
echo "# pkg-config --cflags --libs trackgen: $flags"
if ${CC:-cc} -o "$build/tests/consumer" "${abs_top_srcdir:?}/tests/consumer.c" $flags; then
  echo "ok 2 - consumer builds with pkg-config alone"
else
  echo "not ok 2 - consumer builds with pkg-config alone"; exit 0
fi
"$build/tests/consumer"; rc=$?
case $rc in
  0) echo "ok 3 - consumer runs on the GPU" ;;
  77) echo "ok 3 # SKIP no CUDA device" ;;
  *) echo "not ok 3 - consumer runs on the GPU (exit $rc)" ;;
esac
