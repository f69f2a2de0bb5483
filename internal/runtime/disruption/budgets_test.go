package disruption

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

func tenNodes(pool *v1.NodePool, opts ...func(i int, n *state.StateNode)) []*state.StateNode {
	var out []*state.StateNode
	for i := range 10 {
		n := mkNode(fmt.Sprintf("n%d", i), pool, 0, 4, v1.CapacityTypeOnDemand, nil)
		for _, o := range opts {
			o(i, n)
		}
		out = append(out, n)
	}
	return out
}

func TestBudgetsCountDisruptingNodes(t *testing.T) {
	pool := mkPool("default", budgets(v1.Budget{Nodes: "20%"}))
	nodes := tenNodes(pool, func(i int, n *state.StateNode) {
		switch i {
		case 0: // tainted by a command
			n.Node.Spec.Taints = []corev1.Taint{v1.DisruptedNoScheduleTaint}
		case 1: // already terminating its instance: no longer counted at all
			n.NodeClaim.DeletionTimestamp = &metav1.Time{Time: now}
			n.NodeClaim.Status.Conditions = append(n.NodeClaim.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeInstanceTerminating, Status: metav1.ConditionTrue})
		}
	})
	got, errs := BuildBudgets(nodes, []*v1.NodePool{pool}, v1.DisruptionReasonUnderutilized, now)
	// 9 counted nodes: ceil(20% of 9) = 2, one of them disrupting.
	if len(errs) != 0 || got["default"] != 1 {
		t.Fatalf("budget %d (%v), want ceil(0.2*9)-1 = 1", got["default"], errs)
	}
	nodes[2].Node.Status.Conditions[0].Status = corev1.ConditionFalse // NotReady counts as disrupting
	if got, _ := BuildBudgets(nodes, []*v1.NodePool{pool}, v1.DisruptionReasonUnderutilized, now); got["default"] != 0 {
		t.Fatalf("budget %d, want 0 with two nodes disrupting", got["default"])
	}
}

func TestBudgetsByReasonAndOverTime(t *testing.T) {
	nine := "0 9 * * 1-5" // weekdays 09:00 UTC
	pool := mkPool("default", budgets(
		v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}},
		v1.Budget{Nodes: "0", Schedule: &nine, Duration: &metav1.Duration{Duration: 8 * time.Hour}},
		v1.Budget{Nodes: "20%"},
	))
	nodes := tenNodes(pool)
	monday := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		at     time.Time
		reason v1.DisruptionReason
		want   int
	}{
		{monday.Add(10 * time.Hour), v1.DisruptionReasonUnderutilized, 0}, // inside the business-hours freeze
		{monday.Add(16*time.Hour + 59*time.Minute), v1.DisruptionReasonEmpty, 0},
		{monday.Add(17 * time.Hour), v1.DisruptionReasonUnderutilized, 2},        // the window is [09:00, 17:00)
		{monday.Add(8 * time.Hour), v1.DisruptionReasonUnderutilized, 2},         // before the window
		{monday.Add(18 * time.Hour), v1.DisruptionReasonUnderutilized, 2},        // after it
		{monday.Add(6*24*time.Hour + 10*time.Hour), v1.DisruptionReasonEmpty, 2}, // Sunday
		{monday.Add(18 * time.Hour), v1.DisruptionReasonDrifted, 0},              // drift always frozen
	} {
		got, errs := BuildBudgets(nodes, []*v1.NodePool{pool}, tc.reason, tc.at)
		if len(errs) != 0 || got["default"] != tc.want {
			t.Errorf("%s at %s: budget %d (%v), want %d", tc.reason, tc.at.Format(time.RFC3339), got["default"], errs, tc.want)
		}
	}
}

func TestBudgetWithBadScheduleFailsClosed(t *testing.T) {
	bad := "every day"
	pool := mkPool("default", budgets(v1.Budget{Nodes: "50%", Schedule: &bad, Duration: &metav1.Duration{Duration: time.Hour}}))
	got, errs := BuildBudgets(tenNodes(pool), []*v1.NodePool{pool}, v1.DisruptionReasonEmpty, now)
	if got["default"] != 0 || len(errs) != 1 {
		t.Fatalf("budget %d with errors %v, want 0 and the schedule error", got["default"], errs)
	}
}
