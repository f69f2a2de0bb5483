package iam

import c "github.com/joistdev/terraform-provider-joist/internal/awssim/constraint"

// constraints are IAM's model constraints on the operations' top-level
// input members. Names and paths are further held to IAM's character sets
// by the operations.
var constraints = func() c.Operations {
	role := c.String("RoleName", 1, 64).Req()
	policy := c.String("PolicyName", 1, 128).Req()
	profile := c.String("InstanceProfileName", 1, 128).Req()
	arn := c.String("PolicyArn", 20, 2048).Req()
	doc := func(m string) c.Rule { return c.String(m, 1, 131072).Req() }
	version := c.Rule{Member: "VersionId", Type: "string"}.Req()
	path, prefix := c.String("Path", 1, 512), c.String("PathPrefix", 1, 512)
	marker, maxItems := c.String("Marker", 1, 320), c.Integer("MaxItems", 1, 1000)
	description := c.String("Description", c.None, 1000)
	sessionDuration := c.Integer("MaxSessionDuration", 3600, 43200)
	tags, tagKeys := c.List("Tags", c.None, 50), c.List("TagKeys", c.None, 50).Req()
	boundary := c.String("PermissionsBoundary", 20, 2048)
	return c.Operations{
		"CreateRole":                    {path, role, doc("AssumeRolePolicyDocument"), description, sessionDuration, boundary, tags},
		"CreateServiceLinkedRole":       {c.String("AWSServiceName", 1, 128).Req(), description, c.String("CustomSuffix", 1, 64)},
		"GetRole":                       {role},
		"UpdateRole":                    {role, description, sessionDuration},
		"DeleteRole":                    {role},
		"ListRoles":                     {prefix, marker, maxItems},
		"UpdateAssumeRolePolicy":        {role, doc("PolicyDocument")},
		"PutRolePermissionsBoundary":    {role, boundary.Req()},
		"DeleteRolePermissionsBoundary": {role},
		"TagRole":                       {role, tags.Req()},
		"UntagRole":                     {role, tagKeys},
		"ListRoleTags":                  {role, marker, maxItems},
		"PutRolePolicy":                 {role, policy, doc("PolicyDocument")},
		"GetRolePolicy":                 {role, policy},
		"DeleteRolePolicy":              {role, policy},
		"ListRolePolicies":              {role, marker, maxItems},
		"CreatePolicy":                  {policy, path, doc("PolicyDocument"), description, tags},
		"GetPolicy":                     {arn},
		"DeletePolicy":                  {arn},
		"ListPolicies": {c.Enum("Scope", "All", "AWS", "Local"), prefix,
			c.Enum("PolicyUsageFilter", "PermissionsPolicy", "PermissionsBoundary"), marker, maxItems},
		"CreatePolicyVersion":           {arn, doc("PolicyDocument")},
		"GetPolicyVersion":              {arn, version},
		"ListPolicyVersions":            {arn, marker, maxItems},
		"DeletePolicyVersion":           {arn, version},
		"SetDefaultPolicyVersion":       {arn, version},
		"AttachRolePolicy":              {role, arn},
		"DetachRolePolicy":              {role, arn},
		"ListAttachedRolePolicies":      {role, prefix, marker, maxItems},
		"CreateInstanceProfile":         {profile, path, tags},
		"GetInstanceProfile":            {profile},
		"DeleteInstanceProfile":         {profile},
		"AddRoleToInstanceProfile":      {profile, role},
		"RemoveRoleFromInstanceProfile": {profile, role},
		"ListInstanceProfiles":          {prefix, marker, maxItems},
		"ListInstanceProfilesForRole":   {role, marker, maxItems},
		"TagInstanceProfile":            {profile, tags.Req()},
		"UntagInstanceProfile":          {profile, tagKeys},
		"ListInstanceProfileTags":       {profile, marker, maxItems},
	}
}()

// Operations lists the operations served, each with its constraints.
func (s *Service) Operations() c.Operations { return s.dispatcher.Operations() }
