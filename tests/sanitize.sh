#!/bin/sh
# sanitize.sh: runs the GPU test programs under compute-sanitizer (memcheck,
# racecheck, synccheck) and prints one TAP line per program and tool.  API
# errors are not reported: the tests provoke them on purpose (refusals).
# Run on a machine with a GPU: make sanitize.
set -u
build=${abs_top_builddir:-.}
tools="memcheck racecheck synccheck"
programs="exec-test condition-test interop-test seeds-test policy-test examples-test"
if ! command -v compute-sanitizer >/dev/null 2>&1; then
  echo "1..0 # SKIP compute-sanitizer not found"; exit 0
fi
set -- $tools; n_tools=$#
set -- $programs; echo "1..$(( n_tools * $# ))"
i=0; failed=0
for p in $programs; do
  for tool in $tools; do
    i=$((i + 1))
    log=$build/tests/sanitize-$tool-$p.log
    compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 9 \
      --print-limit 10 "$build/tests/$p" >"$log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1 | sed 's/=* *//')
    if [ $rc -eq 0 ]; then
      echo "ok $i - $tool $p: $summary"
    else
      echo "not ok $i - $tool $p (exit $rc): $summary; see $log"; failed=1
    fi
  done
done
exit $failed
