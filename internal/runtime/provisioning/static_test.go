package provisioning

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// TestStaticClaim: a static replica is launched from the template alone,
// for no pod, cheapest allowed instance type first, minValues kept.
func TestStaticClaim(t *testing.T) {
	pool := testPool()
	pool.Spec.Replicas = new(int64(3))
	types := []*scheduling.InstanceType{
		instanceType("c5.xlarge", 4, 8, 0.06, 0.17), instanceType("m5.xlarge", 4, 16, 0.07, 0.19),
		instanceType("r5.xlarge", 4, 32, 0.05, 0.25),
	}
	nc, err := simulation.StaticClaim(&state.Snapshot{}, pool, types, scheduling.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nc.Pods) != 0 || nc.NodePool != pool.Name {
		t.Fatalf("claim %+v, want one for pool %s with no pods", nc, pool.Name)
	}
	var names []string
	for _, o := range nc.InstanceTypes {
		names = append(names, o.Type.Name)
	}
	if len(names) != 2 || names[0] != "c5.xlarge" || names[1] != "m5.xlarge" {
		t.Errorf("instance types %v, want c5.xlarge then m5.xlarge (r, though cheapest, is not an allowed category)", names)
	}
	claim := simulation.NewNodeClaim(pool, nc)
	if claim.Labels[v1.NodePoolLabelKey] != pool.Name || claim.Labels["team"] != "checkout" || len(claim.Spec.Taints) != 1 {
		t.Errorf("claim metadata/spec %+v does not come from the template", claim)
	}
	pool.Spec.Template.Spec.Requirements = append(pool.Spec.Template.Spec.Requirements,
		v1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"x9.huge"}})
	if _, err := simulation.StaticClaim(&state.Snapshot{}, pool, types, scheduling.Options{}); err == nil {
		t.Error("a template no instance type satisfies gave a claim")
	}
}
