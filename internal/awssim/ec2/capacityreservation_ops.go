package ec2

import (
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// createCapacityReservation reserves on-demand capacity (an ODCR) of a type
// in a zone, as AddCapacityReservation does, with the request's match
// criteria and tags. A type the zone does not offer, or a pool without the
// capacity, is refused as EC2 refuses it.
func (s *Service) createCapacityReservation(in *ec2.CreateCapacityReservationInput, dryRun bool) (*ec2.CreateCapacityReservationOutput, *protocol.Error) {
	zone := deref(in.AvailabilityZone)
	for _, z := range s.region.Zones {
		if in.AvailabilityZoneId != nil && z.ID == *in.AvailabilityZoneId {
			zone = z.Name
		}
	}
	typ, count := deref(in.InstanceType), int(deref(in.InstanceCount))
	if zone == "" {
		return nil, errorf("MissingParameter", "The request must contain the parameter AvailabilityZone or AvailabilityZoneId")
	}
	if !s.catalog.Offered(s.region.Name, zone, typ) {
		return nil, errorf("Unsupported", "Your requested instance type (%s) is not supported in your requested Availability Zone (%s).", typ, zone)
	}
	s.mu.Lock()
	free := s.available(pool{typ, zone, "on-demand"})
	s.mu.Unlock()
	if free < count {
		return nil, errorf("InsufficientInstanceCapacity", "There is not enough capacity to fulfill your request for %s in %s.", typ, zone)
	}
	if dryRun {
		return nil, nil
	}
	id, err := s.AddCapacityReservation(typ, zone, count)
	if err != nil {
		return nil, errorf("InvalidParameterValue", "%v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reservationByID(id)
	if in.InstanceMatchCriteria != "" {
		r.InstanceMatchCriteria = in.InstanceMatchCriteria
	}
	r.Tags = tagsFor(in.TagSpecifications, ec2types.ResourceTypeCapacityReservation)
	return &ec2.CreateCapacityReservationOutput{CapacityReservation: copyReservation(r)}, nil
}

// cancelCapacityReservation cancels a reservation: it takes no more
// launches; instances already in it keep running.
func (s *Service) cancelCapacityReservation(in *ec2.CancelCapacityReservationInput, dryRun bool) (*ec2.CancelCapacityReservationOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := deref(in.CapacityReservationId)
	r := s.reservationByID(id)
	if r == nil {
		return nil, errorf("InvalidCapacityReservationId.NotFound", "The capacity reservation ID '%s' does not exist", id)
	}
	if r.State != ec2types.CapacityReservationStateActive && r.State != ec2types.CapacityReservationStatePending {
		return nil, errorf("IncorrectState", "The capacity reservation %s is %s and cannot be cancelled.", id, r.State)
	}
	if dryRun {
		return nil, nil
	}
	r.State = ec2types.CapacityReservationStateCancelled
	r.AvailableInstanceCount = ptr(int32(0))
	return &ec2.CancelCapacityReservationOutput{Return: ptr(true)}, nil
}

func copyReservation(r *capacityReservation) *ec2types.CapacityReservation {
	c := *r
	return &c
}
