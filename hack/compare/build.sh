#!/usr/bin/env bash
# Builds upstream Karpenter's AWS controller (the release this module pins)
# into the directory given (default bin/) as karpenter-controller, with
# progress, and records a stamp keyed on everything that decides its bytes.
# An up-to-date binary makes this a no-op. The release needs a newer Go than
# the main module's: GOTOOLCHAIN selects it for this build only.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
mod="$root/hack/compare"
bin="${1:-$root/bin}"
toolchain=go1.27.3
pkg=github.com/aws/karpenter-provider-aws/cmd/controller

stamp_key=$(cat "$mod/go.mod" "$mod/go.sum" "$mod/build.sh" | sha256sum | cut -d' ' -f1)
stamp="$bin/.karpenter-stamp"
if [ -x "$bin/karpenter-controller" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_key" ]; then
  echo "compare: karpenter-controller is up to date"
  exit 0
fi

mkdir -p "$bin"
rm -f "$stamp"
cd "$mod"
export GOTOOLCHAIN=$toolchain GOFLAGS=-mod=readonly
start=$(date +%s)
echo "compare: building $pkg ($(grep -E '^\s*github.com/aws/karpenter-provider-aws ' go.mod | awk '{print $2}')) with $toolchain ..."
# Keep the progress visible on a cold build: a heartbeat every 30 s.
( while sleep 30; do printf 'compare:        still building karpenter-controller (%ds)\n' $(( $(date +%s) - start )); done ) &
beat=$!
trap 'kill "$beat" 2>/dev/null || true' EXIT
if ! CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/karpenter-controller" "$pkg"; then
  echo "compare: building $pkg failed" >&2
  exit 1
fi
echo "$stamp_key" > "$stamp"
printf 'compare: karpenter-controller built in %ds\n' $(( $(date +%s) - start ))
