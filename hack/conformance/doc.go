// Package conformance holds the module that compiles Karpenter's own
// end-to-end suites for `make conformance`; the suites are dependencies of
// this module, compiled with `go test -c`.
package conformance

import (
	_ "github.com/aws/karpenter-provider-aws/test/pkg/environment/aws"
	_ "sigs.k8s.io/karpenter/test/pkg/environment/common"
)
