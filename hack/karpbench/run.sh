#!/usr/bin/env bash
# make bench-karpenter: Karpenter v1.15's provisioning scheduler and Joist's
# solver on the same pods and the same real EC2 catalog, one table of both
# times and their ratio. Karpenter needs a newer Go than the main module's:
# GOTOOLCHAIN selects it for this module only. Arguments go to the program
# (default: the diverse mix at 1,000, 5,000 and 20,000 pods; see -h).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root/hack/karpbench"
GOTOOLCHAIN=go1.27.3 GOFLAGS=-mod=readonly go build -o "$out/karpbench" .
"$out/karpbench" "$@"
