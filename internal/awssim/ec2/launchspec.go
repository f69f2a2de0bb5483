package ec2

import (
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// specFromTemplate resolves what a launch template's data says about an
// instance. Overrides and request parameters are applied by the caller.
// Caller holds s.mu.
func (s *Service) specFromTemplate(d *ec2types.RequestLaunchTemplateData) (launchSpec, *protocol.Error) {
	spec := launchSpec{capacityType: "on-demand", instanceType: string(d.InstanceType), userData: deref(d.UserData), primaryKind: "interface"}
	if err := s.setImage(&spec, deref(d.ImageId)); err != nil {
		return spec, err
	}
	spec.groups = append(spec.groups, d.SecurityGroupIds...)
	for _, name := range d.SecurityGroups {
		for _, g := range s.world.groups {
			if *g.GroupName == name {
				spec.groups = append(spec.groups, *g.GroupId)
			}
		}
	}
	for _, ni := range d.NetworkInterfaces {
		kind := deref(ni.InterfaceType)
		if kind == "" {
			kind = "interface"
		}
		if card, device := deref(ni.NetworkCardIndex), deref(ni.DeviceIndex); card != 0 || device != 0 {
			spec.interfaces = append(spec.interfaces, extraInterface{card: card, device: device, kind: kind})
			continue
		}
		if kind == "efa-only" {
			return spec, errorf("InvalidParameterCombination", "The primary network interface (network card 0, device 0) cannot be of type efa-only.")
		}
		spec.primaryKind = kind
		spec.ipv4Prefixes, spec.ipv6Prefixes = deref(ni.Ipv4PrefixCount), deref(ni.Ipv6PrefixCount)
		spec.groups = append(spec.groups, ni.Groups...)
		spec.ipv6 = spec.ipv6 || deref(ni.PrimaryIpv6) || deref(ni.Ipv6AddressCount) > 0
		if id := deref(ni.SubnetId); id != "" {
			if spec.subnet = s.subnetByID(id); spec.subnet == nil {
				return spec, errorf("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", id)
			}
		}
	}
	if err := s.checkGroups(spec.groups); err != nil {
		return spec, err
	}
	for _, m := range d.BlockDeviceMappings {
		r := deviceRequest{name: deref(m.DeviceName), none: m.NoDevice != nil}
		if m.Ebs != nil {
			r.sizeGiB = deref(m.Ebs.VolumeSize)
		}
		spec.devices = append(spec.devices, r)
	}
	if p := d.IamInstanceProfile; p != nil {
		spec.profile = deref(p.Arn)
		if spec.profile == "" {
			spec.profile = deref(p.Name)
		}
	}
	spec.tags = tagsFor(launchTemplateTagSpecs(d.TagSpecifications), ec2types.ResourceTypeInstance)
	spec.metadata = &ec2types.InstanceMetadataOptionsResponse{
		State: ec2types.InstanceMetadataOptionsStateApplied, HttpTokens: ec2types.HttpTokensStateOptional,
		HttpPutResponseHopLimit: ptr(int32(1)), HttpEndpoint: ec2types.InstanceMetadataEndpointStateEnabled,
		HttpProtocolIpv6: ec2types.InstanceMetadataProtocolStateDisabled, InstanceMetadataTags: ec2types.InstanceMetadataTagsStateDisabled,
	}
	if m := d.MetadataOptions; m != nil {
		if m.HttpTokens != "" {
			spec.metadata.HttpTokens = ec2types.HttpTokensState(m.HttpTokens)
		}
		if m.HttpPutResponseHopLimit != nil {
			spec.metadata.HttpPutResponseHopLimit = m.HttpPutResponseHopLimit
		}
		if m.HttpEndpoint != "" {
			spec.metadata.HttpEndpoint = ec2types.InstanceMetadataEndpointState(m.HttpEndpoint)
		}
		if m.HttpProtocolIpv6 != "" {
			spec.metadata.HttpProtocolIpv6 = ec2types.InstanceMetadataProtocolState(m.HttpProtocolIpv6)
		}
		if m.InstanceMetadataTags != "" {
			spec.metadata.InstanceMetadataTags = ec2types.InstanceMetadataTagsState(m.InstanceMetadataTags)
		}
	}
	if mo := d.InstanceMarketOptions; mo != nil {
		switch mo.MarketType {
		case ec2types.MarketTypeSpot:
			spec.capacityType = "spot"
		case ec2types.MarketTypeCapacityBlock, ec2types.MarketTypeInterruptibleCapacityReservation:
			spec.market = mo.MarketType
		case "":
		default:
			return spec, errorf("InvalidParameterValue", "Value (%s) for parameter InstanceMarketOptions.MarketType is invalid.", mo.MarketType)
		}
	}
	if pl := d.Placement; pl != nil {
		if err := checkTenancy(pl.Tenancy); err != nil {
			return spec, err
		}
		spec.tenancy = pl.Tenancy
		pg, err := s.resolvePlacement(placementRequest{name: deref(pl.GroupName), id: deref(pl.GroupId), partition: deref(pl.PartitionNumber)})
		if err != nil {
			return spec, err
		}
		spec.placement = pg
		spec.partition = deref(pl.PartitionNumber)
	}
	if c := d.CapacityReservationSpecification; c != nil && c.CapacityReservationTarget != nil {
		if id := deref(c.CapacityReservationTarget.CapacityReservationId); id != "" {
			if spec.reservation = s.reservationByID(id); spec.reservation == nil {
				return spec, errorf("InvalidCapacityReservationId.NotFound", "The capacity reservation ID '%s' does not exist", id)
			}
		}
	}
	return spec, nil
}

// setImage sets the spec's image when id names one.
func (s *Service) setImage(spec *launchSpec, id string) *protocol.Error {
	if id == "" {
		return nil
	}
	if spec.image = s.imageByID(id); spec.image == nil {
		return errorf("InvalidAMIID.NotFound", "The image id '[%s]' does not exist", id)
	}
	return nil
}

// checkComplete reports what a launch still lacks after template and request.
func checkComplete(spec launchSpec) *protocol.Error {
	if spec.image == nil {
		return errorf("MissingParameter", "The request must contain the parameter ImageId: set it in the launch template or the request")
	}
	if spec.instanceType == "" {
		return errorf("MissingParameter", "The request must contain the parameter InstanceType: set it in the launch template or the request")
	}
	return nil
}

func (s *Service) checkGroups(ids []string) *protocol.Error {
	for _, g := range ids {
		if s.groupByID(g) == nil {
			return errorf("InvalidGroup.NotFound", "The security group '%s' does not exist", g)
		}
	}
	return nil
}

// subnetFor picks the subnet a launch lands in: the one named, else the
// first subnet of the zone named, else the first subnet.
func (s *Service) subnetFor(subnetID, zone string, fallback *subnet) (*subnet, *protocol.Error) {
	if subnetID != "" {
		sn := s.subnetByID(subnetID)
		if sn == nil {
			return nil, errorf("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", subnetID)
		}
		if zone != "" && *sn.AvailabilityZone != zone {
			return nil, errorf("InvalidParameterValue", "Subnet %s is in %s, not in the requested zone %s", subnetID, *sn.AvailabilityZone, zone)
		}
		return sn, nil
	}
	if fallback != nil && (zone == "" || *fallback.AvailabilityZone == zone) {
		return fallback, nil
	}
	for _, sn := range s.world.subnets {
		if zone == "" || *sn.AvailabilityZone == zone {
			return sn, nil
		}
	}
	return nil, errorf("InvalidParameterValue", "Invalid availability zone: [%s]", zone)
}

// launchable checks that the spec's type can run in its subnet's zone with
// its capacity type; the error is what EC2 reports for that override.
func (s *Service) launchable(spec launchSpec) *protocol.Error {
	info, ok := s.catalog.InstanceType(spec.instanceType)
	if !ok {
		return errorf("InvalidParameterValue", "The instance type '%s' does not exist", spec.instanceType)
	}
	zone := *spec.subnet.AvailabilityZone
	if !s.catalog.Offered(s.region.Name, zone, spec.instanceType) {
		return errorf("Unsupported", "Your requested instance type (%s) is not supported in your requested Availability Zone (%s). Please retry your request by not specifying an Availability Zone or choosing %s.", spec.instanceType, zone, s.zonesOffering(spec.instanceType))
	}
	if spec.capacityType == "spot" && !supportsUsage(info, ec2types.UsageClassTypeSpot) {
		return errorf("Unsupported", "The requested configuration is currently not supported. Please check the documentation for supported configurations.")
	}
	if spec.profile != "" && s.opts.InstanceProfiles != nil {
		if _, _, ok := s.opts.InstanceProfiles(spec.profile); !ok {
			return errorf("InvalidParameterValue", "Value (%s) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name", spec.profile)
		}
	}
	if err := interfacesFit(info, spec); err != nil {
		return err
	}
	if n := spec.ipv4Prefixes; n > 0 && *spec.subnet.AvailableIpAddressCount < 1+16*n {
		return errorf("InsufficientCidrBlocks", "There are not enough free cidr blocks in the specified subnet to satisfy the request.")
	}
	if err := reservationLaunchable(spec); err != nil {
		return err
	}
	if err := placementSupported(info, spec); err != nil {
		return err
	}
	archOK := false
	for _, a := range info.ProcessorInfo.SupportedArchitectures {
		if string(a) == string(spec.image.Architecture) {
			archOK = true
		}
	}
	if !archOK {
		return errorf("InvalidParameterValue", "The architecture '%s' of the specified instance type does not match the architecture '%s' of the specified AMI. Specify an instance type and an AMI that have matching architectures, and try again.",
			enumStrings(info.ProcessorInfo.SupportedArchitectures), spec.image.Architecture)
	}
	return nil
}

func (s *Service) zonesOffering(instanceType string) []string {
	var out []string
	for _, z := range s.region.Zones {
		if s.catalog.Offered(s.region.Name, z.Name, instanceType) {
			out = append(out, z.Name)
		}
	}
	return out
}

func supportsUsage(t *ec2types.InstanceTypeInfo, c ec2types.UsageClassType) bool {
	for _, u := range t.SupportedUsageClasses {
		if u == c {
			return true
		}
	}
	return false
}

// capacityError is the error a launch gets when a pool (or reservation) is full.
func (s *Service) capacityError(spec launchSpec) *protocol.Error {
	if spec.reservation != nil {
		return errorf("ReservationCapacityExceeded", "There is insufficient capacity in the capacity reservation %s.", *spec.reservation.CapacityReservationId)
	}
	if spec.capacityType == "spot" {
		return errorf("InsufficientInstanceCapacity", "There is no Spot capacity available that matches your request.")
	}
	return errorf("InsufficientInstanceCapacity", "We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). Our system will be working on provisioning additional capacity. You can currently get %s capacity by not specifying an Availability Zone in your request or choosing %v.",
		spec.instanceType, *spec.subnet.AvailabilityZone, spec.instanceType, s.zonesOffering(spec.instanceType))
}

// capacityFor reports whether the spec's pool (or reservation) holds more
// instances than already. Caller holds s.mu.
func (s *Service) capacityFor(spec launchSpec, already int) bool {
	if r := spec.reservation; r != nil {
		return int(*r.AvailableInstanceCount) > already && *r.InstanceType == spec.instanceType &&
			*r.AvailabilityZone == *spec.subnet.AvailabilityZone
	}
	return s.available(pool{spec.instanceType, *spec.subnet.AvailabilityZone, spec.capacityType}) > already
}

// interfacesFit checks a launch's network interfaces against its type: the
// network cards and device slots exist, and EFA interfaces are supported,
// no more of them than the type has.
func interfacesFit(info *ec2types.InstanceTypeInfo, spec launchSpec) *protocol.Error {
	n := info.NetworkInfo
	efa := 0
	if isEFA(spec.primaryKind) {
		efa++
	}
	for _, x := range spec.interfaces {
		slots := int32(-1)
		if n != nil {
			for _, card := range n.NetworkCards {
				if deref(card.NetworkCardIndex) == x.card {
					slots = deref(card.MaximumNetworkInterfaces)
				}
			}
		}
		if slots < 0 {
			return errorf("InvalidParameterValue", "Network card index %d is not supported by instance type %s.", x.card, spec.instanceType)
		}
		if x.device >= slots {
			return errorf("InvalidParameterValue", "Device index %d on network card %d exceeds the %d interfaces instance type %s supports there.", x.device, x.card, slots, spec.instanceType)
		}
		if isEFA(x.kind) {
			efa++
		}
	}
	if efa == 0 {
		return nil
	}
	if n == nil || !deref(n.EfaSupported) || n.EfaInfo == nil {
		return errorf("InvalidParameterCombination", "Elastic Fabric Adapter (EFA) interfaces are not supported by instance type %s.", spec.instanceType)
	}
	if most := deref(n.EfaInfo.MaximumEfaInterfaces); int32(efa) > most {
		return errorf("InvalidParameterCombination", "Instance type %s supports at most %d EFA interfaces, %d requested.", spec.instanceType, most, efa)
	}
	return nil
}
