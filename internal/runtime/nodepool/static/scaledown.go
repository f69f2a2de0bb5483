package static

import (
	"sort"
	"time"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// ScaleDownChoice picks n claims of pool to delete, in Karpenter's order:
// claims not launched yet; then nodes running nothing but DaemonSet pods
// (none of them protected by do-not-disrupt); then the others by
// disruption cost (their pods' eviction costs scaled by the claim's
// remaining lifetime), cheapest first, nodes with a pod protected by
// do-not-disrupt last. Claims already going away are not chosen.
func ScaleDownChoice(nodes []*state.StateNode, pool string, n int, now time.Time) []*v1.NodeClaim {
	type ranked struct {
		claim *v1.NodeClaim
		tier  int // 0 unlaunched, 1 empty, 2 busy, 3 protected
		cost  float64
	}
	var all []ranked
	for _, sn := range nodes {
		if sn.NodeClaim == nil || sn.NodePool() != pool || sn.Deleting() {
			continue
		}
		if sn.NodeClaim.Status.ProviderID == "" {
			all = append(all, ranked{claim: sn.NodeClaim, tier: 0})
			continue
		}
		protected, onlyDaemons := false, true
		for _, p := range sn.Pods {
			protected = protected || pods.DoNotDisrupt(p, now)
			onlyDaemons = onlyDaemons && pods.IsOwnedByDaemonSet(p)
		}
		r := ranked{claim: sn.NodeClaim, cost: simulation.DisruptionCost(sn.NodeClaim, sn.Pods, now)}
		switch {
		case onlyDaemons && !protected:
			r.tier = 1
		case protected:
			r.tier = 3
		default:
			r.tier = 2
		}
		all = append(all, r)
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.tier != b.tier {
			return a.tier < b.tier
		}
		if a.tier >= 2 && a.cost != b.cost {
			return a.cost < b.cost
		}
		return a.claim.Name < b.claim.Name
	})
	out := make([]*v1.NodeClaim, 0, n)
	for _, r := range all {
		if len(out) == n {
			break
		}
		out = append(out, r.claim)
	}
	return out
}
