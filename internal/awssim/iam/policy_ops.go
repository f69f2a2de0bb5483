package iam

import (
	"strconv"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
)

// maxPolicyVersions is IAM's limit of versions kept per managed policy.
const maxPolicyVersions = 5

// policyParam returns the managed policy the PolicyArn parameter names.
func (s *Service) policyParam(c *awsquery.Call) (*managedPolicy, *awsquery.Error) {
	arn := c.Form.Get("PolicyArn")
	p := s.policies[arn]
	if p == nil {
		return nil, errNoSuchPolicy(arn)
	}
	return p, nil
}

type policyResult struct {
	Policy policyXML `xml:"Policy"`
}

func (s *Service) createPolicy(c *awsquery.Call) (any, *awsquery.Error) {
	n, err := name(c, "PolicyName")
	if err != nil {
		return nil, err
	}
	p, err := path(c)
	if err != nil {
		return nil, err
	}
	doc, err := document(c, "PolicyDocument")
	if err != nil {
		return nil, err
	}
	tags, err := tagSet(nil).merge(tagsParam(c.Form))
	if err != nil {
		return nil, err
	}
	arn := "arn:aws:iam::" + s.account + ":policy" + p + n
	if s.policies[arn] != nil {
		return nil, errAlreadyExists("A policy called %s already exists. Duplicate names are not allowed.", n)
	}
	now := s.now()
	policy := &managedPolicy{
		name:        n,
		id:          s.ids.Upper("ANPA", 21),
		arn:         arn,
		path:        p,
		description: c.Form.Get("Description"),
		created:     now,
		updated:     now,
		tags:        tags,
		versions:    []*policyVersion{{id: "v1", document: doc, created: now}},
		defaultID:   "v1",
		nextVersion: 2,
	}
	s.policies[arn] = policy
	return policyResult{s.renderPolicy(policy)}, nil
}

func (s *Service) getPolicy(c *awsquery.Call) (any, *awsquery.Error) {
	p, err := s.policyParam(c)
	if err != nil {
		return nil, err
	}
	return policyResult{s.renderPolicy(p)}, nil
}

// deletePolicy fails while the policy is attached or a boundary, or has
// versions besides the default, as IAM does.
func (s *Service) deletePolicy(c *awsquery.Call) (any, *awsquery.Error) {
	p, err := s.policyParam(c)
	if err != nil {
		return nil, err
	}
	if p.awsManaged {
		return nil, iamError(403, "AccessDenied", "Cannot delete policies outside your own account.")
	}
	if x := s.renderPolicy(p); x.AttachmentCount > 0 || x.PermissionsBoundaryUsageCount > 0 {
		return nil, errDeleteConflict("Cannot delete a policy attached to entities.")
	}
	if len(p.versions) > 1 {
		return nil, errDeleteConflict("This policy has more than one version. Before you delete a policy, you must delete the policy's versions. The default version is deleted with the policy.")
	}
	delete(s.policies, p.arn)
	return nil, nil
}

// listPolicies lists managed policies by Scope (All, AWS, Local), PathPrefix
// and OnlyAttached.
func (s *Service) listPolicies(c *awsquery.Call) (any, *awsquery.Error) {
	scope := c.Form.Get("Scope")
	prefix := c.Form.Get("PathPrefix")
	onlyAttached := c.Form.Get("OnlyAttached") == "true"
	policies := []policyXML{}
	for _, arn := range sortedNames(s.policies) {
		p := s.policies[arn]
		x := s.renderPolicy(p)
		if (scope == "AWS" && !p.awsManaged) || (scope == "Local" && p.awsManaged) ||
			!strings.HasPrefix(p.path, prefix) || (onlyAttached && x.AttachmentCount == 0) {
			continue
		}
		x.Tags = nil
		policies = append(policies, x)
	}
	policies, pg, err := paginate(c, policies)
	if err != nil {
		return nil, err
	}
	return struct {
		Policies []policyXML `xml:"Policies>member"`
		page
	}{policies, pg}, nil
}

type versionResult struct {
	PolicyVersion versionXML `xml:"PolicyVersion"`
}

func (s *Service) createPolicyVersion(c *awsquery.Call) (any, *awsquery.Error) {
	p, err := s.policyParam(c)
	if err != nil {
		return nil, err
	}
	doc, err := document(c, "PolicyDocument")
	if err != nil {
		return nil, err
	}
	if p.awsManaged {
		return nil, iamError(403, "AccessDenied", "Cannot modify policies outside your own account.")
	}
	if len(p.versions) >= maxPolicyVersions {
		return nil, errLimitExceeded("A managed policy can have up to %d versions. Before you create a new version, you must delete an existing version.", maxPolicyVersions)
	}
	now := s.now()
	v := &policyVersion{id: "v" + strconv.Itoa(p.nextVersion), document: doc, created: now}
	p.nextVersion++
	p.versions = append(p.versions, v)
	if c.Form.Get("SetAsDefault") == "true" {
		p.defaultID = v.id
		p.updated = now
	}
	return versionResult{renderVersion(p, v, false)}, nil
}

// policyVersionParams returns the policy and version the PolicyArn and
// VersionId parameters name.
func (s *Service) policyVersionParams(c *awsquery.Call) (*managedPolicy, *policyVersion, *awsquery.Error) {
	p, err := s.policyParam(c)
	if err != nil {
		return nil, nil, err
	}
	id := c.Form.Get("VersionId")
	v := p.version(id)
	if v == nil {
		return nil, nil, errNoSuchEntity("Policy %s version %s does not exist or is not attachable.", p.arn, id)
	}
	return p, v, nil
}

func (s *Service) getPolicyVersion(c *awsquery.Call) (any, *awsquery.Error) {
	p, v, err := s.policyVersionParams(c)
	if err != nil {
		return nil, err
	}
	return versionResult{renderVersion(p, v, true)}, nil
}

func (s *Service) listPolicyVersions(c *awsquery.Call) (any, *awsquery.Error) {
	p, err := s.policyParam(c)
	if err != nil {
		return nil, err
	}
	out := struct {
		Versions    []versionXML `xml:"Versions>member"`
		IsTruncated bool         `xml:"IsTruncated"`
	}{}
	// Newest first, as IAM lists them.
	for i := len(p.versions) - 1; i >= 0; i-- {
		out.Versions = append(out.Versions, renderVersion(p, p.versions[i], false))
	}
	return out, nil
}

func (s *Service) deletePolicyVersion(c *awsquery.Call) (any, *awsquery.Error) {
	p, v, err := s.policyVersionParams(c)
	if err != nil {
		return nil, err
	}
	if v.id == p.defaultID {
		return nil, errDeleteConflict("Cannot delete the default version of a policy.")
	}
	for i, o := range p.versions {
		if o == v {
			p.versions = append(p.versions[:i], p.versions[i+1:]...)
			break
		}
	}
	return nil, nil
}

func (s *Service) setDefaultPolicyVersion(c *awsquery.Call) (any, *awsquery.Error) {
	p, v, err := s.policyVersionParams(c)
	if err != nil {
		return nil, err
	}
	p.defaultID = v.id
	p.updated = s.now()
	return nil, nil
}
