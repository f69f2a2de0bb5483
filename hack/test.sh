#!/usr/bin/env bash
# Runs go test over the given packages and closes with one summary line, so a
# run that executed no test is visible at a glance.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
go test -count=1 -timeout 40m -v "$@" 2>&1 | tee "$log" | grep -v -E '^\s*(=== (RUN|PAUSE|CONT|NAME)|--- PASS|PASS$)'
rc=${PIPESTATUS[0]}
passed=$(grep -c -E '^\s*--- PASS' "$log")
failed=$(grep -c -E '^\s*--- FAIL' "$log")
skipped=$(grep -c -E '^\s*--- SKIP' "$log")
echo
echo "tests: $passed passed, $failed failed, $skipped skipped"
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  echo "go test exited $rc without a failing test: a build or setup error above"
fi
exit "$rc"
