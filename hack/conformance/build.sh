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
core=sigs.k8s.io/karpenter
# The provider's suites (scheduling is a shared package, not a suite), and
# the core suites the provider runs with its EC2NodeClass (core-<name>).
suites="ami consolidation drift integration interruption ipv6 legacyrepair localzone nodeclaim repair scale scheduling-besteffort scheduling-strict storage"
core_suites="disruption regression"

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
core_dir=$(go list -m -f '{{.Dir}}' "$core")

# A copy of this module and of both releases, in which the suites'
# environments read the default timeout from the env; the module proxy's
# copies stay untouched (the go command refuses overlays beneath GOMODCACHE).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp go.mod go.sum doc.go "$work/"
settable_timeout() { # module dir, copy name, the default the copy replaces
  cp -r "$1" "$work/$2"
  chmod -R u+w "$work/$2"
  local f="$work/$2/test/pkg/environment/common/environment.go"
  grep -q "gomega.SetDefaultEventuallyTimeout($3)" "$f" || {
    echo "conformance: $f no longer sets the default ($3) this build replaces" >&2; exit 1; }
  sed -i "s/gomega.SetDefaultEventuallyTimeout($3)/gomega.SetDefaultEventuallyTimeout(func() time.Duration { if d, err := time.ParseDuration(os.Getenv(\"CONFORMANCE_EVENTUALLY_TIMEOUT\")); err == nil { return d }; return $3 }())/" "$f"
}
settable_timeout "$dir" provider '16 \* time.Minute'
settable_timeout "$core_dir" core '15 \* time.Minute'
cd "$work"
go mod edit -replace "$provider=./provider" -replace "$core@v1.15.1=./core"

start=$(date +%s)
( while sleep 30; do printf 'conformance:        still building the suites (%ds)\n' $(( $(date +%s) - start )); done ) &
beat=$!
trap 'kill "$beat" 2>/dev/null || true; rm -rf "$work"' EXIT
# build_suite PACKAGE OUTPUT compiles one suite's test binary.
build_suite() {
  echo "conformance: building $1"
  if ! go test -c -trimpath -o "$2" "$1"; then
    echo "conformance: building $1 failed" >&2
    exit 1
  fi
}
for s in $suites; do
  build_suite "$provider/test/suites/$s" "$out/$s.test"
done
for s in $core_suites; do
  build_suite "$core/test/suites/$s" "$out/core-$s.test"
done
echo "$stamp_key" > "$stamp"
printf 'conformance: suites built in %ds\n' $(( $(date +%s) - start ))
