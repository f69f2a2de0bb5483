package aws

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// launchChoice is what one launch chooses from: a capacity type, the
// cheapest candidates offering it, and the reservation a reserved launch
// targets.
type launchChoice struct {
	capacityType string
	cands        []candidate
	reservation  awsv1.CapacityReservation
}

// clusterPlacement is a cluster placement group a launch must join: every
// instance in one zone, zone "" while the group has none yet.
type clusterPlacement struct {
	name, zone string
}

// launchRequest is everything the offering choice reads, as plain values.
type launchRequest struct {
	claim, nodeClass string
	reqs             requirements.Requirements
	requests         corev1.ResourceList
	// zones the launch may use (zone name to zone ID): those with a subnet.
	zones map[string]string
	// cluster is set when the node class's placement group is a cluster group.
	cluster *clusterPlacement
	// reservations are the node class's capacity reservations, as its
	// status lists them.
	reservations []awsv1.CapacityReservation
}

// chooseLaunch picks what a claim launches from among its: the types that
// meet its requirements and requests in a usable zone, none exotic it did
// not ask for, no spot dearer than on-demand; the first capacity type of
// reserved, spot, on-demand that any offers; at most MaxInstanceTypes of
// the cheapest (more where minValues needs them). A cluster placement group
// narrows the choice to its zone (or, while it has none, the cheapest one);
// a reserved launch to one reservation.
func chooseLaunch(its []*scheduling.InstanceType, in launchRequest) (launchChoice, error) {
	cands := compatible(its, in.reqs, in.requests, in.zones)
	cands = withoutExotic(cands, in.reqs)
	cands = withoutDearSpot(cands)
	if in.cluster != nil {
		zone := in.cluster.zone
		if zone == "" {
			zone = cheapestZone(cands, capacityType(cands))
		}
		if cands = inZone(cands, zone); len(cands) == 0 {
			return launchChoice{}, &cloud.InsufficientCapacityError{Err: fmt.Errorf("cluster placement group %s runs in zone %s, where no available offering meets NodeClaim %s's requirements", in.cluster.name, zone, in.claim)}
		}
	}
	ct := capacityType(cands)
	if ct == "" {
		return launchChoice{}, &cloud.InsufficientCapacityError{Err: fmt.Errorf("no available offering of %d instance types meets NodeClaim %s's requirements and requests", len(its), in.claim)}
	}
	out := launchChoice{capacityType: ct, cands: cheapest(cands, ct, in.reqs, MaxInstanceTypes)}
	if ct != v1.CapacityTypeReserved {
		return out, nil
	}
	c, off, ok := oneReservation(out.cands)
	if !ok {
		return launchChoice{}, &cloud.InsufficientCapacityError{Err: fmt.Errorf("no capacity reservation with room meets NodeClaim %s's requirements", in.claim)}
	}
	out.cands = []candidate{c}
	for _, cr := range in.reservations {
		if cr.ID == off.ReservationID {
			out.reservation = cr
			return out, nil
		}
	}
	return launchChoice{}, &cloud.InsufficientCapacityError{Err: fmt.Errorf("capacity reservation %s is no longer in EC2NodeClass %s's status", off.ReservationID, in.nodeClass)}
}
