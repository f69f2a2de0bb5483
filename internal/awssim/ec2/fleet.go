package ec2

import (
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// candidate is one launch template override a fleet may launch from.
type candidate struct {
	spec      launchSpec
	template  *ec2types.FleetLaunchTemplateSpecification
	override  *ec2types.FleetLaunchTemplateOverrides
	priority  float64
	maxPrice  float64 // 0: no limit
	failed    map[string]bool
	launched  map[string][]string // capacity type -> instance IDs
	invalidAt *protocol.Error     // the override cannot launch at all
	noSpot    bool                // the type cannot run as spot
}

// invalid is why the candidate cannot launch as a capacity type, if it cannot.
func (c *candidate) invalid(capacityType string) *protocol.Error {
	if c.invalidAt != nil {
		return c.invalidAt
	}
	if capacityType == "spot" && c.noSpot {
		return errorf("Unsupported", "The requested configuration is currently not supported. Please check the documentation for supported configurations.")
	}
	return nil
}

// deepPool is the remaining capacity from which price-capacity-optimized
// treats a pool as deep, preferring it over cheaper shallow pools.
const deepPool = 10

func (s *Service) createFleet(in *ec2.CreateFleetInput, dryRun bool) (*ec2.CreateFleetOutput, *protocol.Error) {
	if in.Type != ec2types.FleetTypeInstant {
		return nil, errNotSimulated("fleets of type %q; use instant", in.Type)
	}
	tcs := in.TargetCapacitySpecification
	if tcs.TotalTargetCapacity == nil {
		return nil, errorf("MissingParameter", "The request must contain the parameter TargetCapacitySpecification.TotalTargetCapacity")
	}
	if len(in.LaunchTemplateConfigs) == 0 {
		return nil, errorf("InvalidParameterValue", "The request must contain at least one launch template configuration")
	}
	want := map[string]int{"on-demand": int(deref(tcs.OnDemandTargetCapacity)), "spot": int(deref(tcs.SpotTargetCapacity))}
	if rest := int(*tcs.TotalTargetCapacity) - want["on-demand"] - want["spot"]; rest > 0 {
		switch tcs.DefaultTargetCapacityType {
		case ec2types.DefaultTargetCapacityTypeSpot:
			want["spot"] += rest
		case ec2types.DefaultTargetCapacityTypeOnDemand, ec2types.DefaultTargetCapacityTypeCapacityBlock, "reserved-capacity":
			want["on-demand"] += rest
		default:
			return nil, errorf("InvalidParameterValue", "TargetCapacitySpecification.DefaultTargetCapacityType must be spot or on-demand when the total exceeds the on-demand and spot targets")
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	out := &ec2.CreateFleetOutput{FleetId: ptr("fleet-" + s.ids.UUID()), Errors: []ec2types.CreateFleetError{}, Instances: []ec2types.CreateFleetInstance{}}
	var cands []*candidate
	for i := range in.LaunchTemplateConfigs {
		cfg := &in.LaunchTemplateConfigs[i]
		if cfg.LaunchTemplateSpecification == nil {
			return nil, errorf("MissingParameter", "The request must contain the parameter LaunchTemplateConfigs.%d.LaunchTemplateSpecification", i+1)
		}
		ltSpec := resolvedTemplateSpec(cfg.LaunchTemplateSpecification)
		lt, err := s.template(deref(cfg.LaunchTemplateSpecification.LaunchTemplateId), deref(cfg.LaunchTemplateSpecification.LaunchTemplateName))
		if err == nil {
			err = checkVersion(deref(cfg.LaunchTemplateSpecification.Version))
		}
		if err != nil {
			// EC2 reports a missing template per config, in the fleet's errors.
			for _, ct := range []string{"on-demand", "spot"} {
				if want[ct] > 0 {
					out.Errors = append(out.Errors, fleetError(err, ltSpec, nil, ct))
				}
			}
			continue
		}
		ltSpec.LaunchTemplateId, ltSpec.LaunchTemplateName = lt.meta.LaunchTemplateId, lt.meta.LaunchTemplateName
		base, err := s.specFromTemplate(&lt.data)
		if err != nil {
			return nil, err
		}
		overrides := cfg.Overrides
		if len(overrides) == 0 {
			overrides = []ec2types.FleetLaunchTemplateOverridesRequest{{}}
		}
		for j := range overrides {
			c, err := s.candidate(base, ltSpec, &overrides[j], in.TagSpecifications)
			if err != nil {
				return nil, err
			}
			cands = append(cands, c)
		}
	}
	if err := reservedTarget(in, cands); err != nil {
		return nil, err
	}
	if dryRun {
		return nil, nil
	}
	reservationID := "r-" + s.ids.Hex(17)
	for _, ct := range []string{"on-demand", "spot"} {
		strategy := ""
		if ct == "spot" && in.SpotOptions != nil {
			strategy = string(in.SpotOptions.AllocationStrategy)
		}
		if ct == "on-demand" && in.OnDemandOptions != nil {
			strategy = string(in.OnDemandOptions.AllocationStrategy)
		}
		for n := 0; n < want[ct]; {
			c := s.pick(cands, ct, strategy)
			if c == nil {
				break
			}
			spec := c.spec
			spec.capacityType = ct
			spec.reservationID = reservationID
			if ct == "spot" && c.maxPrice > 0 && s.price(spec, ct) > c.maxPrice {
				c.failed[ct] = true
				out.Errors = append(out.Errors, fleetError(errorf("SpotMaxPriceTooLow",
					"Your Spot request price of %s is lower than the minimum required Spot request fulfillment price of %.6f.",
					deref(c.override.MaxPrice), s.price(spec, ct)), c.template, c.override, ct))
				continue
			}
			if err := s.placementRoom(spec); err != nil {
				c.failed[ct] = true
				out.Errors = append(out.Errors, fleetError(err, c.template, c.override, ct))
				continue
			}
			if !s.capacityFor(spec, 0) {
				c.failed[ct] = true
				out.Errors = append(out.Errors, fleetError(s.capacityError(spec), c.template, c.override, ct))
				continue
			}
			inst := s.launch(spec, n)
			c.launched[ct] = append(c.launched[ct], *inst.InstanceId)
			n++
		}
	}
	for _, c := range cands {
		for _, ct := range []string{"on-demand", "spot"} {
			if err := c.invalid(ct); err != nil && want[ct] > 0 {
				out.Errors = append(out.Errors, fleetError(err, c.template, c.override, ct))
			}
			if ids := c.launched[ct]; len(ids) > 0 {
				out.Instances = append(out.Instances, ec2types.CreateFleetInstance{
					InstanceIds: ids, InstanceType: ec2types.InstanceType(c.spec.instanceType),
					Lifecycle:                  ec2types.InstanceLifecycle(ct),
					LaunchTemplateAndOverrides: &ec2types.LaunchTemplateAndOverridesResponse{LaunchTemplateSpecification: c.template, Overrides: c.override},
				})
			}
		}
	}
	return out, nil
}

// candidate applies one override to a template's spec. Invalid overrides
// (unknown type, type not in the zone) become candidates that never launch
// and are reported in the fleet's errors, as EC2 does.
func (s *Service) candidate(base launchSpec, lt *ec2types.FleetLaunchTemplateSpecification, o *ec2types.FleetLaunchTemplateOverridesRequest, tagSpecs []ec2types.TagSpecification) (*candidate, *protocol.Error) {
	spec := base
	if o.InstanceType != "" {
		spec.instanceType = string(o.InstanceType)
	}
	if err := s.setImage(&spec, deref(o.ImageId)); err != nil {
		return nil, err
	}
	if err := checkComplete(spec); err != nil {
		return nil, err
	}
	sn, err := s.subnetFor(deref(o.SubnetId), deref(o.AvailabilityZone), spec.subnet)
	if err != nil {
		return nil, err
	}
	spec.subnet = sn
	if pl := o.Placement; pl != nil && deref(pl.GroupName) != "" {
		pg, err := s.resolvePlacement(placementRequest{name: deref(pl.GroupName)})
		if err != nil {
			return nil, err
		}
		spec.placement, spec.partition = pg, 0
	}
	if len(spec.groups) == 0 {
		spec.groups = []string{*s.world.groups[0].GroupId}
	}
	spec.tags = mergeTags(spec.tags, tagsFor(tagSpecs, ec2types.ResourceTypeInstance))
	c := &candidate{
		spec: spec, template: lt, failed: map[string]bool{}, launched: map[string][]string{},
		priority: math.Inf(1),
		override: &ec2types.FleetLaunchTemplateOverrides{
			InstanceType: ec2types.InstanceType(spec.instanceType), SubnetId: sn.SubnetId, AvailabilityZone: o.AvailabilityZone,
			ImageId: o.ImageId, MaxPrice: o.MaxPrice, Priority: o.Priority, WeightedCapacity: o.WeightedCapacity,
		},
	}
	if o.Priority != nil {
		c.priority = *o.Priority
	}
	if o.MaxPrice != nil {
		c.maxPrice, _ = strconv.ParseFloat(*o.MaxPrice, 64)
	}
	c.invalidAt = s.launchable(spec)
	if info, ok := s.catalog.InstanceType(spec.instanceType); ok {
		c.noSpot = !supportsUsage(info, ec2types.UsageClassTypeSpot)
	}
	return c, nil
}

// pick returns the candidate the allocation strategy launches the next
// instance from, or nil when none is left. Caller holds s.mu.
func (s *Service) pick(cands []*candidate, capacityType, strategy string) *candidate {
	var open []*candidate
	for _, c := range cands {
		if c.invalid(capacityType) != nil || c.failed[capacityType] {
			continue
		}
		open = append(open, c)
	}
	if len(open) == 0 {
		return nil
	}
	price := func(c *candidate) float64 { return s.price(c.spec, capacityType) }
	depth := func(c *candidate) int {
		sp := c.spec
		sp.capacityType = capacityType
		if sp.reservation != nil {
			return int(*sp.reservation.AvailableInstanceCount)
		}
		return s.available(pool{sp.instanceType, *sp.subnet.AvailabilityZone, capacityType})
	}
	var less func(a, b *candidate) bool
	switch strategy {
	case "prioritized", "capacity-optimized-prioritized":
		less = func(a, b *candidate) bool {
			if a.priority != b.priority {
				return a.priority < b.priority
			}
			return price(a) < price(b)
		}
	case "capacity-optimized":
		less = func(a, b *candidate) bool { return depth(a) > depth(b) }
	case "price-capacity-optimized":
		// Deep pools first, cheapest first within a depth class. An empty
		// pool ranks as deep: it stands for capacity EC2 expected and did
		// not find, so it is tried and reported as InsufficientInstanceCapacity.
		shallow := func(c *candidate) bool { d := depth(c); return d > 0 && d < deepPool }
		less = func(a, b *candidate) bool {
			if sa, sb := shallow(a), shallow(b); sa != sb {
				return sb
			}
			return price(a) < price(b)
		}
	default: // lowest-price, diversified
		less = func(a, b *candidate) bool { return price(a) < price(b) }
	}
	sort.SliceStable(open, func(i, j int) bool { return less(open[i], open[j]) })
	return open[0]
}

// price is what an instance of the spec costs per hour; unpriced types sort last.
func (s *Service) price(spec launchSpec, capacityType string) float64 {
	if capacityType == "spot" {
		if p, ok := s.catalog.SpotPrice(s.region.Name, *spec.subnet.AvailabilityZone, spec.instanceType); ok {
			return p
		}
	} else if p, ok := s.catalog.OnDemandPrice(s.region.Name, spec.instanceType); ok {
		return p
	}
	return math.MaxFloat64
}

func resolvedTemplateSpec(r *ec2types.FleetLaunchTemplateSpecificationRequest) *ec2types.FleetLaunchTemplateSpecification {
	if r == nil {
		return nil
	}
	return &ec2types.FleetLaunchTemplateSpecification{LaunchTemplateId: r.LaunchTemplateId, LaunchTemplateName: r.LaunchTemplateName, Version: r.Version}
}

func fleetError(err *protocol.Error, lt *ec2types.FleetLaunchTemplateSpecification, o *ec2types.FleetLaunchTemplateOverrides, capacityType string) ec2types.CreateFleetError {
	return ec2types.CreateFleetError{
		ErrorCode: ptr(err.Code), ErrorMessage: ptr(err.Message), Lifecycle: ec2types.InstanceLifecycle(capacityType),
		LaunchTemplateAndOverrides: &ec2types.LaunchTemplateAndOverridesResponse{LaunchTemplateSpecification: lt, Overrides: o},
	}
}

// reservedTarget checks a fleet's target capacity type against the market
// type of its launch templates, as EC2 does: capacity-block goes with
// launches into capacity blocks, reserved-capacity (with the
// interruptible-capacity-reservation reservation type) with launches into
// interruptible reservations, and neither market type with any other
// target.
func reservedTarget(in *ec2.CreateFleetInput, cands []*candidate) *protocol.Error {
	target := in.TargetCapacitySpecification.DefaultTargetCapacityType
	var want ec2types.MarketType
	switch target {
	case ec2types.DefaultTargetCapacityTypeCapacityBlock:
		want = ec2types.MarketTypeCapacityBlock
		if in.SpotOptions != nil || in.OnDemandOptions != nil || deref(in.TargetCapacitySpecification.SpotTargetCapacity) > 0 {
			return errorf("InvalidParameterCombination", "A fleet with DefaultTargetCapacityType capacity-block cannot set SpotOptions, OnDemandOptions or a Spot target capacity.")
		}
	case ec2types.DefaultTargetCapacityTypeReservedCapacity:
		want = ec2types.MarketTypeInterruptibleCapacityReservation
		if o := in.ReservedCapacityOptions; o == nil || !slices.Contains(o.ReservationTypes, ec2types.FleetReservationTypeInterruptibleCapacityReservation) {
			return errorf("MissingParameter", "A fleet with DefaultTargetCapacityType reserved-capacity must set ReservedCapacityOptions.ReservationTypes.")
		}
	}
	for _, c := range cands {
		if c.spec.market != want {
			return errorf("InvalidParameterCombination", "The launch template %s has InstanceMarketOptions.MarketType %q, which does not go with DefaultTargetCapacityType %q.",
				deref(c.template.LaunchTemplateName), c.spec.market, target)
		}
	}
	return nil
}
