package ec2

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// pool is an EC2 capacity pool: one instance type in one zone for one
// capacity type. Each holds a finite number of instances.
type pool struct {
	InstanceType string
	Zone         string
	CapacityType string // "spot" or "on-demand"
}

// available is how many more instances the pool can launch. Caller holds s.mu.
func (s *Service) available(p pool) int {
	limit, ok := s.limit[p]
	if !ok {
		limit = s.opts.DefaultPoolCapacity
	}
	return max(0, limit-s.used[p])
}

// SetCapacity sets how many more instances a pool can launch from now on;
// 0 makes every launch into it fail with InsufficientInstanceCapacity.
func (s *Service) SetCapacity(instanceType, zone, capacityType string, available int) error {
	if capacityType != "spot" && capacityType != "on-demand" {
		return fmt.Errorf("capacity type %q: use spot or on-demand", capacityType)
	}
	if !s.catalog.Offered(s.region.Name, zone, instanceType) {
		return fmt.Errorf("instance type %q is not offered in zone %q of %s", instanceType, zone, s.region.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := pool{instanceType, zone, capacityType}
	s.limit[p] = s.used[p] + max(0, available)
	return nil
}

// Capacity reports how many more instances a pool can launch.
func (s *Service) Capacity(instanceType, zone, capacityType string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.available(pool{instanceType, zone, capacityType})
}

// capacityReservation is an on-demand capacity reservation (ODCR).
type capacityReservation = ec2types.CapacityReservation

// AddCapacityReservation creates an active, targeted reservation of count
// instances of a type in a zone, and returns its ID.
func (s *Service) AddCapacityReservation(instanceType, zone string, count int, tagKV ...string) (string, error) {
	var zoneID string
	for _, z := range s.region.Zones {
		if z.Name == zone {
			zoneID = z.ID
		}
	}
	if zoneID == "" {
		return "", fmt.Errorf("zone %q is not in %s", zone, s.region.Name)
	}
	if _, ok := s.catalog.InstanceType(instanceType); !ok {
		return "", fmt.Errorf("unknown instance type %q", instanceType)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := "cr-" + s.ids.Hex(17)
	s.reservations = append(s.reservations, &capacityReservation{
		CapacityReservationId:  ptr(id),
		CapacityReservationArn: ptr("arn:aws:ec2:" + s.opts.Region + ":" + s.opts.AccountID + ":capacity-reservation/" + id),
		OwnerId:                ptr(s.opts.AccountID),
		InstanceType:           ptr(instanceType),
		AvailabilityZone:       ptr(zone),
		AvailabilityZoneId:     ptr(zoneID),
		InstancePlatform:       ec2types.CapacityReservationInstancePlatformLinuxUnix,
		Tenancy:                ec2types.CapacityReservationTenancyDefault,
		TotalInstanceCount:     ptr(int32(count)),
		AvailableInstanceCount: ptr(int32(count)),
		State:                  ec2types.CapacityReservationStateActive,
		InstanceMatchCriteria:  ec2types.InstanceMatchCriteriaTargeted,
		EndDateType:            ec2types.EndDateTypeUnlimited,
		ReservationType:        ec2types.CapacityReservationTypeDefault,
		CreateDate:             ptr(time.Now().UTC().Truncate(time.Second)),
		StartDate:              ptr(time.Now().UTC().Truncate(time.Second)),
		Tags:                   tags(tagKV...),
	})
	return id, nil
}

// AddCapacityBlock creates an active capacity block of count instances of
// a type in a zone that ends at end, and returns its ID. At its end the
// block expires and EC2 terminates the instances still running in it.
func (s *Service) AddCapacityBlock(instanceType, zone string, count int, end time.Time, tagKV ...string) (string, error) {
	id, err := s.AddCapacityReservation(instanceType, zone, count, tagKV...)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reservationByID(id)
	r.ReservationType = ec2types.CapacityReservationTypeCapacityBlock
	r.EndDateType = ec2types.EndDateTypeLimited
	s.scheduleBlockEnd(r, end)
	return id, nil
}

// SetCapacityReservationEnd moves the end of a capacity block: a block
// whose end has passed expires at once.
func (s *Service) SetCapacityReservationEnd(id string, end time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reservationByID(id)
	if r == nil {
		return fmt.Errorf("no capacity reservation %s", id)
	}
	if r.ReservationType != ec2types.CapacityReservationTypeCapacityBlock {
		return fmt.Errorf("capacity reservation %s is not a capacity block", id)
	}
	if r.State != ec2types.CapacityReservationStateActive {
		return fmt.Errorf("capacity block %s is %s", id, r.State)
	}
	s.scheduleBlockEnd(r, end)
	return nil
}

// SetInterruptible makes a reservation interruptible: its owner may
// reclaim it, and launches into it use the interruptible market type.
func (s *Service) SetInterruptible(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reservationByID(id)
	if r == nil {
		return fmt.Errorf("no capacity reservation %s", id)
	}
	r.Interruptible = ptr(true)
	return nil
}

// scheduleBlockEnd sets a block's end date and (re)arms its expiry. Caller
// holds s.mu.
func (s *Service) scheduleBlockEnd(r *capacityReservation, end time.Time) {
	id := *r.CapacityReservationId
	r.EndDate = ptr(end.UTC().Truncate(time.Second))
	if t := s.blockEnds[id]; t != nil {
		t.Stop()
	}
	s.blockEnds[id] = time.AfterFunc(time.Until(end), func() { s.expireBlock(id) })
}

// expireBlock ends a capacity block as EC2 does: the reservation is
// expired, holds no more instances, and those running in it terminate.
func (s *Service) expireBlock(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reservationByID(id)
	if r == nil || r.State != ec2types.CapacityReservationStateActive || r.EndDate.After(time.Now()) {
		return
	}
	delete(s.blockEnds, id)
	r.State = ec2types.CapacityReservationStateExpired
	for _, in := range s.order {
		if in.reservation == r {
			s.terminate(in, blockEndReason)
		}
	}
	r.AvailableInstanceCount = ptr(int32(0))
}

// reservationLaunchable reports why a launch cannot go into the
// reservation it targets, if it cannot: EC2 asks a capacity block's
// launches for the capacity-block market type and an interruptible
// reservation's for the interruptible one (and neither of other
// launches), only an active reservation takes instances, and only of its
// type in its zone.
func reservationLaunchable(spec launchSpec) *protocol.Error {
	r := spec.reservation
	if r == nil {
		switch spec.market {
		case ec2types.MarketTypeCapacityBlock, ec2types.MarketTypeInterruptibleCapacityReservation:
			return errorf("InvalidParameterCombination", "The market type %s requires a capacity reservation target in CapacityReservationSpecification.", spec.market)
		}
		return nil
	}
	id := *r.CapacityReservationId
	var want ec2types.MarketType
	switch {
	case r.ReservationType == ec2types.CapacityReservationTypeCapacityBlock:
		want = ec2types.MarketTypeCapacityBlock
	case deref(r.Interruptible):
		want = ec2types.MarketTypeInterruptibleCapacityReservation
	}
	if spec.market != want {
		if want == "" {
			return errorf("InvalidParameterCombination", "Capacity reservation %s is not a capacity block or an interruptible reservation: launch into it without InstanceMarketOptions.MarketType %s.", id, spec.market)
		}
		return errorf("InvalidParameterCombination", "Launches into capacity reservation %s must set InstanceMarketOptions.MarketType to %s.", id, want)
	}
	if r.State != ec2types.CapacityReservationStateActive {
		return errorf("InvalidParameterValue", "The capacity reservation %s is %s and cannot accept instances.", id, r.State)
	}
	if *r.InstanceType != spec.instanceType || *r.AvailabilityZone != *spec.subnet.AvailabilityZone {
		return errorf("InvalidParameterCombination", "Capacity reservation %s holds %s instances in %s; the launch asks for %s in %s.",
			id, *r.InstanceType, *r.AvailabilityZone, spec.instanceType, *spec.subnet.AvailabilityZone)
	}
	return nil
}

// lifecycle is how EC2 shows an instance launched from spec.
func (spec launchSpec) lifecycle() ec2types.InstanceLifecycleType {
	switch {
	case spec.capacityType == "spot":
		return ec2types.InstanceLifecycleTypeSpot
	case spec.market == ec2types.MarketTypeCapacityBlock:
		return ec2types.InstanceLifecycleTypeCapacityBlock
	case spec.market == ec2types.MarketTypeInterruptibleCapacityReservation:
		return ec2types.InstanceLifecycleTypeInterruptibleCapacityReservation
	}
	return ""
}

func (s *Service) reservationByID(id string) *capacityReservation {
	for _, r := range s.reservations {
		if *r.CapacityReservationId == id {
			return r
		}
	}
	return nil
}

func (s *Service) describeCapacityReservations(in *ec2.DescribeCapacityReservationsInput, _ bool) (*ec2.DescribeCapacityReservationsOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range in.CapacityReservationIds {
		if s.reservationByID(id) == nil {
			return nil, errorf("InvalidCapacityReservationId.NotFound", "The capacity reservation ID '%s' does not exist", id)
		}
	}
	var found []ec2types.CapacityReservation
	for _, r := range s.reservations {
		if !allowed(in.CapacityReservationIds, *r.CapacityReservationId) {
			continue
		}
		ok, err := matches(in.Filters, r.Tags, func(name string) ([]string, bool) {
			switch name {
			case "instance-type":
				return []string{*r.InstanceType}, true
			case "availability-zone":
				return []string{*r.AvailabilityZone}, true
			case "availability-zone-id":
				return []string{*r.AvailabilityZoneId}, true
			case "state":
				return []string{string(r.State)}, true
			case "owner-id":
				return []string{*r.OwnerId}, true
			case "instance-match-criteria":
				return []string{string(r.InstanceMatchCriteria)}, true
			case "instance-platform":
				return []string{string(r.InstancePlatform)}, true
			case "tenancy":
				return []string{string(r.Tenancy)}, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			found = append(found, *r)
		}
	}
	start, end, next, err := page(len(found), in.MaxResults, in.NextToken, 0)
	if err != nil {
		return nil, err
	}
	return &ec2.DescribeCapacityReservationsOutput{CapacityReservations: append([]ec2types.CapacityReservation{}, found[start:end]...), NextToken: next}, nil
}
