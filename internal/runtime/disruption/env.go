package disruption

import (
	"time"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/repair"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/volumetopology"
)

// Env is everything a disruption decision looks at; decisions are pure
// functions of it.
type Env struct {
	Now      time.Time
	Snapshot *state.Snapshot
	// InstanceTypes per NodePool name, with offerings and prices.
	InstanceTypes map[string][]*scheduling.InstanceType
	PDBs          *PDBLimits
	// Queued names the Nodes that an executing command already holds.
	Queued map[string]bool
	// SpotToSpot is the SpotToSpotConsolidation feature gate.
	SpotToSpot bool
	Options    scheduling.Options
	// Volumes are the claims, volumes and storage classes behind the pods
	// on the nodes, so simulations keep pods in their volumes' zones.
	Volumes volumetopology.Objects
	// Repair matches Nodes against the repair policies; nil when the
	// NodeRepair gate is off.
	Repair *repair.Matcher
}

// pool returns the named NodePool.
func (e *Env) pool(name string) *v1.NodePool {
	for _, p := range e.Snapshot.NodePools {
		if p.Name == name {
			return p
		}
	}
	return nil
}
