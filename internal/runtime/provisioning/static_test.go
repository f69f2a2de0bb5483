package provisioning

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
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
	nc, err := StaticClaim(&state.Snapshot{}, pool, types, scheduling.Options{})
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
	claim := NewNodeClaim(pool, nc)
	if claim.Labels[v1.NodePoolLabelKey] != pool.Name || claim.Labels["team"] != "checkout" || len(claim.Spec.Taints) != 1 {
		t.Errorf("claim metadata/spec %+v does not come from the template", claim)
	}
	pool.Spec.Template.Spec.Requirements = append(pool.Spec.Template.Spec.Requirements,
		v1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"x9.huge"}})
	if _, err := StaticClaim(&state.Snapshot{}, pool, types, scheduling.Options{}); err == nil {
		t.Error("a template no instance type satisfies gave a claim")
	}
}

// TestStaticToLaunch: launches fill the gap to replicas counting only
// active claims, wait while replacements cover it, and stop at
// limits.nodes counting every claim of the pool.
func TestStaticToLaunch(t *testing.T) {
	for _, c := range []struct {
		count    StaticCount
		replicas int64
		limit    int64
		want     int64
	}{
		{StaticCount{}, 3, -1, 3},
		{StaticCount{Active: 3}, 5, -1, 2},
		{StaticCount{Active: 5}, 2, -1, 0},
		{StaticCount{Active: 2, PendingDisruption: 1}, 3, -1, 0},
		{StaticCount{Active: 1, Deleting: 2}, 3, -1, 2},
		{StaticCount{Active: 1, Deleting: 2}, 3, 4, 1},
		{StaticCount{Active: 1, Deleting: 2}, 3, 3, 0},
		{StaticCount{}, 5, 2, 2},
	} {
		if got := StaticToLaunch(c.count, c.replicas, c.limit); got != c.want {
			t.Errorf("%+v, replicas %d, limit %d: %d, want %d", c.count, c.replicas, c.limit, got, c.want)
		}
	}
}

func TestCountStatic(t *testing.T) {
	claim := func(name, pool string) *v1.NodeClaim {
		return &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: pool}}}
	}
	deleting := claim("deleting", "s")
	deleting.DeletionTimestamp = &metav1.Time{}
	tainted := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{v1.DisruptedNoScheduleTaint}}}
	nodes := []*state.StateNode{
		{NodeClaim: claim("a", "s"), Node: &corev1.Node{}},
		{NodeClaim: claim("in-flight", "s")},
		{NodeClaim: claim("just-deleted", "s"), Node: &corev1.Node{}},
		{NodeClaim: deleting},
		{NodeClaim: claim("replacing", "s"), Node: tainted},
		{NodeClaim: claim("other", "d"), Node: &corev1.Node{}},
		{Node: &corev1.Node{}},
	}
	got := CountStatic(nodes, "s", map[string]bool{"just-deleted": true})
	if want := (StaticCount{Active: 2, Deleting: 2, PendingDisruption: 1}); got != want {
		t.Errorf("count %+v, want %+v", got, want)
	}
}
