package iam

import (
	"slices"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
)

func (s *Service) attachRolePolicy(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	p, err := s.policyParam(c)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(r.attached, p.arn) {
		r.attached = append(r.attached, p.arn)
	}
	return nil, nil
}

func (s *Service) detachRolePolicy(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	arn := c.Form.Get("PolicyArn")
	i := slices.Index(r.attached, arn)
	if i < 0 {
		return nil, errNoSuchEntity("Policy %s was not found.", arn)
	}
	r.attached = slices.Delete(r.attached, i, i+1)
	return nil, nil
}

type attachedPolicyXML struct {
	PolicyName string `xml:"PolicyName"`
	PolicyArn  string `xml:"PolicyArn"`
}

func (s *Service) listAttachedRolePolicies(c *awsquery.Call) (any, *awsquery.Error) {
	r, err := s.roleParam(c)
	if err != nil {
		return nil, err
	}
	out := struct {
		AttachedPolicies []attachedPolicyXML `xml:"AttachedPolicies>member"`
		IsTruncated      bool                `xml:"IsTruncated"`
	}{AttachedPolicies: []attachedPolicyXML{}}
	for _, arn := range r.attached {
		if p := s.policies[arn]; p != nil {
			out.AttachedPolicies = append(out.AttachedPolicies, attachedPolicyXML{PolicyName: p.name, PolicyArn: arn})
		}
	}
	return out, nil
}
