package scheduling

import "math"

// The sizing objective. Every decision on which instance type to buy (the
// pattern LP and chooseTarget) compares nodes by nodePrice: the offering's
// price plus Options.NodeCost. Daemonset requests are already taken out of
// a node's room (poolState.allocD), so only the node count itself is left
// to price: each node is a launch and a registration to wait for, AWS calls,
// a kubelet and CNI loading the control plane, per-host agents and licences,
// and room kube-scheduler fragments when it binds pods in another order than
// planned. So between shapes within a few percent of each other per pod the
// larger wins, and no decision takes on more than NodeCost of price for each
// node it saves.

// DefaultNodeCost is the NODE_COST the controller uses unless told
// otherwise ($/h per node): about 2% of a 2-vCPU general-purpose node.
const DefaultNodeCost = 0.002

// nodeCost is what a node of ps costs beyond its price while pods
// requesting demand are still to place: Options.NodeCost, or nothing where
// the pool's limits could bind, since a larger node's idle capacity counts
// against the limits and could crowd pods out into a dearer pool.
func (s *solver) nodeCost(ps *poolState, demand []int64) float64 {
	if ps.limitsBind(demand) {
		return 0
	}
	if s.opts.NodeCost == nil {
		return DefaultNodeCost
	}
	return max(*s.opts.NodeCost, 0)
}

// nodePrice is what the sizing objective charges for a node of type t
// bought within slots: its cheapest offering plus perNode (see nodeCost).
// Free offerings (already-paid reservations) still cost a little, so
// ratios stay finite.
func (s *solver) nodePrice(t int, slots uint64, perNode float64) float64 {
	p := s.cat.cheapest(t, slots)
	if math.IsInf(p, 1) {
		return p
	}
	return max(p, 1e-9) + perNode
}

// limitsBind reports whether the pool's remaining limits could run out
// before pods requesting demand are placed. A node counts its whole
// capacity against the limits, so allow for half of it idle.
func (ps *poolState) limitsBind(demand []int64) bool {
	for _, r := range ps.limited {
		if ps.remaining[r] < 2*demand[r] {
			return true
		}
	}
	return false
}
