package provisioning

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
// active claims, wait while replacements cover it, stop at limits.nodes
// counting every claim of the pool (a negative limit allows none), and
// never leave more than StaticLaunchBatch launching at once.
func TestStaticToLaunch(t *testing.T) {
	nodes := func(n string) v1.Limits { return v1.Limits{simulation.ResourceNodes: resource.MustParse(n)} }
	for _, c := range []struct {
		count    simulation.StaticCount
		replicas int64
		limits   v1.Limits
		want     int64
	}{
		{simulation.StaticCount{}, 3, nil, 3},
		{simulation.StaticCount{Active: 3}, 5, nil, 2},
		{simulation.StaticCount{Active: 5}, 2, nil, 0},
		{simulation.StaticCount{Active: 2, PendingDisruption: 1}, 3, nil, 0},
		{simulation.StaticCount{Active: 1, Deleting: 2}, 3, nil, 2},
		{simulation.StaticCount{Active: 1, Deleting: 2}, 3, nodes("4"), 1},
		{simulation.StaticCount{Active: 1, Deleting: 2}, 3, nodes("3"), 0},
		{simulation.StaticCount{}, 5, nodes("2"), 2},
		{simulation.StaticCount{}, 3, nodes("-1"), 0},
		{simulation.StaticCount{}, 1000, nil, StaticLaunchBatch},
		{simulation.StaticCount{Active: 40, Launching: 4}, 1000, nil, StaticLaunchBatch - 4},
		{simulation.StaticCount{Active: 40, Launching: StaticLaunchBatch}, 1000, nil, 0},
		{simulation.StaticCount{Active: 40, Launching: 4}, 1000, nodes("42"), 2},
	} {
		if got := StaticToLaunch(c.count, c.replicas, c.limits); got != c.want {
			t.Errorf("%+v, replicas %d, limits %v: %d, want %d", c.count, c.replicas, c.limits, got, c.want)
		}
	}
}

// TestStaticScaleUpIsBatched: a static pool of 1000 replicas grows
// StaticLaunchBatch claims at a time, each batch once the previous one has
// launched.
func TestStaticScaleUpIsBatched(t *testing.T) {
	claim := func(name string, launched bool) *state.StateNode {
		nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: "s"}}}
		if launched {
			nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue}}
		}
		return &state.StateNode{NodeClaim: nc}
	}
	var nodes []*state.StateNode
	pass := func() int64 {
		n := StaticToLaunch(simulation.CountStatic(nodes, "s", nil), 1000, nil)
		for i := range n {
			nodes = append(nodes, claim(fmt.Sprintf("c%d-%d", len(nodes), i), false))
		}
		return n
	}
	if n := pass(); n != StaticLaunchBatch {
		t.Fatalf("first pass created %d nodeclaims, want %d", n, StaticLaunchBatch)
	}
	if n := pass(); n != 0 {
		t.Fatalf("a pass while the first batch is launching created %d nodeclaims, want 0", n)
	}
	for i := range nodes[:3] {
		nodes[i] = claim(nodes[i].NodeClaim.Name, true)
	}
	if n := pass(); n != 3 {
		t.Fatalf("after 3 launches a pass created %d nodeclaims, want 3", n)
	}
}
