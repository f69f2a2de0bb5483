package simulation

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// DisruptionBudgets computes, per NodePool, its budget for reason at now
// less the nodes already disrupting. A pool's nodes are its managed,
// initialized nodes not yet terminating their instance; disrupting are those
// among them being deleted, tainted for disruption, or not Ready, for any
// reason; except that repair's own budget (Unhealthy) does not count nodes
// merely not Ready, since those are what repair is for: a wave of them would
// otherwise use up the budget that repairs them.
// Budgets that cannot be evaluated count as 0 (errs lists them).
// The disruption controller and the plan-time impact prediction both count
// budgets with it.
func DisruptionBudgets(nodes []*state.StateNode, pools []*v1.NodePool, reason v1.DisruptionReason, now time.Time) (map[string]int, []error) {
	total := map[string]int{}
	disrupting := map[string]int{}
	for _, n := range nodes {
		if n.NodeClaim == nil || n.Node == nil || !n.Initialized() {
			continue
		}
		if meta.IsStatusConditionTrue(n.NodeClaim.Status.Conditions, v1.ConditionTypeInstanceTerminating) {
			continue
		}
		pool := n.NodePool()
		total[pool]++
		if n.Deleting() || (!state.IsNodeReady(n.Node) && reason != v1.DisruptionReasonUnhealthy) {
			disrupting[pool]++
		}
	}
	out := map[string]int{}
	var errs []error
	for _, p := range pools {
		allowed, err := p.AllowedDisruptionsByReason(now, total[p.Name], reason)
		if err != nil {
			errs = append(errs, err)
		}
		out[p.Name] = max(0, allowed-disrupting[p.Name])
	}
	return out, errs
}
