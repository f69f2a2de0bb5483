package interruption

import (
	"strings"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// Event reasons (Karpenter's names).
const (
	reasonSpotInterrupted                = "SpotInterrupted"
	reasonSpotRebalanceRecommendation    = "SpotRebalanceRecommendation"
	reasonInstanceStopping               = "InstanceStopping"
	reasonInstanceTerminating            = "InstanceTerminating"
	reasonInstanceUnhealthy              = "InstanceUnhealthy"
	reasonCapacityReservationInterrupted = "CapacityReservationInstanceInterrupted"
	reasonTerminatingOnInterruption      = "TerminatingOnInterruption"
	reasonDisruptionBlocked              = "DisruptionBlocked"
	actionInterruption                   = "Interrupting"
)

// emit tells users on the NodeClaim what AWS announced.
func (c *Controller) emit(m Message, nc *v1.NodeClaim) {
	r := c.opts.Recorder
	switch m.Kind {
	case SpotInterrupted:
		r.Warning(nc, reasonSpotInterrupted, actionInterruption, "Spot interruption warning: the instance will be reclaimed in two minutes")
	case RebalanceRecommendation:
		r.Normal(nc, reasonSpotRebalanceRecommendation, actionInterruption, "Spot rebalance recommendation: the instance is at elevated risk of interruption")
	case InstanceStopped:
		r.Warning(nc, reasonInstanceStopping, actionInterruption, "The instance is stopping")
	case InstanceTerminated:
		r.Warning(nc, reasonInstanceTerminating, actionInterruption, "The instance is terminating")
	case ScheduledChange:
		r.Warning(nc, reasonInstanceUnhealthy, actionInterruption, "An AWS Health scheduled change affects the instance")
	case InstanceStatus, SystemStatus:
		r.Warning(nc, reasonInstanceUnhealthy, actionInterruption, "EC2 %s checks report the instance impaired", strings.TrimSuffix(string(m.Kind), "_status"))
	case EventStatus:
		r.Warning(nc, reasonInstanceUnhealthy, actionInterruption, "An EC2 scheduled event affects the instance")
	case CapacityReservationInterrupted:
		r.Warning(nc, reasonCapacityReservationInterrupted, actionInterruption, "The capacity reservation is reclaiming the instance")
	}
}
