package ec2

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// EC2's placement group limits.
const (
	// MaxPartitions is the most partitions a partition group has per zone.
	MaxPartitions = 7
	// SpreadPerZone is how many running instances a rack spread group
	// holds in one zone.
	SpreadPerZone = 7
)

type placementGroup = ec2types.PlacementGroup

// placementRequest is what a launch asks of placement: a group by name or
// ID, and optionally a partition.
type placementRequest struct {
	name, id  string
	partition int32
}

func (r placementRequest) empty() bool { return r.name == "" && r.id == "" && r.partition == 0 }

// AddPlacementGroup creates an available placement group, as
// CreatePlacementGroup does, and returns its ID.
func (s *Service) AddPlacementGroup(name, strategy string, partitions int32, tagKV ...string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pg, err := s.createGroup(&ec2.CreatePlacementGroupInput{
		GroupName: ptr(name), Strategy: ec2types.PlacementStrategy(strategy), PartitionCount: optional(partitions),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypePlacementGroup, Tags: tags(tagKV...)}},
	})
	if err != nil {
		return "", fmt.Errorf("%s: %s", err.Code, err.Message)
	}
	return *pg.GroupId, nil
}

func optional(n int32) *int32 {
	if n == 0 {
		return nil
	}
	return &n
}

func (s *Service) createPlacementGroup(in *ec2.CreatePlacementGroupInput, dryRun bool) (*ec2.CreatePlacementGroupOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if dryRun {
		_, err := s.checkNewGroup(in)
		return nil, err
	}
	pg, err := s.createGroup(in)
	if err != nil {
		return nil, err
	}
	out := *pg
	return &ec2.CreatePlacementGroupOutput{PlacementGroup: &out}, nil
}

// checkNewGroup validates a CreatePlacementGroup request as EC2 does and
// returns the strategy it creates. Caller holds s.mu.
func (s *Service) checkNewGroup(in *ec2.CreatePlacementGroupInput) (ec2types.PlacementStrategy, *protocol.Error) {
	name := deref(in.GroupName)
	if name == "" {
		return "", errorf("MissingParameter", "The request must contain the parameter GroupName")
	}
	if len(name) > 255 {
		return "", errorf("InvalidParameterValue", "Value (%s) for parameter groupName is invalid. Length exceeds maximum of 255", name)
	}
	if s.groupByName(name) != nil {
		return "", errorf("InvalidPlacementGroup.Duplicate", "The Placement Group '%s' already exists.", name)
	}
	strategy := in.Strategy
	if strategy == "" {
		return "", errorf("MissingParameter", "The request must contain the parameter Strategy")
	}
	if n := deref(in.PartitionCount); in.PartitionCount != nil {
		if strategy != ec2types.PlacementStrategyPartition {
			return "", errorf("InvalidParameterCombination", "The parameter PartitionCount is only supported with the partition strategy.")
		}
		if n < 1 || n > MaxPartitions {
			return "", errorf("InvalidParameterValue", "Value (%d) for parameter partitionCount is invalid. Expected a value between 1 and %d.", n, MaxPartitions)
		}
	}
	if in.SpreadLevel != "" && strategy != ec2types.PlacementStrategySpread {
		return "", errorf("InvalidParameterCombination", "The parameter SpreadLevel is only supported with the spread strategy.")
	}
	if in.SpreadLevel == ec2types.SpreadLevelHost {
		return "", errorf("InvalidParameterValue", "Host spread level placement groups are only supported on AWS Outposts.")
	}
	return strategy, nil
}

// createGroup adds a group. Caller holds s.mu.
func (s *Service) createGroup(in *ec2.CreatePlacementGroupInput) (*placementGroup, *protocol.Error) {
	strategy, err := s.checkNewGroup(in)
	if err != nil {
		return nil, err
	}
	id := "pg-" + s.ids.Hex(17)
	pg := &placementGroup{
		GroupName: in.GroupName, GroupId: ptr(id), Strategy: strategy, State: ec2types.PlacementGroupStateAvailable,
		GroupArn: ptr("arn:aws:ec2:" + s.opts.Region + ":" + s.opts.AccountID + ":placement-group/" + deref(in.GroupName)),
		Tags:     tagsFor(in.TagSpecifications, ec2types.ResourceTypePlacementGroup),
	}
	switch strategy {
	case ec2types.PlacementStrategyPartition:
		// EC2 makes two partitions when the request names no count.
		pg.PartitionCount = ptr(int32(2))
		if in.PartitionCount != nil {
			pg.PartitionCount = ptr(*in.PartitionCount)
		}
	case ec2types.PlacementStrategySpread:
		pg.SpreadLevel = ec2types.SpreadLevelRack
		if in.SpreadLevel != "" {
			pg.SpreadLevel = in.SpreadLevel
		}
	}
	s.placementGroups = append(s.placementGroups, pg)
	return pg, nil
}

func (s *Service) deletePlacementGroup(in *ec2.DeletePlacementGroupInput, dryRun bool) (*ec2.DeletePlacementGroupOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := deref(in.GroupName)
	pg := s.groupByName(name)
	if pg == nil {
		return nil, errorf("InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown.", name)
	}
	if n := len(s.groupMembers(*pg.GroupId)); n > 0 {
		return nil, errorf("InvalidPlacementGroup.InUse", "The Placement Group '%s' is in use and cannot be deleted.", name)
	}
	if dryRun {
		return nil, nil
	}
	for i, g := range s.placementGroups {
		if g == pg {
			s.placementGroups = append(s.placementGroups[:i], s.placementGroups[i+1:]...)
			break
		}
	}
	return &ec2.DeletePlacementGroupOutput{}, nil
}

func (s *Service) describePlacementGroups(in *ec2.DescribePlacementGroupsInput, _ bool) (*ec2.DescribePlacementGroupsOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range in.GroupIds {
		if !strings.HasPrefix(id, "pg-") {
			return nil, errorf("InvalidPlacementGroupId.Malformed", "Invalid id: \"%s\" (expecting \"pg-...\")", id)
		}
	}
	for _, id := range in.GroupIds {
		if s.placementGroupByID(id) == nil {
			return nil, errorf("InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown.", id)
		}
	}
	for _, n := range in.GroupNames {
		if s.groupByName(n) == nil {
			return nil, errorf("InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown.", n)
		}
	}
	out := &ec2.DescribePlacementGroupsOutput{PlacementGroups: []ec2types.PlacementGroup{}}
	for _, pg := range s.placementGroups {
		if !allowed(in.GroupIds, *pg.GroupId) || !allowed(in.GroupNames, *pg.GroupName) {
			continue
		}
		ok, err := matches(in.Filters, pg.Tags, func(name string) ([]string, bool) {
			switch name {
			case "group-name":
				return []string{*pg.GroupName}, true
			case "group-arn":
				return []string{*pg.GroupArn}, true
			case "state":
				return []string{string(pg.State)}, true
			case "strategy":
				return []string{string(pg.Strategy)}, true
			case "spread-level":
				return []string{string(pg.SpreadLevel)}, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			out.PlacementGroups = append(out.PlacementGroups, *pg)
		}
	}
	return out, nil
}

func (s *Service) groupByName(name string) *placementGroup {
	for _, pg := range s.placementGroups {
		if *pg.GroupName == name {
			return pg
		}
	}
	return nil
}

func (s *Service) placementGroupByID(id string) *placementGroup {
	for _, pg := range s.placementGroups {
		if *pg.GroupId == id {
			return pg
		}
	}
	return nil
}

// groupMembers are the group's pending and running instances. Caller
// holds s.mu.
func (s *Service) groupMembers(groupID string) []*instance {
	var out []*instance
	for _, in := range s.order {
		p := in.Placement
		if p == nil || deref(p.GroupId) != groupID {
			continue
		}
		if st := in.State.Name; st == ec2types.InstanceStateNamePending || st == ec2types.InstanceStateNameRunning {
			out = append(out, in)
		}
	}
	return out
}

// resolvePlacement finds the group a launch names. Caller holds s.mu.
func (s *Service) resolvePlacement(r placementRequest) (*placementGroup, *protocol.Error) {
	if r.empty() {
		return nil, nil
	}
	var pg *placementGroup
	switch {
	case r.id != "":
		pg = s.placementGroupByID(r.id)
		if pg == nil {
			return nil, errorf("InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown.", r.id)
		}
	case r.name != "":
		pg = s.groupByName(r.name)
		if pg == nil {
			return nil, errorf("InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown.", r.name)
		}
	default:
		return nil, errorf("InvalidParameterCombination", "A partition number requires a placement group.")
	}
	if r.partition != 0 {
		if pg.Strategy != ec2types.PlacementStrategyPartition {
			return nil, errorf("InvalidParameterCombination", "A partition number can only be specified for a partition placement group; '%s' uses the %s strategy.", *pg.GroupName, pg.Strategy)
		}
		if r.partition < 1 || r.partition > deref(pg.PartitionCount) {
			return nil, errorf("InvalidParameterValue", "Partition number %d is not valid for placement group '%s', which has %d partitions.", r.partition, *pg.GroupName, deref(pg.PartitionCount))
		}
	}
	return pg, nil
}

// placementSupported checks the type supports the group's strategy, as
// its PlacementGroupInfo says.
func placementSupported(info *ec2types.InstanceTypeInfo, spec launchSpec) *protocol.Error {
	pg := spec.placement
	if pg == nil {
		return nil
	}
	if info.PlacementGroupInfo != nil {
		for _, st := range info.PlacementGroupInfo.SupportedStrategies {
			if string(st) == string(pg.Strategy) {
				return nil
			}
		}
	}
	return errorf("InvalidParameterCombination", "The instance type %s does not support placement groups with the %s strategy.", spec.instanceType, pg.Strategy)
}

// placementRoom checks the group can take one more instance in the spec's
// zone, already counting those this request launched: a cluster group
// lives in one zone, a rack spread group holds seven running instances
// per zone. Caller holds s.mu.
func (s *Service) placementRoom(spec launchSpec) *protocol.Error {
	pg := spec.placement
	if pg == nil {
		return nil
	}
	zone := *spec.subnet.AvailabilityZone
	members := s.groupMembers(*pg.GroupId)
	switch pg.Strategy {
	case ec2types.PlacementStrategyCluster:
		for _, m := range members {
			if z := *m.Placement.AvailabilityZone; z != zone {
				return errorf("InvalidParameterValue", "The placement group '%s' is in Availability Zone %s; instances in a cluster placement group must launch into that zone, not %s.", *pg.GroupName, z, zone)
			}
		}
	case ec2types.PlacementStrategySpread:
		n := 0
		for _, m := range members {
			if *m.Placement.AvailabilityZone == zone {
				n++
			}
		}
		if n >= SpreadPerZone {
			return errorf("InsufficientInstanceCapacity", "You've reached the limit of instances in this spread placement group. A spread placement group can have up to seven instances per Availability Zone.")
		}
	}
	return nil
}

// partitionFor is the partition an instance launches into: the one asked
// for, else the one with the fewest members in the zone (lowest first), as
// EC2 spreads instances when no partition is named. Caller holds s.mu.
func (s *Service) partitionFor(spec launchSpec) int32 {
	pg := spec.placement
	if pg == nil || pg.Strategy != ec2types.PlacementStrategyPartition {
		return 0
	}
	if spec.partition != 0 {
		return spec.partition
	}
	count := map[int32]int{}
	for _, m := range s.groupMembers(*pg.GroupId) {
		if *m.Placement.AvailabilityZone == *spec.subnet.AvailabilityZone {
			count[deref(m.Placement.PartitionNumber)]++
		}
	}
	parts := make([]int32, 0, deref(pg.PartitionCount))
	for p := int32(1); p <= deref(pg.PartitionCount); p++ {
		parts = append(parts, p)
	}
	sort.SliceStable(parts, func(i, j int) bool { return count[parts[i]] < count[parts[j]] })
	return parts[0]
}

func orDefaultTenancy(t ec2types.Tenancy) ec2types.Tenancy {
	if t == "" {
		return ec2types.TenancyDefault
	}
	return t
}

// checkTenancy refuses a tenancy EC2 does not know, as EC2 does; host
// tenancy needs Dedicated Hosts, which the simulator does not have.
func checkTenancy(t ec2types.Tenancy) *protocol.Error {
	switch t {
	case "", ec2types.TenancyDefault, ec2types.TenancyDedicated:
		return nil
	case ec2types.TenancyHost:
		return errorf("InsufficientHostCapacity", "There is no Dedicated Host capacity available to launch the instance.")
	}
	return errorf("InvalidParameterValue", "Value (%s) for parameter tenancy is invalid. Valid values: default, dedicated, host", t)
}
