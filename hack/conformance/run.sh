#!/usr/bin/env bash
# make conformance: builds upstream Karpenter's controller (hack/compare) and
# Karpenter's own end-to-end suites (hack/conformance), each a no-op when
# current, then runs test/scale's TestConformance: the suites against
# Karpenter, then against Joist, one table into the Karpenter compatibility
# guide's template, which `make docs` renders.
#
# The environment narrows a run: JOIST_CONFORMANCE_RUN (suite names, default
# all), JOIST_CONFORMANCE_SIDES ("karpenter joist"; "none" writes the table
# from the reports there are), JOIST_CONFORMANCE_FOCUS
# and _SKIP (ginkgo regular expressions), JOIST_CONFORMANCE_SUITE_TIMEOUT
# (30m) and JOIST_CONFORMANCE_WAIT (the suites' default Eventually timeout,
# 3m instead of their 16m).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bin="${JOIST_BIN_DIR:-$root/bin}"
"$root/hack/compare/build.sh" "$bin"
"$root/hack/conformance/build.sh" "$bin/conformance"

modinfo() { (cd "$root/hack/conformance" && GOTOOLCHAIN=go1.27.3 GOFLAGS=-mod=readonly go list -m -f "$1" "$2"); }
provider=$(modinfo '{{.Dir}}' github.com/aws/karpenter-provider-aws)
version=$(modinfo '{{.Version}}' github.com/aws/karpenter-provider-aws)
vpc=$(modinfo '{{.Dir}}' github.com/aws/amazon-vpc-resource-controller-k8s)
core=$(modinfo '{{.Dir}}' sigs.k8s.io/karpenter)
cd "$root"
# The suites' cleanup lists CapacityBuffers and SecurityGroupPolicies; Joist
# ships neither CRD.
JOIST_COMPARE_KARPENTER="$bin/karpenter-controller" JOIST_COMPARE_CRDS="$provider/pkg/apis/crds" JOIST_COMPARE_VERSION="$version" \
JOIST_CONFORMANCE_SUITES="$bin/conformance" JOIST_CONFORMANCE_PROVIDER="$provider" JOIST_CONFORMANCE_CORE="$core" \
JOIST_CONFORMANCE_EXTRA_CRDS="$provider/pkg/apis/crds/autoscaling.x-k8s.io_capacitybuffers.yaml $vpc/config/crd/bases/vpcresources.k8s.aws_securitygrouppolicies.yaml" \
  hack/test.sh -run '^TestConformance$' -timeout 12h ./test/scale/
make -C "$root" docs
