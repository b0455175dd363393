#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# consumer.sh: installs libtrackgen into a DESTDIR, moves the installed tree
# (DESTDIR + prefix) to another directory, and builds tests/consumer.c against
# the moved tree with nothing but
#   PKG_CONFIG_PATH=MOVED/lib/pkgconfig pkg-config --cflags --libs trackgen
# (trackgen.pc finds the tree from its own place, ${pcfiledir}), then runs it
# (on a GPU).  tests/build-doc.sh builds against the same moved tree.  Needs
# prefix, from make check.  Prints TAP.
set -u
set -f
echo "1..8"
build=${abs_top_builddir:?}
prefix=${prefix:?the configured prefix, as make check passes it}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
dest=$build/tests/consumer-install
stage=$dest/stage
moved=$dest/moved
rm -rf "$dest"
mkdir -p "$dest"
if ${MAKE:-make} -s -C "$build" install DESTDIR="$stage" >"$build/tests/consumer-install.log" 2>&1; then
  echo "ok 1 - make install DESTDIR"
else
  echo "not ok 1 - make install DESTDIR (see tests/consumer-install.log)"; exit 0
fi

# The tree moves when the .pc, the headers and the archives are all in it.
tree=$stage$prefix; tree=${tree%/}
find_in () { find "$1" -path "$2" 2>/dev/null | head -1; }
pc=$(find_in "$tree" '*/pkgconfig/trackgen.pc')
header=$(find_in "$tree" '*/trackgen/trackgen.h')
archive=$(find_in "$tree" '*/libtrackgen-exec.a')
if [ -z "$pc" ] || [ -z "$header" ] || [ -z "$archive" ]; then
  for f in '*/pkgconfig/trackgen.pc' '*/trackgen/trackgen.h' '*/libtrackgen-exec.a'; do
    [ -n "$(find_in "$stage" "$f")" ] && continue
    echo "not ok 2 - make install installed no $f"; exit 0
  done
  for n in 2 3 4 5 6 7 8; do
    echo "ok $n # SKIP libdir or includedir is outside the prefix: the install cannot move"
  done
  exit 0
fi
if mv "$tree" "$moved" && rm -rf "$stage"; then
  echo "ok 2 - the installed tree moves to another directory"
else
  echo "not ok 2 - the installed tree moves to another directory"; exit 0
fi
pcdir=$(dirname "$moved${pc#"$tree"}")
echo "# PKG_CONFIG_PATH=$pcdir"
PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}; export PKG_CONFIG_PATH

cflags=$($PKG_CONFIG --cflags trackgen)
libs=$($PKG_CONFIG --libs trackgen)
flags="$cflags $libs"
echo "# pkg-config --cflags --libs trackgen: $flags"
has_word () { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }
real_moved=$(cd "$moved" && pwd -P)
# DIR exists and lies inside the moved tree, symbolic links resolved.
in_moved () {
  d=$(cd "$1" 2>/dev/null && pwd -P) || return 1
  case $d/ in "$real_moved"/*) return 0 ;; esac
  return 1
}
# Every -I or -L of FLAGS names a directory that exists.
dirs_exist () {
  for w in $1; do
    case $w in
      -I* | -L*) [ -d "${w#-?}" ] || { echo "# no such directory: $w"; return 1; } ;;
    esac
  done
}

includedir=$($PKG_CONFIG --variable=includedir trackgen)
if in_moved "$includedir" && [ -f "$includedir/trackgen/trackgen.h" ] \
    && has_word "$cflags" "-I$includedir" && dirs_exist "$cflags"; then
  echo "ok 3 - --cflags name the moved tree's headers ($includedir)"
else
  echo "not ok 3 - --cflags name the moved tree's headers ($includedir)"
fi

libdir=$($PKG_CONFIG --variable=libdir trackgen)
if in_moved "$libdir" && [ -f "$libdir/libtrackgen-exec.a" ] \
    && [ -f "$libdir/libtrackgen-seeds.a" ] && [ -f "$libdir/libtrackgen-interop.a" ] \
    && has_word "$libs" "-L$libdir" && dirs_exist "$libs"; then
  echo "ok 4 - --libs name the moved tree's archives ($libdir)"
else
  echo "not ok 4 - --libs name the moved tree's archives ($libdir)"
fi

# Requires: glib-2.0 needs no redefined prefix: GLib's flags come through
# as GLib's own .pc gives them.
missing=
for w in $($PKG_CONFIG --cflags --libs glib-2.0); do
  has_word "$flags" "$w" || missing="$missing $w"
done
if [ -z "$missing" ]; then
  echo "ok 5 - GLib's flags come through Requires unchanged"
else
  echo "not ok 5 - GLib's flags come through Requires unchanged (missing:$missing)"
fi

# Another CUDA toolkit: --define-variable of our CUDA directories changes
# those two flags and nothing else.
cudainc=$($PKG_CONFIG --variable=cudaincludedir trackgen)
cudalib=$($PKG_CONFIG --variable=cudalibdir trackgen)
other=/nonexistent/other-cuda
alt=$($PKG_CONFIG --define-variable=cudaincludedir=$other/include \
  --define-variable=cudalibdir=$other/lib --cflags --libs trackgen)
without () {
  out=
  for w in $1; do
    case $w in "$2" | "$3") ;; *) out="$out $w" ;; esac
  done
  echo "$out"
}
if has_word "$alt" "-I$other/include" && has_word "$alt" "-L$other/lib" \
    && [ "$(without "$alt" "-I$other/include" "-L$other/lib")" \
         = "$(without "$flags" "-I$cudainc" "-L$cudalib")" ]; then
  echo "ok 6 - --define-variable=cudaincludedir/cudalibdir moves only the CUDA flags"
else
  echo "# with another toolkit: $alt"
  echo "not ok 6 - --define-variable=cudaincludedir/cudalibdir moves only the CUDA flags"
fi

if ${CC:-cc} -o "$build/tests/consumer" "${abs_top_srcdir:?}/tests/consumer.c" $flags; then
  echo "ok 7 - consumer builds against the moved tree with pkg-config alone"
else
  echo "not ok 7 - consumer builds against the moved tree with pkg-config alone"; exit 0
fi
"$build/tests/consumer"; rc=$?
case $rc in
  0) echo "ok 8 - consumer runs on the GPU" ;;
  77) echo "ok 8 # SKIP no CUDA device" ;;
  *) echo "not ok 8 - consumer runs on the GPU (exit $rc)" ;;
esac
