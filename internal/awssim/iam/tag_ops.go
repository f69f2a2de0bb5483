package iam

import (
	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
)

// The tag operations of roles and instance profiles differ only in which
// entity's tags they touch.

type listTagsResult struct {
	Tags        tagSet `xml:"Tags>member"`
	IsTruncated bool   `xml:"IsTruncated"`
}

func tag(tags *tagSet, c *awsquery.Call) (any, *awsquery.Error) {
	merged, err := tags.merge(tagsParam(c.Form))
	if err != nil {
		return nil, err
	}
	*tags = merged
	return nil, nil
}

func untag(tags *tagSet, c *awsquery.Call) (any, *awsquery.Error) {
	*tags = tags.without(awsquery.Strings(c.Form, "TagKeys"))
	return nil, nil
}

func listTags(tags tagSet) (any, *awsquery.Error) {
	return listTagsResult{Tags: append(tagSet{}, tags...)}, nil
}

func (s *Service) tagRole(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	return tag(&r.tags, c)
}

func (s *Service) untagRole(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	return untag(&r.tags, c)
}

func (s *Service) listRoleTags(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	return listTags(r.tags)
}

func (s *Service) tagInstanceProfile(c *awsquery.Call) (any, *awsquery.Error) {
	p, err := s.profileParam(c)
	if err != nil {
		return nil, err
	}
	return tag(&p.tags, c)
}

func (s *Service) untagInstanceProfile(c *awsquery.Call) (any, *awsquery.Error) {
	p, err := s.profileParam(c)
	if err != nil {
		return nil, err
	}
	return untag(&p.tags, c)
}

func (s *Service) listInstanceProfileTags(c *awsquery.Call) (any, *awsquery.Error) {
	p, err := s.profileParam(c)
	if err != nil {
		return nil, err
	}
	return listTags(p.tags)
}
