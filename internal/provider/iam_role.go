package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
)

// This file holds the IAM role operations joist_node_iam_role and
// joist_controller_iam_role share.

// roleSpec is a role as configured.
type roleSpec struct {
	Name, Path, Description, Boundary, Trust string
	Tags                                     map[string]string
	// MaxSessionDuration in seconds; 0 is IAM's default (3600).
	MaxSessionDuration int64
}

// liveRole is a role as read from IAM.
type liveRole struct {
	ARN, Name, Path, Description, Boundary, Trust string
	Tags                                          map[string]string
	MaxSessionDuration                            int64
	Attached                                      []string          // managed policy ARNs, sorted
	Inline                                        map[string]string // name -> document
}

func iamTags(m map[string]string) []iamtypes.Tag {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]iamtypes.Tag, 0, len(keys))
	for _, k := range keys {
		out = append(out, iamtypes.Tag{Key: aws.String(k), Value: aws.String(m[k])})
	}
	return out
}

func createRole(ctx context.Context, c *iam.Client, s roleSpec) (string, error) {
	in := &iam.CreateRoleInput{
		RoleName: aws.String(s.Name), Path: aws.String(s.Path), AssumeRolePolicyDocument: aws.String(s.Trust), Tags: iamTags(s.Tags),
	}
	if s.Description != "" {
		in.Description = aws.String(s.Description)
	}
	if s.Boundary != "" {
		in.PermissionsBoundary = aws.String(s.Boundary)
	}
	if s.MaxSessionDuration > 0 {
		in.MaxSessionDuration = aws.Int32(int32(s.MaxSessionDuration))
	}
	out, err := c.CreateRole(ctx, in)
	if err != nil {
		return "", fmt.Errorf("iam:CreateRole %s: %w", s.Name, err)
	}
	return aws.ToString(out.Role.Arn), nil
}

// readRole returns the role, or nil when it does not exist.
func readRole(ctx context.Context, c *iam.Client, name string) (*liveRole, error) {
	out, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	if isAWSCode(err, "NoSuchEntity") {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("iam:GetRole %s: %w", name, err)
	}
	r := out.Role
	trust, err := url.QueryUnescape(aws.ToString(r.AssumeRolePolicyDocument))
	if err != nil {
		trust = aws.ToString(r.AssumeRolePolicyDocument)
	}
	live := &liveRole{
		ARN: aws.ToString(r.Arn), Name: aws.ToString(r.RoleName), Path: aws.ToString(r.Path),
		Description: aws.ToString(r.Description), Trust: trust, Tags: map[string]string{}, Inline: map[string]string{},
		MaxSessionDuration: int64(aws.ToInt32(r.MaxSessionDuration)),
	}
	if b := r.PermissionsBoundary; b != nil {
		live.Boundary = aws.ToString(b.PermissionsBoundaryArn)
	}
	tags, err := c.ListRoleTags(ctx, &iam.ListRoleTagsInput{RoleName: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("iam:ListRoleTags %s: %w", name, err)
	}
	for _, t := range tags.Tags {
		live.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	attached := iam.NewListAttachedRolePoliciesPaginator(c, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(name)})
	for attached.HasMorePages() {
		page, err := attached.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("iam:ListAttachedRolePolicies %s: %w", name, err)
		}
		for _, p := range page.AttachedPolicies {
			live.Attached = append(live.Attached, aws.ToString(p.PolicyArn))
		}
	}
	sort.Strings(live.Attached)
	inline := iam.NewListRolePoliciesPaginator(c, &iam.ListRolePoliciesInput{RoleName: aws.String(name)})
	for inline.HasMorePages() {
		page, err := inline.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("iam:ListRolePolicies %s: %w", name, err)
		}
		for _, pn := range page.PolicyNames {
			doc, err := c.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String(pn)})
			if err != nil {
				return nil, fmt.Errorf("iam:GetRolePolicy %s/%s: %w", name, pn, err)
			}
			text, err := url.QueryUnescape(aws.ToString(doc.PolicyDocument))
			if err != nil {
				text = aws.ToString(doc.PolicyDocument)
			}
			live.Inline[pn] = text
		}
	}
	return live, nil
}

// updateRole brings trust, description, boundary and tags to s.
func updateRole(ctx context.Context, c *iam.Client, live *liveRole, s roleSpec) error {
	if !sameJSON(live.Trust, s.Trust) {
		if _, err := c.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String(s.Name), PolicyDocument: aws.String(s.Trust)}); err != nil {
			return fmt.Errorf("iam:UpdateAssumeRolePolicy %s: %w", s.Name, err)
		}
	}
	maxSession := s.MaxSessionDuration
	if maxSession == 0 {
		maxSession = defaultMaxSessionDuration
	}
	if live.Description != s.Description || live.MaxSessionDuration != maxSession {
		in := &iam.UpdateRoleInput{RoleName: aws.String(s.Name), Description: aws.String(s.Description), MaxSessionDuration: aws.Int32(int32(maxSession))}
		if _, err := c.UpdateRole(ctx, in); err != nil {
			return fmt.Errorf("iam:UpdateRole %s: %w", s.Name, err)
		}
	}
	if live.Boundary != s.Boundary {
		var err error
		if s.Boundary == "" {
			_, err = c.DeleteRolePermissionsBoundary(ctx, &iam.DeleteRolePermissionsBoundaryInput{RoleName: aws.String(s.Name)})
		} else {
			_, err = c.PutRolePermissionsBoundary(ctx, &iam.PutRolePermissionsBoundaryInput{RoleName: aws.String(s.Name), PermissionsBoundary: aws.String(s.Boundary)})
		}
		if err != nil {
			return fmt.Errorf("setting the permissions boundary of role %s: %w", s.Name, err)
		}
	}
	var untag []string
	for k := range live.Tags {
		if _, ok := s.Tags[k]; !ok {
			untag = append(untag, k)
		}
	}
	if len(untag) > 0 {
		sort.Strings(untag)
		if _, err := c.UntagRole(ctx, &iam.UntagRoleInput{RoleName: aws.String(s.Name), TagKeys: untag}); err != nil {
			return fmt.Errorf("iam:UntagRole %s: %w", s.Name, err)
		}
	}
	if len(s.Tags) > 0 {
		if _, err := c.TagRole(ctx, &iam.TagRoleInput{RoleName: aws.String(s.Name), Tags: iamTags(s.Tags)}); err != nil {
			return fmt.Errorf("iam:TagRole %s: %w", s.Name, err)
		}
	}
	return nil
}

// syncAttachments attaches and detaches managed policies so exactly want
// is attached.
func syncAttachments(ctx context.Context, c *iam.Client, role string, current, want []string) error {
	have := map[string]bool{}
	for _, a := range current {
		have[a] = true
	}
	keep := map[string]bool{}
	for _, a := range want {
		keep[a] = true
		if !have[a] {
			if _, err := c.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String(role), PolicyArn: aws.String(a)}); err != nil {
				return fmt.Errorf("iam:AttachRolePolicy %s to %s: %w", a, role, err)
			}
		}
	}
	for _, a := range current {
		if !keep[a] {
			if _, err := c.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(role), PolicyArn: aws.String(a)}); err != nil && !isAWSCode(err, "NoSuchEntity") {
				return fmt.Errorf("iam:DetachRolePolicy %s from %s: %w", a, role, err)
			}
		}
	}
	return nil
}

// syncInline puts and deletes inline policies so exactly want exists.
func syncInline(ctx context.Context, c *iam.Client, role string, current, want map[string]string) error {
	for name, doc := range want {
		if cur, ok := current[name]; ok && sameJSON(cur, doc) {
			continue
		}
		if _, err := c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(name), PolicyDocument: aws.String(doc)}); err != nil {
			return fmt.Errorf("iam:PutRolePolicy %s on %s: %w", name, role, err)
		}
	}
	for name := range current {
		if _, ok := want[name]; !ok {
			if _, err := c.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(name)}); err != nil && !isAWSCode(err, "NoSuchEntity") {
				return fmt.Errorf("iam:DeleteRolePolicy %s on %s: %w", name, role, err)
			}
		}
	}
	return nil
}

// deleteRole detaches and deletes the role's policies, then the role. It
// takes the role out of the instance profiles release proved free to
// (releaseRole, called before any change); a profile holding the role that
// is not among them makes IAM refuse the delete, and the role stays.
func deleteRole(ctx context.Context, c *iam.Client, name string, release *roleRelease) error {
	live, err := readRole(ctx, c, name)
	if err != nil || live == nil {
		return err
	}
	if err := syncAttachments(ctx, c, name, live.Attached, nil); err != nil {
		return err
	}
	if err := syncInline(ctx, c, name, live.Inline, nil); err != nil {
		return err
	}
	for _, p := range release.profiles {
		if _, err := c.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: aws.String(p), RoleName: aws.String(name)}); err != nil && !isAWSCode(err, "NoSuchEntity") {
			return fmt.Errorf("iam:RemoveRoleFromInstanceProfile %s: %w", p, err)
		}
	}
	if _, err := c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(name)}); err != nil && !isAWSCode(err, "NoSuchEntity") {
		return fmt.Errorf("iam:DeleteRole %s: %w", name, err)
	}
	return nil
}

// trustPolicy is a trust policy of the role's own statement and the
// statements users add.
func trustPolicy(statement map[string]any, extra ...map[string]any) string {
	statement["Effect"] = "Allow"
	doc := map[string]any{"Version": "2012-10-17", "Statement": append([]map[string]any{statement}, extra...)}
	return mustJSON(doc)
}

// defaultMaxSessionDuration is IAM's default session length, in seconds.
const defaultMaxSessionDuration = 3600

// uniqueSuffixLength is the length of the suffix uniqueName adds, as the
// AWS provider's name_prefix does: a role name is at most 64 characters,
// so a prefix is at most 38.
const uniqueSuffixLength = 26

// uniqueName is prefix followed by a timestamp and random digits: unique
// per create, ordered by creation.
func uniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + time.Now().UTC().Format("20060102150405") + hex.EncodeToString(b[:])
}

// namePrefixOf is the prefix uniqueName was given for name, or "" when
// name is not one of its names.
func namePrefixOf(name string) string {
	if len(name) < uniqueSuffixLength {
		return ""
	}
	suffix := name[len(name)-uniqueSuffixLength:]
	if _, err := time.Parse("20060102150405", suffix[:14]); err != nil {
		return ""
	}
	if _, err := hex.DecodeString(suffix[14:]); err != nil {
		return ""
	}
	return name[:len(name)-uniqueSuffixLength]
}
