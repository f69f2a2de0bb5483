#!/usr/bin/env bash
# Runs go test over the given packages and closes with one summary line, so a
# run that executed no test is visible at a glance.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
go test -count=1 -timeout 40m -v "$@" 2>&1 | tee "$log" | grep --line-buffered -v -E '^\s*(=== (RUN|PAUSE|CONT|NAME)|--- PASS|PASS$)'
rc=${PIPESTATUS[0]}
passed=$(grep -c -E '^\s*--- PASS' "$log")
failed=$(grep -c -E '^\s*--- FAIL' "$log")
skipped=$(grep -c -E '^\s*--- SKIP' "$log")
echo
if [ "$failed" -gt 0 ]; then
  # Each failed test's last lines again, at the end, where a long run's
  # truncated output still shows them: parallel tests interleave above.
  echo "failed tests, each with the last lines it printed:"
  awk '
    /^=== (RUN|CONT|NAME|PAUSE) / { cur = $3; next }
    /^[ \t]*--- FAIL: / {
      name = $3; print "--- FAIL: " name
      from = cnt[name] > 12 ? cnt[name] - 11 : 1
      for (i = from; i <= cnt[name]; i++) print "    " substr(buf[name, i], 1, 400)
      next
    }
    /^[ \t]*--- / { next }
    cur != "" { cnt[cur]++; buf[cur, cnt[cur]] = $0 }
  ' "$log"
  echo
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  echo "go test exited $rc without a failing test: a build or setup error above"
fi
exit "$rc"
