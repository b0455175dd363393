#!/bin/sh
# sanitize.sh: runs the GPU test programs under compute-sanitizer (memcheck,
# racecheck, synccheck) and prints one TAP line per program and tool.  API
# errors are not reported: the tests provoke them on purpose (refusals).
# Run on a machine with a GPU: make sanitize.  TG_SANITIZE_TIMEOUT: seconds
# before a stuck run is killed and reported (default 300).
set -u
build=${abs_top_builddir:-.}
tools="memcheck racecheck synccheck"
programs="exec-test condition-test interop-test seeds-test policy-test examples-test
threads-test"
limit=${TG_SANITIZE_TIMEOUT:-300}

# The test cases that launch kernels with block barriers (__syncthreads)
# inside a CUDA graph WHILE body: the loop stage with the block sum, and
# every example case that runs the track producer's "relax" loop stage under
# REPLAY, RECORD or AUTO (which replays).  synccheck and racecheck flag such
# barriers in plain CUDA too (tests/sanitize-repro.cu).  They are skipped
# under a tool only when it flags the repro's WHILE run and not its eager and
# plain-graph runs; never under memcheck, never whole programs.
barrier_in_while="
condition-test:/conditions/loop/block-wide-kernel-in-body
examples-test:/examples/track/policies-bit-identical
examples-test:/examples/track/conditional-record
examples-test:/examples/track/mask-keeps-unmasked-envs
examples-test:/examples/track/reproducible-from-seed-and-epoch
examples-test:/examples/track/svg-stage
"
limitation="compute-sanitizer flags block barriers in WHILE bodies"

# threads-test's calls per thread (1000 in make check): racecheck is the
# slowest tool.
threads_calls ()
{
  case $1 in
    racecheck) echo 20 ;;
    *) echo 200 ;;
  esac
}

# sanitize LOG TOOL PROGRAM [ARG]...: one run under TOOL, killed after
# $limit seconds; sets rc, secs, summary (the tool's last summary line) and
# errors (the error count of that summary, empty without one).
sanitize ()
{
  log=$1; shift
  start=$(date +%s)
  timeout -k 10 "$limit" compute-sanitizer --report-api-errors no --error-exitcode 9 \
    --print-limit 10 --tool "$@" >"$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1 | sed 's/=* *//')
  errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) error.*/\1/p' "$log" | tail -1)
}

if ! command -v compute-sanitizer >/dev/null 2>&1; then
  echo "1..0 # SKIP compute-sanitizer not found"; exit 0
fi
set -- $tools; n_tools=$#
set -- $programs; echo "1..$(( n_tools * $# ))"
if ! command -v timeout >/dev/null 2>&1; then
  echo "Bail out! timeout (coreutils) not found"; exit 1
fi
# A renamed case would otherwise run, and fail, under the tools it is
# skipped for.
for entry in $barrier_in_while; do
  if ! "$build/tests/${entry%%:*}" -l 2>/dev/null | grep -qxF "${entry#*:}"; then
    echo "Bail out! tests/${entry%%:*} (built?) lists no test case ${entry#*:};" \
      "update the skip list of $0"; exit 1
  fi
done

# Which tools flag the repro's WHILE run alone.
confirmed=""
for tool in synccheck racecheck; do
  controls_clean=yes
  for mode in eager graph while; do
    sanitize "$build/tests/sanitize-$tool-repro-$mode.log" "$tool" \
      "$build/tests/sanitize-repro" "$mode"
    echo "# $tool sanitize-repro $mode: exit $rc, ${summary:-no summary}, ${secs} s"
    if [ "$mode" = while ]; then
      [ "$rc" -eq 9 ] || [ "${errors:-0}" -gt 0 ]
      while_flagged=$?
    elif [ "$rc" -ne 0 ] || [ "${errors:-}" != 0 ]; then
      controls_clean=no
    fi
  done
  repro_log=$build/tests/sanitize-$tool-repro-while.log
  if [ $controls_clean = yes ] && [ "$while_flagged" -eq 0 ]; then
    confirmed="$confirmed $tool"
    echo "# tool limitation confirmed for $tool: the repro's WHILE run is flagged," \
      "its eager and plain-graph runs are clean; see $repro_log"
  else
    echo "# $tool: no tool limitation confirmed by the repro; no test case skipped"
  fi
done

i=0; failed=0
for p in $programs; do
  for tool in $tools; do
    i=$((i + 1))
    set --; skipped=""
    case " $confirmed " in
      *" $tool "*)
        for entry in $barrier_in_while; do
          case $entry in
            "$p":*) set -- "$@" -s "${entry#*:}"; skipped="$skipped ${entry#*:}" ;;
          esac
        done ;;
    esac
    log=$build/tests/sanitize-$tool-$p.log
    TG_THREADS_CALLS=$(threads_calls "$tool"); export TG_THREADS_CALLS
    sanitize "$log" "$tool" "$build/tests/$p" "$@"
    why="$limitation, see $build/tests/sanitize-$tool-repro-while.log"
    case $rc in
      0) echo "ok $i - $tool $p: $summary${skipped:+ # SKIP$skipped: $why}" ;;
      124|137) echo "not ok $i - $tool $p (timed out after $limit s); see $log"
        failed=1 ;;
      *) echo "not ok $i - $tool $p (exit $rc): ${summary:-no summary}; see $log"
        failed=1 ;;
    esac
    # A failure keeps the note out of its line, where a TAP SKIP directive
    # could pass for a skip.
    if [ "$rc" -ne 0 ] && [ -n "$skipped" ]; then echo "# skipped$skipped: $why"; fi
    case $p in
      threads-test) echo "# $tool $p: $secs s (TG_THREADS_CALLS=$TG_THREADS_CALLS)" ;;
      *) echo "# $tool $p: $secs s" ;;
    esac
  done
done
exit $failed
