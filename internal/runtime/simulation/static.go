package simulation

import (
	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// StaticCount is how a static pool's claims stand.
type StaticCount struct {
	// Active claims are neither going away nor held by a disruption.
	Active int
	// Launching are the active claims whose instance is not launched yet.
	Launching int
	// Deleting claims (or their Nodes) have a deletion timestamp.
	Deleting int
	// PendingDisruption claims are tainted by a disruption command that is
	// launching their replacements.
	PendingDisruption int
}

// CountStatic counts the claims of pool among nodes; claims named in
// deleted count as deleting whatever the cache says yet.
func CountStatic(nodes []*state.StateNode, pool string, deleted map[string]bool) StaticCount {
	var c StaticCount
	for _, n := range nodes {
		if n.NodeClaim == nil || n.NodePool() != pool {
			continue
		}
		switch {
		case deleted[n.NodeClaim.Name] || n.NodeClaim.DeletionTimestamp != nil || (n.Node != nil && n.Node.DeletionTimestamp != nil):
			c.Deleting++
		case n.Node != nil && v1.HasDisruptedTaint(n.Node):
			c.PendingDisruption++
		default:
			c.Active++
			if !meta.IsStatusConditionTrue(n.NodeClaim.Status.Conditions, v1.ConditionTypeLaunched) {
				c.Launching++
			}
		}
	}
	return c
}

// NodeRoom is how many more claims limits.nodes lets a static pool with
// these claims launch: every claim counts, deleting and replacing ones too,
// since their instances still run. limited is false when the pool sets no
// node limit. A negative limit (the CRD refuses one; an object stored
// before may hold it) leaves no room, as in Karpenter.
func (c StaticCount) NodeRoom(limits v1.Limits) (room int64, limited bool) {
	q, ok := limits[ResourceNodes]
	if !ok {
		return 0, false
	}
	return max(0, q.Value()-int64(c.Active+c.Deleting+c.PendingDisruption)), true
}
