package disruption

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func TestConsolidatable(t *testing.T) {
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	after := 5 * time.Minute
	pool := &v1.NodePool{Spec: v1.NodePoolSpec{Disruption: v1.Disruption{ConsolidateAfter: v1.NillableDuration{Duration: &after}}}}
	claim := &v1.NodeClaim{}
	if ok, wait := Consolidatable(claim, pool, now); ok || wait != 0 {
		t.Fatalf("uninitialized claim: %v %v", ok, wait)
	}
	claim.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-10 * time.Minute))}}
	if ok, _ := Consolidatable(claim, pool, now); !ok {
		t.Fatal("quiet since initialization for 10m with consolidateAfter 5m: not consolidatable")
	}
	claim.Status.LastPodEventTime = metav1.NewTime(now.Add(-2 * time.Minute))
	if ok, wait := Consolidatable(claim, pool, now); ok || wait != 3*time.Minute {
		t.Fatalf("pod event 2m ago: consolidatable %v, wait %v; want false and 3m", ok, wait)
	}
	pool.Spec.Disruption.ConsolidateAfter.Duration = nil
	claim.Status.LastPodEventTime = metav1.Time{}
	if ok, wait := Consolidatable(claim, pool, now); ok || wait != 0 {
		t.Fatalf("consolidateAfter Never: %v %v", ok, wait)
	}
}
