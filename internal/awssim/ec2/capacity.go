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
// a type in a zone that ends at end, and returns its ID.
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
	r.EndDate = ptr(end.UTC().Truncate(time.Second))
	return id, nil
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
