package simulation

import (
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
