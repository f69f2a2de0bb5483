package ec2

import (
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

func (s *Service) describeAvailabilityZones(in *ec2.DescribeAvailabilityZonesInput, _ bool) (*ec2.DescribeAvailabilityZonesOutput, *protocol.Error) {
	out := &ec2.DescribeAvailabilityZonesOutput{AvailabilityZones: []ec2types.AvailabilityZone{}}
	for _, z := range s.region.Zones {
		if !allowed(in.ZoneNames, z.Name) || !allowed(in.ZoneIds, z.ID) {
			continue
		}
		ok, err := matches(in.Filters, nil, func(name string) ([]string, bool) {
			switch name {
			case "zone-name":
				return []string{z.Name}, true
			case "zone-id":
				return []string{z.ID}, true
			case "region-name":
				return []string{s.region.Name}, true
			case "state":
				return []string{"available"}, true
			case "zone-type":
				return []string{"availability-zone"}, true
			case "opt-in-status":
				return []string{"opt-in-not-required"}, true
			case "group-name", "network-border-group":
				return []string{s.region.Name}, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			out.AvailabilityZones = append(out.AvailabilityZones, ec2types.AvailabilityZone{
				ZoneName: ptr(z.Name), ZoneId: ptr(z.ID), RegionName: ptr(s.region.Name),
				State: ec2types.AvailabilityZoneStateAvailable, ZoneType: ptr("availability-zone"),
				OptInStatus: ec2types.AvailabilityZoneOptInStatusOptInNotRequired,
				GroupName:   ptr(s.region.Name), NetworkBorderGroup: ptr(s.region.Name),
				Messages: []ec2types.AvailabilityZoneMessage{},
			})
		}
	}
	return out, nil
}

func (s *Service) describeSubnets(in *ec2.DescribeSubnetsInput, _ bool) (*ec2.DescribeSubnetsOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range in.SubnetIds {
		if s.subnetByID(id) == nil {
			return nil, errorf("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", id)
		}
	}
	var found []ec2types.Subnet
	for _, sn := range s.world.subnets {
		if !allowed(in.SubnetIds, *sn.SubnetId) {
			continue
		}
		ok, err := matches(in.Filters, sn.Tags, func(name string) ([]string, bool) {
			switch name {
			case "subnet-id":
				return []string{*sn.SubnetId}, true
			case "vpc-id":
				return []string{*sn.VpcId}, true
			case "availability-zone":
				return []string{*sn.AvailabilityZone}, true
			case "availability-zone-id":
				return []string{*sn.AvailabilityZoneId}, true
			case "cidr-block", "cidr", "cidrBlock":
				return []string{*sn.CidrBlock}, true
			case "state":
				return []string{string(sn.State)}, true
			case "default-for-az", "defaultForAz":
				return []string{"false"}, true
			case "map-public-ip-on-launch":
				return []string{boolString(*sn.MapPublicIpOnLaunch)}, true
			case "owner-id":
				return []string{*sn.OwnerId}, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			found = append(found, sn.Subnet)
		}
	}
	start, end, next, err := page(len(found), in.MaxResults, in.NextToken, 0)
	if err != nil {
		return nil, err
	}
	return &ec2.DescribeSubnetsOutput{Subnets: append([]ec2types.Subnet{}, found[start:end]...), NextToken: next}, nil
}

func (s *Service) describeSecurityGroups(in *ec2.DescribeSecurityGroupsInput, _ bool) (*ec2.DescribeSecurityGroupsOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range in.GroupIds {
		if s.groupByID(id) == nil {
			return nil, errorf("InvalidGroup.NotFound", "The security group '%s' does not exist", id)
		}
	}
	var found []ec2types.SecurityGroup
	for _, g := range s.world.groups {
		if !allowed(in.GroupIds, *g.GroupId) || !allowed(in.GroupNames, *g.GroupName) {
			continue
		}
		ok, err := matches(in.Filters, g.Tags, func(name string) ([]string, bool) {
			switch name {
			case "group-id":
				return []string{*g.GroupId}, true
			case "group-name":
				return []string{*g.GroupName}, true
			case "vpc-id":
				return []string{*g.VpcId}, true
			case "description":
				return []string{*g.Description}, true
			case "owner-id":
				return []string{*g.OwnerId}, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			found = append(found, *g)
		}
	}
	start, end, next, err := page(len(found), in.MaxResults, in.NextToken, 0)
	if err != nil {
		return nil, err
	}
	return &ec2.DescribeSecurityGroupsOutput{SecurityGroups: append([]ec2types.SecurityGroup{}, found[start:end]...), NextToken: next}, nil
}

func (s *Service) describeVpcs(in *ec2.DescribeVpcsInput, _ bool) (*ec2.DescribeVpcsOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.world.vpc
	for _, id := range in.VpcIds {
		if id != *v.VpcId {
			return nil, errorf("InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", id)
		}
	}
	ok, err := matches(in.Filters, v.Tags, func(name string) ([]string, bool) {
		switch name {
		case "vpc-id":
			return []string{*v.VpcId}, true
		case "cidr", "cidr-block-association.cidr-block":
			return []string{*v.CidrBlock}, true
		case "state":
			return []string{string(v.State)}, true
		case "is-default":
			return []string{"false"}, true
		}
		return nil, false
	})
	if err != nil {
		return nil, err
	}
	out := &ec2.DescribeVpcsOutput{Vpcs: []ec2types.Vpc{}}
	if ok {
		out.Vpcs = append(out.Vpcs, v)
	}
	return out, nil
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
