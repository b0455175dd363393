#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# advance-fill-ncu.sh (issue 34): the seeds advance_fill kernel beside the
# D2D copy its bench row is held to, at E = 2^20 and 2^22, as Nsight
# Compute measures them: one markdown table of each one's time by events
# (as make bench takes it), ncu's duration, DRAM and L2 bandwidth, share of
# DRAM's peak, occupancy achieved and theoretical, and top two stall
# reasons.  Runs bench/tg-bench --seeds-ranges three times: alone (events),
# under ncu's kernel replay, and under its range replay, which also takes
# the copy where a copy engine runs it (kernel replay sees kernels only).
#
#   make ncu-advance-fill        # or: bench/advance-fill-ncu.sh [TG_BENCH]
#
# Environment: NCU (the ncu to run; else ncu on PATH, in $CUDA_HOME/bin or
# /opt/nvidia/nsight-compute/*/), PYTHON (python3), NCU_DIR (where the
# reports, CSV pages, logs and table.md go; advance-fill-ncu), NCU_CACHE
# (ncu --cache-control: none, the default, keeps L2 between launches as
# make bench's back-to-back launches do; all flushes it before each),
# NCU_LAUNCHES (launches a range; 3).  Clocks are left alone (METHOD.md).
# Exit status: 0, the table; 77, no GPU, or no ncu or counters (the table
# then has the events alone); 1, a failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bench=${1:-bench/tg-bench}
python=${PYTHON:-python3}
dir=${NCU_DIR:-advance-fill-ncu}
cache=${NCU_CACHE:-none}
launches=${NCU_LAUNCHES:-3}

mkdir -p "$dir" || exit 1
"$bench" --seeds-ranges="$launches" >"$dir/events.txt" 2>"$dir/events.log"
rc=$?
if [ $rc = 77 ]; then
  echo "advance-fill-ncu: SKIP: no CUDA GPU: $(tail -1 "$dir/events.log")"
  exit 77
elif [ $rc != 0 ]; then
  cat "$dir/events.log"
  echo "advance-fill-ncu: $bench --seeds-ranges=$launches failed (exit $rc)"
  exit 1
fi

# The table of the ranges tg-bench ran, with what else is given.
table() {
  "$python" "$here/advance_fill_ncu.py" --ranges "$dir/events.txt" "$@"
}

# The table of the events alone, and why there is no more.
skip() {
  table --note "$1" | tee "$dir/table.md"
  echo "advance-fill-ncu: SKIP: $1"
  exit 77
}

ncu=${NCU:-}
if [ -z "$ncu" ]; then
  for c in "$(command -v ncu)" "${CUDA_HOME:-/usr/local/cuda}/bin/ncu" \
    /opt/nvidia/nsight-compute/*/ncu; do
    if [ -n "$c" ] && [ -x "$c" ]; then ncu=$c; break; fi
  done
fi
if [ -z "$ncu" ] || ! command -v "$ncu" >/dev/null 2>&1; then
  skip "no ncu (NCU, PATH, \$CUDA_HOME/bin, /opt/nvidia/nsight-compute): events only"
fi
echo "advance-fill-ncu: $("$ncu" --version 2>&1 | tail -1) ($ncu), cache control $cache"

# ncu on tg-bench: the report $dir/$1.ncu-rep and its raw page as CSV
# ($dir/$1.csv); the rest of the arguments are ncu's.  Profiling starts off:
# tg-bench turns it on for its ranges alone (cudaProfilerStart/Stop), which
# are what a range replay replays; that replay refuses the option itself
# ("profile-from-start is not supported during range replay", ncu 2025.3).
profile() {
  name=$1
  shift
  from_start="--profile-from-start off"
  case " $* " in *" --replay-mode "*) from_start="" ;; esac
  rm -f "$dir/$name.ncu-rep" "$dir/$name.csv"
  # shellcheck disable=SC2086 # $from_start: two words or none
  "$ncu" $from_start --clock-control none --cache-control "$cache" -f \
    -o "$dir/$name" "$@" "$bench" --seeds-ranges="$launches" >"$dir/$name.log" 2>&1
  [ -f "$dir/$name.ncu-rep" ] || return 1
  # Base units where this ncu knows the option; the parser scales either way.
  "$ncu" --import "$dir/$name.ncu-rep" --csv --page raw --print-units base \
    >"$dir/$name.csv" 2>>"$dir/$name.log" ||
    "$ncu" --import "$dir/$name.ncu-rep" --csv --page raw \
      >"$dir/$name.csv" 2>>"$dir/$name.log"
}

# The first ==ERROR== of a log, or its last line.
why() {
  grep -m1 '==ERROR==' "$1" || tail -1 "$1"
}

kernel_metrics=$("$python" "$here/advance_fill_ncu.py" --metrics kernel) || exit 1
range_metrics=$("$python" "$here/advance_fill_ncu.py" --metrics range) || exit 1
range_least=$("$python" "$here/advance_fill_ncu.py" --metrics range-least) || exit 1
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats"

# The parser's options beyond the ranges: its notes and the range replay.
set --
# shellcheck disable=SC2086 # $sections: one word each
if ! profile kernel-replay $sections --metrics "$kernel_metrics"; then
  refused=$(why "$dir/kernel-replay.log")
  # Where the counters are out of reach (gVisor: LibraryNotLoaded; no
  # permission: ERR_NVGPUCTRPERM), nothing here can be measured by ncu.
  if grep -qE 'ERR_NVGPUCTRPERM|LibraryNotLoaded|Failed to initialize the profiler|not supported on this (device|platform)' \
    "$dir/kernel-replay.log"; then
    skip "ncu cannot read the counters here: $refused"
  fi
  # A metric this ncu does not know: the sections' own alone.
  if echo "$refused" | grep -qi metric && profile kernel-replay $sections; then
    set -- --note "kernel replay: the sections alone, ncu refused the metrics beside them: $refused"
  else
    tail -20 "$dir/kernel-replay.log"
    echo "advance-fill-ncu: ncu's kernel replay failed: $refused"
    exit 1
  fi
fi

# A replay of the ranges whose page has a result for each range.
ranges() {
  profile range-replay "$@" &&
    table --check-range-csv "$dir/range-replay.csv" >>"$dir/range-replay.log" 2>&1
}

# Range replay captures a range's API calls and replays them; where it
# refuses the metrics, time and DRAM bytes alone; where it refuses a call of
# the ranges (or leaves a range out), app-range replay runs tg-bench again
# for each pass instead.
if ranges --replay-mode range --metrics "$range_metrics"; then
  set -- "$@" --range-csv "$dir/range-replay.csv"
else
  refused=$(why "$dir/range-replay.log")
  if ranges --replay-mode range --metrics "$range_least"; then
    set -- "$@" --range-csv "$dir/range-replay.csv" \
      --note "range replay: time and DRAM bytes alone, ncu refused more: $refused"
  elif ranges --replay-mode app-range --metrics "$range_least"; then
    set -- "$@" --range-csv "$dir/range-replay.csv" \
      --note "app-range replay, time and DRAM bytes alone: range replay failed: $refused"
  else
    set -- "$@" --note "ncu's range replay failed (no copy-engine figures): $refused"
  fi
fi
grep -h '==ERROR==' "$dir/kernel-replay.log" "$dir/range-replay.log" | sort -u |
  sed 's/^/advance-fill-ncu: ncu said: /'

table --kernels "$dir/kernel-replay.csv" "$@" >"$dir/table.md"
rc=$?
cat "$dir/table.md"
[ $rc = 0 ] || echo "advance-fill-ncu: no table: the reports are in $dir"
exit $rc
