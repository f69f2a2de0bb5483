package iam

import (
	"slices"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
)

// roleParam returns the role the RoleName parameter names.
func (s *Service) roleParam(c *awsquery.Call) (*role, *awsquery.Error) {
	n, err := name(c, "RoleName")
	if err != nil {
		return nil, err
	}
	r := s.roles[n]
	if r == nil {
		return nil, errNoSuchRole(n)
	}
	return r, nil
}

// boundaryParam reads a PermissionsBoundary parameter naming an existing
// managed policy.
func (s *Service) boundaryParam(c *awsquery.Call) (string, *awsquery.Error) {
	arn := c.Form.Get("PermissionsBoundary")
	if arn != "" && s.policies[arn] == nil {
		return "", errNoSuchEntity("Scope ARN: %s does not exist or is not attachable.", arn)
	}
	return arn, nil
}

type roleResult struct {
	Role roleXML `xml:"Role"`
}

func (s *Service) createRole(c *awsquery.Call) (any, *awsquery.Error) {
	n, err := name(c, "RoleName")
	if err != nil {
		return nil, err
	}
	p, err := path(c)
	if err != nil {
		return nil, err
	}
	doc, err := document(c, "AssumeRolePolicyDocument")
	if err != nil {
		return nil, err
	}
	maxSession := intParam(c, "MaxSessionDuration", 3600)
	boundary, err := s.boundaryParam(c)
	if err != nil {
		return nil, err
	}
	tags, err := tagSet(nil).merge(tagsParam(c.Form))
	if err != nil {
		return nil, err
	}
	if s.roles[n] != nil {
		return nil, errAlreadyExists("Role with name %s already exists.", n)
	}
	r := &role{
		name:               n,
		id:                 s.ids.Upper("AROA", 21),
		arn:                "arn:aws:iam::" + s.account + ":role" + p + n,
		path:               p,
		assumeRolePolicy:   doc,
		description:        c.Form.Get("Description"),
		maxSessionDuration: maxSession,
		boundary:           boundary,
		created:            s.now(),
		tags:               tags,
		inline:             map[string]string{},
	}
	s.roles[n] = r
	return roleResult{s.renderRole(r)}, nil
}

// serviceLinkedRoles are the service-linked roles the simulator can create:
// the AWS service name, the role name and its description.
var serviceLinkedRoles = map[string][2]string{
	"spot.amazonaws.com": {"AWSServiceRoleForEC2Spot", "Default EC2 Spot Service Linked Role"},
	"eks.amazonaws.com":  {"AWSServiceRoleForAmazonEKS", "Allows Amazon EKS to call AWS services on your behalf."},
}

func (s *Service) createServiceLinkedRole(c *awsquery.Call) (any, *awsquery.Error) {
	service := c.Form.Get("AWSServiceName")
	linked, ok := serviceLinkedRoles[service]
	if !ok {
		return nil, errInvalidInput("Service %s is not a service that supports service-linked roles in this simulator.", service)
	}
	n := linked[0]
	if s.roles[n] != nil {
		return nil, errInvalidInput("Service role name %s has been taken in this account, please try a different suffix.", n)
	}
	p := "/aws-service-role/" + service + "/"
	r := &role{
		name:               n,
		id:                 s.ids.Upper("AROA", 21),
		arn:                "arn:aws:iam::" + s.account + ":role" + p + n,
		path:               p,
		assumeRolePolicy:   `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":["` + service + `"]},"Action":["sts:AssumeRole"]}]}`,
		description:        linked[1],
		maxSessionDuration: 3600,
		created:            s.now(),
		inline:             map[string]string{},
	}
	s.roles[n] = r
	return roleResult{s.renderRole(r)}, nil
}

func (s *Service) getRole(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	return roleResult{s.renderRole(r)}, nil
}

func (s *Service) updateRole(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	maxSession := intParam(c, "MaxSessionDuration", r.maxSessionDuration)
	if _, ok := c.Form["Description"]; ok {
		r.description = c.Form.Get("Description")
	}
	r.maxSessionDuration = maxSession
	return struct{}{}, nil
}

// deleteRole fails while the role is in an instance profile or has managed
// or inline policies, as IAM does.
func (s *Service) deleteRole(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	for _, p := range s.instanceProfiles {
		if slices.Contains(p.roles, r.name) {
			return nil, errDeleteConflict("Cannot delete entity, must remove roles from instance profile first.")
		}
	}
	if len(r.attached) > 0 {
		return nil, errDeleteConflict("Cannot delete entity, must detach all policies first.")
	}
	if len(r.inline) > 0 {
		return nil, errDeleteConflict("Cannot delete entity, must delete policies first.")
	}
	delete(s.roles, r.name)
	return nil, nil
}

// listRoles lists roles under PathPrefix in name order.
func (s *Service) listRoles(c *awsquery.Call) (any, *awsquery.Error) {
	prefix := c.Form.Get("PathPrefix")
	roles := []roleXML{}
	for _, n := range sortedNames(s.roles) {
		if r := s.roles[n]; strings.HasPrefix(r.path, prefix) {
			x := s.renderRole(r)
			x.Tags = nil // ListRoles leaves tags out, as IAM does
			roles = append(roles, x)
		}
	}
	roles, p, err := paginate(c, roles)
	if err != nil {
		return nil, err
	}
	return struct {
		Roles []roleXML `xml:"Roles>member"`
		page
	}{roles, p}, nil
}

func (s *Service) updateAssumeRolePolicy(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	doc, err := document(c, "PolicyDocument")
	if err != nil {
		return nil, err
	}
	r.assumeRolePolicy = doc
	return nil, nil
}

func (s *Service) putRolePermissionsBoundary(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	boundary, err := s.boundaryParam(c)
	if err != nil {
		return nil, err
	}
	r.boundary = boundary
	return nil, nil
}

func (s *Service) deleteRolePermissionsBoundary(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	r.boundary = ""
	return nil, nil
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
