package iam

import (
	"slices"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
)

// profileParam returns the instance profile the InstanceProfileName
// parameter names.
func (s *Service) profileParam(c *awsquery.Call) (*instanceProfile, *awsquery.Error) {
	n, err := name(c, "InstanceProfileName")
	if err != nil {
		return nil, err
	}
	p := s.instanceProfiles[n]
	if p == nil {
		return nil, errNoSuchInstanceProfile(n)
	}
	return p, nil
}

type instanceProfileResult struct {
	InstanceProfile instanceProfileXML `xml:"InstanceProfile"`
}

func (s *Service) createInstanceProfile(c *awsquery.Call) (any, *awsquery.Error) {
	n, err := name(c, "InstanceProfileName")
	if err != nil {
		return nil, err
	}
	p, err := path(c)
	if err != nil {
		return nil, err
	}
	tags, err := tagSet(nil).merge(tagsParam(c.Form))
	if err != nil {
		return nil, err
	}
	if s.instanceProfiles[n] != nil {
		return nil, errAlreadyExists("Instance Profile %s already exists.", n)
	}
	profile := &instanceProfile{
		name:    n,
		id:      s.ids.Upper("AIPA", 21),
		arn:     "arn:aws:iam::" + s.account + ":instance-profile" + p + n,
		path:    p,
		created: s.now(),
		tags:    tags,
	}
	s.instanceProfiles[n] = profile
	return instanceProfileResult{s.renderInstanceProfile(profile)}, nil
}

func (s *Service) getInstanceProfile(c *awsquery.Call) (any, *awsquery.Error) {
	p, err := s.profileParam(c)
	if err != nil {
		return nil, err
	}
	return instanceProfileResult{s.renderInstanceProfile(p)}, nil
}

func (s *Service) deleteInstanceProfile(c *awsquery.Call) (any, *awsquery.Error) {
	p, err := s.profileParam(c)
	if err != nil {
		return nil, err
	}
	if len(p.roles) > 0 {
		return nil, errDeleteConflict("Cannot delete entity, must remove roles from instance profile first.")
	}
	delete(s.instanceProfiles, p.name)
	return nil, nil
}

func (s *Service) addRoleToInstanceProfile(c *awsquery.Call) (any, *awsquery.Error) {
	p, err := s.profileParam(c)
	if err != nil {
		return nil, err
	}
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	if len(p.roles) > 0 {
		return nil, errLimitExceeded("Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1")
	}
	p.roles = append(p.roles, r.name)
	return nil, nil
}

func (s *Service) removeRoleFromInstanceProfile(c *awsquery.Call) (any, *awsquery.Error) {
	p, err := s.profileParam(c)
	if err != nil {
		return nil, err
	}
	n, err := name(c, "RoleName")
	if err != nil {
		return nil, err
	}
	i := slices.Index(p.roles, n)
	if i < 0 {
		return nil, errNoSuchRole(n)
	}
	p.roles = slices.Delete(p.roles, i, i+1)
	return nil, nil
}

// listProfiles lists, in name order, the page of profiles keep selects.
func (s *Service) listProfiles(c *awsquery.Call, keep func(*instanceProfile) bool) (any, *awsquery.Error) {
	profiles := []instanceProfileXML{}
	for _, n := range sortedNames(s.instanceProfiles) {
		if p := s.instanceProfiles[n]; keep(p) {
			profiles = append(profiles, s.renderInstanceProfile(p))
		}
	}
	profiles, pg, err := paginate(c, profiles)
	if err != nil {
		return nil, err
	}
	return struct {
		InstanceProfiles []instanceProfileXML `xml:"InstanceProfiles>member"`
		page
	}{profiles, pg}, nil
}

func (s *Service) listInstanceProfiles(c *awsquery.Call) (any, *awsquery.Error) {
	prefix := c.Form.Get("PathPrefix")
	return s.listProfiles(c, func(p *instanceProfile) bool { return strings.HasPrefix(p.path, prefix) })
}

func (s *Service) listInstanceProfilesForRole(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	return s.listProfiles(c, func(p *instanceProfile) bool { return slices.Contains(p.roles, r.name) })
}
