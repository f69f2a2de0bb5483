package simulation

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

func TestCountStatic(t *testing.T) {
	claim := func(name, pool string) *v1.NodeClaim {
		return &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: pool}},
			Status: v1.NodeClaimStatus{Conditions: []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue}}}}
	}
	deleting := claim("deleting", "s")
	deleting.DeletionTimestamp = &metav1.Time{}
	launching := claim("launching", "s")
	launching.Status.Conditions = nil
	tainted := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{v1.DisruptedNoScheduleTaint}}}
	nodes := []*state.StateNode{
		{NodeClaim: claim("a", "s"), Node: &corev1.Node{}},
		{NodeClaim: claim("in-flight", "s")},
		{NodeClaim: launching},
		{NodeClaim: claim("just-deleted", "s"), Node: &corev1.Node{}},
		{NodeClaim: deleting},
		{NodeClaim: claim("replacing", "s"), Node: tainted},
		{NodeClaim: claim("other", "d"), Node: &corev1.Node{}},
		{Node: &corev1.Node{}},
	}
	got := CountStatic(nodes, "s", map[string]bool{"just-deleted": true})
	if want := (StaticCount{Active: 3, Launching: 1, Deleting: 2, PendingDisruption: 1}); got != want {
		t.Errorf("count %+v, want %+v", got, want)
	}
}

// TestNodeRoom: limits.nodes counts every claim of the pool, active,
// deleting and replacing; no limit is no bound; a negative limit leaves no
// room (for scale-up and drift replacement alike).
func TestNodeRoom(t *testing.T) {
	nodes := func(n string) v1.Limits { return v1.Limits{ResourceNodes: resource.MustParse(n)} }
	count := StaticCount{Active: 2, Deleting: 1, PendingDisruption: 1}
	for _, c := range []struct {
		limits  v1.Limits
		room    int64
		limited bool
	}{
		{nil, 0, false},
		{v1.Limits{corev1.ResourceCPU: resource.MustParse("8")}, 0, false},
		{nodes("6"), 2, true},
		{nodes("4"), 0, true},
		{nodes("3"), 0, true},
		{nodes("-1"), 0, true},
	} {
		room, limited := count.NodeRoom(c.limits)
		if room != c.room || limited != c.limited {
			t.Errorf("limits %v: room %d limited %v, want %d %v", c.limits, room, limited, c.room, c.limited)
		}
	}
}

// TestStaticToLaunch: launches fill the gap to replicas counting only
// active claims, wait while replacements cover it, stop at limits.nodes
// counting every claim of the pool (a negative limit allows none), and
// never leave more than StaticLaunchBatch launching at once.
func TestStaticToLaunch(t *testing.T) {
	nodes := func(n string) v1.Limits { return v1.Limits{ResourceNodes: resource.MustParse(n)} }
	for _, c := range []struct {
		count    StaticCount
		replicas int64
		limits   v1.Limits
		want     int64
	}{
		{StaticCount{}, 3, nil, 3},
		{StaticCount{Active: 3}, 5, nil, 2},
		{StaticCount{Active: 5}, 2, nil, 0},
		{StaticCount{Active: 2, PendingDisruption: 1}, 3, nil, 0},
		{StaticCount{Active: 1, Deleting: 2}, 3, nil, 2},
		{StaticCount{Active: 1, Deleting: 2}, 3, nodes("4"), 1},
		{StaticCount{Active: 1, Deleting: 2}, 3, nodes("3"), 0},
		{StaticCount{}, 5, nodes("2"), 2},
		{StaticCount{}, 3, nodes("-1"), 0},
		{StaticCount{}, 1000, nil, StaticLaunchBatch},
		{StaticCount{Active: 40, Launching: 4}, 1000, nil, StaticLaunchBatch - 4},
		{StaticCount{Active: 40, Launching: StaticLaunchBatch}, 1000, nil, 0},
		{StaticCount{Active: 40, Launching: 4}, 1000, nodes("42"), 2},
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
		n := StaticToLaunch(CountStatic(nodes, "s", nil), 1000, nil)
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
