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
	fit = ("xLPfit" in m) ? sprintf("%.3f", m["xLPfit"]) : "-"
	rows[++n] = sprintf("%-24s %9.1f %9.1f %9.0f %7d %9.2f %7s %7s %8d %8.1f %10d",
		name, m["ns/op"] / 1e6, m["cpu-ms/op"], m["pods/s"], m["nodes"], m["$/h"], xlp, fit, m["unplaced"], m["B/op"] / 1048576, m["allocs/op"])
}
END {
	if (n == 0) { print "no benchmark results" > "/dev/stderr"; exit 1 }
	printf "\n%-24s %9s %9s %9s %7s %9s %7s %7s %8s %8s %10s\n", "benchmark", "ms/op", "cpu-ms/op", "pods/s", "nodes", "$/h", "xLP", "xLPfit", "unplaced", "MiB/op", "allocs/op"
	for (i = 1; i <= n; i++) print rows[i]
	print "\nms/op and pods/s are wall time; cpu-ms/op is process CPU (GC included), steadier on a shared machine."
	print "xLP: cost / LP lower bound; xLPfit: cost / the bound with per-type capacities limited to what the pods can use."
}' "$out"
