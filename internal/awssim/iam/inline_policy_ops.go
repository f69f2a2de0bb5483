package iam

import (
	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
)

// inlineParams returns the role and inline policy name the RoleName and
// PolicyName parameters name.
func (s *Service) inlineParams(c *awsquery.Call) (*role, string, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, "", err
	}
	n, err := name(c, "PolicyName")
	if err != nil {
		return nil, "", err
	}
	return r, n, nil
}

func (s *Service) putRolePolicy(c *awsquery.Call) (any, *awsquery.Error) {
	r, n, err := s.inlineParams(c)
	if err != nil {
		return nil, err
	}
	doc, err := document(c, "PolicyDocument")
	if err != nil {
		return nil, err
	}
	if _, ok := r.inline[n]; !ok {
		r.inlineOrder = append(r.inlineOrder, n)
	}
	r.inline[n] = doc
	return nil, nil
}

func (s *Service) getRolePolicy(c *awsquery.Call) (any, *awsquery.Error) {
	r, n, err := s.inlineParams(c)
	if err != nil {
		return nil, err
	}
	doc, ok := r.inline[n]
	if !ok {
		return nil, errNoSuchEntity("The role policy with name %s cannot be found.", n)
	}
	return struct {
		RoleName       string `xml:"RoleName"`
		PolicyName     string `xml:"PolicyName"`
		PolicyDocument string `xml:"PolicyDocument"`
	}{r.name, n, encodeDocument(doc)}, nil
}

func (s *Service) deleteRolePolicy(c *awsquery.Call) (any, *awsquery.Error) {
	r, n, err := s.inlineParams(c)
	if err != nil {
		return nil, err
	}
	if _, ok := r.inline[n]; !ok {
		return nil, errNoSuchEntity("The role policy with name %s cannot be found.", n)
	}
	delete(r.inline, n)
	for i, o := range r.inlineOrder {
		if o == n {
			r.inlineOrder = append(r.inlineOrder[:i], r.inlineOrder[i+1:]...)
			break
		}
	}
	return nil, nil
}

func (s *Service) listRolePolicies(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	return struct {
		PolicyNames []string `xml:"PolicyNames>member"`
		IsTruncated bool     `xml:"IsTruncated"`
	}{PolicyNames: append([]string{}, r.inlineOrder...)}, nil
}
