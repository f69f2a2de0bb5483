// Package disruption keeps the NodeClaim conditions the disruption loop
// reads: Consolidatable (quiet for the pool's consolidateAfter) and Drifted
// (no longer matching its NodePool or node class, or its instance type no
// longer offered). Consolidatable counts from the lastPodEventTime that
// nodeclaim/podevents records.
package disruption

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// Consolidatable says whether the claim is Consolidatable at now: its pool
// consolidates (consolidateAfter is not Never), it is Initialized, and no
// pod was bound to or removed from it for consolidateAfter (counted from
// initialization when no pod event came later). When not yet, wait is
// how long until it would be; zero when it never will as things stand.
func Consolidatable(claim *v1.NodeClaim, pool *v1.NodePool, now time.Time) (ok bool, wait time.Duration) {
	after := pool.Spec.Disruption.ConsolidateAfter.Duration
	initialized := meta.FindStatusCondition(claim.Status.Conditions, v1.ConditionTypeInitialized)
	if after == nil || initialized == nil || initialized.Status != "True" {
		return false, 0
	}
	since := initialized.LastTransitionTime.Time
	if last := claim.Status.LastPodEventTime.Time; last.After(since) {
		since = last
	}
	if at := since.Add(*after); now.Before(at) {
		return false, at.Sub(now)
	}
	return true, 0
}
