package ec2

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// taggable finds the tag list of a resource by ID. Caller holds s.mu.
func (s *Service) taggable(id string) (*[]ec2types.Tag, *protocol.Error) {
	notFound := func(code, kind string) *protocol.Error {
		return errorf(code, "The %s ID '%s' does not exist", kind, id)
	}
	switch {
	case strings.HasPrefix(id, "i-"):
		if in, ok := s.instances[id]; ok {
			return &in.Tags, nil
		}
		return nil, errInstanceNotFound(id)
	case strings.HasPrefix(id, "lt-"):
		if lt, ok := s.templates[id]; ok {
			return &lt.meta.Tags, nil
		}
		return nil, errorf("InvalidLaunchTemplateId.NotFound", "The specified launch template, with template ID %s, does not exist.", id)
	case strings.HasPrefix(id, "subnet-"):
		if sn := s.subnetByID(id); sn != nil {
			return &sn.Tags, nil
		}
		return nil, notFound("InvalidSubnetID.NotFound", "subnet")
	case strings.HasPrefix(id, "sg-"):
		if g := s.groupByID(id); g != nil {
			return &g.Tags, nil
		}
		return nil, errorf("InvalidGroup.NotFound", "The security group '%s' does not exist", id)
	case strings.HasPrefix(id, "ami-"):
		if im := s.imageByID(id); im != nil {
			return &im.Tags, nil
		}
		return nil, errorf("InvalidAMIID.NotFound", "The image id '[%s]' does not exist", id)
	case strings.HasPrefix(id, "vpc-"):
		if id == *s.world.vpc.VpcId {
			return &s.world.vpc.Tags, nil
		}
		return nil, notFound("InvalidVpcID.NotFound", "vpc")
	case strings.HasPrefix(id, "cr-"):
		if r := s.reservationByID(id); r != nil {
			return &r.Tags, nil
		}
		return nil, notFound("InvalidCapacityReservationId.NotFound", "capacity reservation")
	}
	return nil, errorf("InvalidID", "The ID '%s' is not valid", id)
}

func (s *Service) createTags(in *ec2.CreateTagsInput, dryRun bool) (*ec2.CreateTagsOutput, *protocol.Error) {
	return retag(s, in.Resources, dryRun, func(have []ec2types.Tag) []ec2types.Tag { return mergeTags(have, in.Tags) }, &ec2.CreateTagsOutput{})
}

func (s *Service) deleteTags(in *ec2.DeleteTagsInput, dryRun bool) (*ec2.DeleteTagsOutput, *protocol.Error) {
	return retag(s, in.Resources, dryRun, func(have []ec2types.Tag) []ec2types.Tag {
		var out []ec2types.Tag
	next:
		for _, t := range have {
			for _, d := range in.Tags {
				// A delete without a value removes the key whatever its value.
				if deref(d.Key) == deref(t.Key) && (d.Value == nil || deref(d.Value) == deref(t.Value)) {
					continue next
				}
			}
			out = append(out, t)
		}
		return out
	}, &ec2.DeleteTagsOutput{})
}

// retag applies change to every resource's tags, all or none. Tag lists are
// replaced, never edited in place, so copies handed out stay unchanged.
func retag[Out any](s *Service, ids []string, dryRun bool, change func([]ec2types.Tag) []ec2types.Tag, out *Out) (*Out, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lists := make([]*[]ec2types.Tag, 0, len(ids))
	for _, id := range ids {
		l, err := s.taggable(id)
		if err != nil {
			return nil, err
		}
		lists = append(lists, l)
	}
	if dryRun {
		return nil, nil
	}
	for _, l := range lists {
		*l = change(*l)
	}
	return out, nil
}
