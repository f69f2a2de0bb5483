package ec2

import (
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// createSecurityGroup adds a group to the seeded VPC (the only one), with
// the tags of its security-group tag specification. Names are unique within
// the VPC, as in EC2.
func (s *Service) createSecurityGroup(in *ec2.CreateSecurityGroupInput, dryRun bool) (*ec2.CreateSecurityGroupOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vpc := *s.world.vpc.VpcId
	if in.VpcId != nil && *in.VpcId != vpc {
		return nil, errorf("InvalidVpcID.NotFound", "The vpc ID '%s' does not exist", *in.VpcId)
	}
	name := deref(in.GroupName)
	for _, g := range s.world.groups {
		if *g.GroupName == name {
			return nil, errorf("InvalidGroup.Duplicate", "The security group '%s' already exists for VPC '%s'", name, vpc)
		}
	}
	if dryRun {
		return nil, nil
	}
	id := "sg-" + s.ids.Hex(17)
	g := &ec2types.SecurityGroup{
		GroupId: ptr(id), GroupName: ptr(name), Description: in.Description, VpcId: ptr(vpc), OwnerId: ptr(s.opts.AccountID),
		SecurityGroupArn: ptr("arn:aws:ec2:" + s.opts.Region + ":" + s.opts.AccountID + ":security-group/" + id),
		Tags:             tagsFor(in.TagSpecifications, ec2types.ResourceTypeSecurityGroup),
	}
	s.world.groups = append(s.world.groups, g)
	return &ec2.CreateSecurityGroupOutput{GroupId: g.GroupId, SecurityGroupArn: g.SecurityGroupArn, Tags: g.Tags}, nil
}

// deleteSecurityGroup removes a group, by ID or name, unless an instance
// that is not terminated uses it (EC2's DependencyViolation).
func (s *Service) deleteSecurityGroup(in *ec2.DeleteSecurityGroupInput, dryRun bool) (*ec2.DeleteSecurityGroupOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := -1
	for j, g := range s.world.groups {
		if (in.GroupId != nil && *g.GroupId == *in.GroupId) || (in.GroupId == nil && in.GroupName != nil && *g.GroupName == *in.GroupName) {
			i = j
		}
	}
	if i < 0 {
		return nil, errorf("InvalidGroup.NotFound", "The security group '%s' does not exist", firstNonEmpty(deref(in.GroupId), deref(in.GroupName)))
	}
	g := s.world.groups[i]
	for _, inst := range s.instances {
		if inst.State != nil && inst.State.Name == ec2types.InstanceStateNameTerminated {
			continue
		}
		for _, used := range inst.SecurityGroups {
			if deref(used.GroupId) == *g.GroupId {
				return nil, errorf("DependencyViolation", "resource %s has a dependent object", *g.GroupId)
			}
		}
	}
	if dryRun {
		return nil, nil
	}
	s.world.groups = append(s.world.groups[:i:i], s.world.groups[i+1:]...)
	return &ec2.DeleteSecurityGroupOutput{GroupId: g.GroupId, Return: ptr(true)}, nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
