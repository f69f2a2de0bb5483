package impact

import (
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// nodePrice is what the controller takes a node to cost per hour (as
// consolidation prices it); a node of a type or offering no longer listed
// counts 0, as there.
func nodePrice(n *state.StateNode, its []*scheduling.InstanceType) float64 {
	p, _ := simulation.NodePrice(n.Labels(), its)
	return p
}
