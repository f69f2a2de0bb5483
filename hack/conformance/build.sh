#!/usr/bin/env bash
# Compiles Karpenter's own end-to-end suites (the releases this module pins)
# into test binaries, one per suite, under the directory given (default
# bin/conformance), and records a stamp keyed on everything that decides
# their bytes: a second run is a no-op. The releases need a newer Go than the
# main module's: GOTOOLCHAIN selects it for this build only.
#
# One source change, made in a copy: the suites' default Eventually timeout
# (16 minutes, set in the environment's constructor) reads
# CONFORMANCE_EVENTUALLY_TIMEOUT when it is set, so a run on a small machine
# can bound each wait. No assertion changes; run.sh marks failures that are
# timeouts.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
mod="$root/hack/conformance"
out="${1:-$root/bin/conformance}"
toolchain=go1.27.3
provider=github.com/aws/karpenter-provider-aws
# The provider's suites; scheduling is a shared package, not a suite.
suites="ami consolidation drift integration interruption ipv6 legacyrepair localzone nodeclaim repair scale scheduling-besteffort scheduling-strict storage"

stamp_key=$(cat "$mod/go.mod" "$mod/go.sum" "$mod/build.sh" | sha256sum | cut -d' ' -f1)
stamp="$out/.stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_key" ]; then
  echo "conformance: suites are up to date"
  exit 0
fi

mkdir -p "$out"
rm -f "$stamp"
cd "$mod"
export GOTOOLCHAIN=$toolchain GOFLAGS=-mod=readonly CGO_ENABLED=0
dir=$(go list -m -f '{{.Dir}}' "$provider")

# A copy of this module and of the provider's release, in which the suites'
# environment reads the default timeout from the env; the module proxy's copy
# stays untouched (the go command refuses overlays beneath GOMODCACHE).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp go.mod go.sum doc.go "$work/"
cp -r "$dir" "$work/provider"
chmod -R u+w "$work/provider"
envfile="$work/provider/test/pkg/environment/common/environment.go"
grep -q 'gomega.SetDefaultEventuallyTimeout(16 \* time.Minute)' "$envfile" || {
  echo "conformance: $envfile no longer sets the 16-minute default this build replaces" >&2; exit 1; }
sed -i 's/gomega.SetDefaultEventuallyTimeout(16 \* time.Minute)/gomega.SetDefaultEventuallyTimeout(func() time.Duration { if d, err := time.ParseDuration(os.Getenv("CONFORMANCE_EVENTUALLY_TIMEOUT")); err == nil { return d }; return 16 * time.Minute }())/' "$envfile"
cd "$work"
go mod edit -replace "$provider=./provider"

start=$(date +%s)
( while sleep 30; do printf 'conformance:        still building the suites (%ds)\n' $(( $(date +%s) - start )); done ) &
beat=$!
trap 'kill "$beat" 2>/dev/null || true; rm -rf "$work"' EXIT
for s in $suites; do
  echo "conformance: building $provider/test/suites/$s"
  if ! go test -c -trimpath -o "$out/$s.test" "$provider/test/suites/$s"; then
    echo "conformance: building suite $s failed" >&2
    exit 1
  fi
done
echo "$stamp_key" > "$stamp"
printf 'conformance: suites built in %ds\n' $(( $(date +%s) - start ))
