package counter

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func TestCount(t *testing.T) {
	launched := func(cpu string) v1.NodeClaim {
		return v1.NodeClaim{Status: v1.NodeClaimStatus{ProviderID: "aws:///z/i-" + cpu,
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}
	}
	n, res := Count([]v1.NodeClaim{launched("4"), launched("8"), {}})
	if n != 2 {
		t.Errorf("nodes = %d, want 2 (the unlaunched claim has no capacity yet)", n)
	}
	if cpu := res[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("12")) != 0 {
		t.Errorf("cpu = %s, want 12", cpu.String())
	}
	if nodes := res["nodes"]; nodes.Value() != 2 {
		t.Errorf("resources.nodes = %s", nodes.String())
	}
}
