#!/usr/bin/env bash
# Runs the scheduling solver benchmarks and prints them as a table.
# Usage: hack/bench.sh [bench-regexp] [extra go test flags...]
set -euo pipefail
cd "$(dirname "$0")/.."

pattern="${1:-.}"
shift || true
out="$(mktemp)"
trap 'rm -f "$out"' EXIT

go test ./internal/runtime/scheduling/ -run '^$' -bench "$pattern" -benchmem "$@" | tee "$out" >&2

awk '
/^Benchmark/ {
	name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
	delete m
	for (i = 3; i < NF; i += 2) m[$(i + 1)] = $i
	xlp = ("xLP" in m) ? sprintf("%.3f", m["xLP"]) : "-"
	rows[++n] = sprintf("%-28s %10.1f %10.0f %7d %10.2f %7s %8d %9.1f %10d",
		name, m["ns/op"] / 1e6, m["pods/s"], m["nodes"], m["$/h"], xlp, m["unplaced"], m["B/op"] / 1048576, m["allocs/op"])
}
END {
	if (n == 0) { print "no benchmark results" > "/dev/stderr"; exit 1 }
	printf "\n%-28s %10s %10s %7s %10s %7s %8s %9s %10s\n", "benchmark", "ms/op", "pods/s", "nodes", "$/h", "xLP", "unplaced", "MiB/op", "allocs/op"
	for (i = 1; i <= n; i++) print rows[i]
}' "$out"
