#!/usr/bin/env bash
# make compare: builds upstream Karpenter's controller (no-op when current),
# then runs test/scale's TestCompare: the scale-out and scale-in on Karpenter
# and then on Joist, one table into docs/performance.md.
# make migration: the same build, then TestMigration (given as $1): a fleet
# moved from Karpenter to Joist and back, one table into the migration guide.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bin="${JOIST_BIN_DIR:-$root/bin}"
"$root/hack/compare/build.sh" "$bin"

cd "$root/hack/compare"
module=github.com/aws/karpenter-provider-aws
info=$(GOTOOLCHAIN=go1.27.3 go mod download -json "$module")
dir=$(printf '%s' "$info" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
version=$(printf '%s' "$info" | sed -n 's/^[[:space:]]*"Version": "\(.*\)",$/\1/p')
cd "$root"
JOIST_COMPARE_KARPENTER="$bin/karpenter-controller" JOIST_COMPARE_CRDS="$dir/pkg/apis/crds" JOIST_COMPARE_VERSION="$version" \
  hack/test.sh -run "^${1:-TestCompare}\$" -timeout 3h ./test/scale/
