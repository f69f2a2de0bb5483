package scheduling_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/hack/benchfixture"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// The solver's tests are an external package, so that they can check
// plans with the oracle, which imports the solver.

// Well-known label keys the tests use.
const (
	labelZone         = corev1.LabelTopologyZone
	labelHostname     = corev1.LabelHostname
	labelArch         = corev1.LabelArchStable
	labelOS           = corev1.LabelOSStable
	labelInstanceType = corev1.LabelInstanceTypeStable
	labelCapacityType = "karpenter.sh/capacity-type"
	labelNodePool     = "karpenter.sh/nodepool"
	labelPartition    = "karpenter.k8s.aws/placement-group-partition"
)

// catalogFixture returns the 400 real EC2 instance types of the
// benchmark fixture (hack/benchfixture), shared: copy a type to change it.
func catalogFixture(tb testing.TB) []*InstanceType {
	tb.Helper()
	its, err := benchfixture.InstanceTypes()
	if err != nil {
		tb.Fatal(err)
	}
	return its
}

// withBaselineCPU returns copies of its whose burstable types (category t)
// carry the baseline CPU the AWS provider gives them, so the solver counts
// only that share of their CPU, as it does for a NodePool that does not opt
// in to burstable types' full CPU. The fixture itself leaves it out.
func withBaselineCPU(its []*InstanceType) []*InstanceType {
	out := make([]*InstanceType, 0, len(its))
	for _, it := range its {
		cp := *it
		if it.Labels["karpenter.k8s.aws/instance-category"] == "t" {
			cp.BaselineCPU = instancetype.BaselineCPU(ec2types.InstanceTypeInfo{
				InstanceType: ec2types.InstanceType(it.Name), BurstablePerformanceSupported: aws.Bool(true)})
		}
		out = append(out, &cp)
	}
	return out
}
