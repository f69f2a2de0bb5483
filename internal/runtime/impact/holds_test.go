package impact

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func held(typ, reason string) poolOpt {
	return func(p *v1.NodePool) {
		meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: reason + " message"})
	}
}

func annotated(k, v string) poolOpt {
	return func(p *v1.NodePool) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

func label(k, v string) poolOpt {
	return func(p *v1.NodePool) { p.Spec.Template.Labels = map[string]string{k: v} }
}

// TestHeldPoolReplacesNoDriftedNodes: a change that drifts all ten nodes of
// a pool whose voluntary disruption is held replaces none (no waves), and
// says why; a change that lifts the hold replaces them all.
func TestHeldPoolReplacesNoDriftedNodes(t *testing.T) {
	onDemand := capacityTypes(v1.CapacityTypeOnDemand)
	for _, tc := range []struct {
		name          string
		live, planned []poolOpt
		reasons       []string
	}{
		// Requirements are not hashed: the pool's breaker stays open.
		{"pool breaker open", []poolOpt{held(v1.ConditionTypeDisruptionHalted, v1.DisruptionHaltedReasonNodePool)}, nil,
			[]string{v1.DisruptionHaltedReasonNodePool}},
		{"cluster breaker open", []poolOpt{held(v1.ConditionTypeDisruptionHalted, v1.DisruptionHaltedReasonCluster)}, nil,
			[]string{v1.DisruptionHaltedReasonCluster}},
		// A new reset token does not close the cluster's breaker.
		{"cluster breaker open, pool reset", []poolOpt{held(v1.ConditionTypeDisruptionHalted, v1.DisruptionHaltedReasonCluster)},
			[]poolOpt{annotated(v1.DisruptionBreakerResetAnnotationKey, "r2")}, []string{v1.DisruptionHaltedReasonCluster}},
		{"cluster paused", []poolOpt{held(v1.ConditionTypeDisruptionPaused, v1.DisruptionPausedReasonCluster)}, nil,
			[]string{v1.DisruptionPausedReasonCluster}},
		{"paused by the plan", nil, []poolOpt{annotated(v1.DisruptionPausedAnnotationKey, "true")},
			[]string{v1.DisruptionPausedReasonNodePool}},
		{"observe", nil, []poolOpt{annotated(v1.DriftModeAnnotationKey, "observe")}, []string{ReasonDriftObserved}},
		{"paused and halted", []poolOpt{held(v1.ConditionTypeDisruptionHalted, v1.DisruptionHaltedReasonNodePool)},
			[]poolOpt{annotated(v1.DisruptionPausedAnnotationKey, "true")},
			[]string{v1.DisruptionPausedReasonNodePool, v1.DisruptionHaltedReasonNodePool}},
		{"pool breaker reset", []poolOpt{held(v1.ConditionTypeDisruptionHalted, v1.DisruptionHaltedReasonNodePool)},
			[]poolOpt{annotated(v1.DisruptionBreakerResetAnnotationKey, "r2")}, nil},
		// The pool's own pause is the plan's to lift.
		{"unpaused by the plan", []poolOpt{held(v1.ConditionTypeDisruptionPaused, v1.DisruptionPausedReasonNodePool)}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := tenSpotNodes(tc.live...)
			res := w.predict(mkPool("general", append([]poolOpt{onDemand}, tc.planned...)...))
			var reasons []string
			for _, h := range res.Holds {
				reasons = append(reasons, h.Reason)
			}
			if !slices.Equal(reasons, tc.reasons) {
				t.Fatalf("holds %v, want %v", reasons, tc.reasons)
			}
			if res.Drifted != 10 {
				t.Fatalf("%d drifted, want 10", res.Drifted)
			}
			if len(tc.reasons) > 0 {
				if res.Replaced != 0 || res.Removed != 0 || res.Waves != 0 || res.BudgetBlocked {
					t.Errorf("held: replaced %d, removed %d, %d waves, blocked %v; want none", res.Replaced, res.Removed, res.Waves, res.BudgetBlocked)
				}
				if !near(res.CostAfter, res.CostNow) {
					t.Errorf("held: cost $%.4f/h → $%.4f/h, want unchanged", res.CostNow, res.CostAfter)
				}
				return
			}
			if res.Replaced != 10 || res.Waves != 5 {
				t.Errorf("not held: replaced %d in %d waves, want 10 in 5", res.Replaced, res.Waves)
			}
		})
	}
}

// TestSpecChangeClosesPoolBreaker: a change of the pool's hashed template
// (a label), of its node class's hash or of the release the class resolves
// gives the pool a new spec identity, which closes its breaker; the
// cluster's stays open.
func TestSpecChangeClosesPoolBreaker(t *testing.T) {
	open := held(v1.ConditionTypeDisruptionHalted, v1.DisruptionHaltedReasonNodePool)
	current := mkPool("general", open)
	if holds := DriftHolds(mkPool("general", label("team", "a")), current, ClassSpec{}, ClassSpec{}); len(holds) != 0 {
		t.Errorf("a template label change keeps %v", holds)
	}
	if holds := DriftHolds(mkPool("general"), current, ClassSpec{Hashes: map[string]string{"h": "1"}}, ClassSpec{Hashes: map[string]string{"h": "2"}}); len(holds) != 0 {
		t.Errorf("a node class hash change keeps %v", holds)
	}
	if holds := DriftHolds(mkPool("general"), current, ClassSpec{map[string]string{"h": "1"}, "r1"}, ClassSpec{map[string]string{"h": "1"}, "r2"}); len(holds) != 0 {
		t.Errorf("a new AMI release keeps %v", holds)
	}
	if holds := DriftHolds(mkPool("general"), current, ClassSpec{map[string]string{"h": "1"}, "r1"}, ClassSpec{map[string]string{"h": "1"}, "r1"}); len(holds) != 1 {
		t.Errorf("an unchanged spec lifts the breaker: %v", holds)
	}
	cluster := mkPool("general", held(v1.ConditionTypeDisruptionHalted, v1.DisruptionHaltedReasonCluster))
	if holds := DriftHolds(mkPool("general", label("team", "a")), cluster, ClassSpec{}, ClassSpec{}); len(holds) != 1 || holds[0].Message == "" {
		t.Errorf("the cluster breaker: %v, want it held with the condition's message", holds)
	}
}
