package iam

import (
	"net/url"
	"strings"
	"time"
)

// The XML shapes of IAM entities in responses.

type roleXML struct {
	Path                     string       `xml:"Path"`
	RoleName                 string       `xml:"RoleName"`
	RoleID                   string       `xml:"RoleId"`
	Arn                      string       `xml:"Arn"`
	CreateDate               string       `xml:"CreateDate"`
	AssumeRolePolicyDocument string       `xml:"AssumeRolePolicyDocument,omitempty"`
	Description              string       `xml:"Description,omitempty"`
	MaxSessionDuration       int          `xml:"MaxSessionDuration,omitempty"`
	PermissionsBoundary      *boundaryXML `xml:"PermissionsBoundary,omitempty"`
	Tags                     tagSet       `xml:"Tags>member,omitempty"`
}

type boundaryXML struct {
	PermissionsBoundaryType string `xml:"PermissionsBoundaryType"`
	PermissionsBoundaryArn  string `xml:"PermissionsBoundaryArn"`
}

type policyXML struct {
	PolicyName                    string `xml:"PolicyName"`
	PolicyID                      string `xml:"PolicyId"`
	Arn                           string `xml:"Arn"`
	Path                          string `xml:"Path"`
	DefaultVersionID              string `xml:"DefaultVersionId"`
	AttachmentCount               int    `xml:"AttachmentCount"`
	PermissionsBoundaryUsageCount int    `xml:"PermissionsBoundaryUsageCount"`
	IsAttachable                  bool   `xml:"IsAttachable"`
	Description                   string `xml:"Description,omitempty"`
	CreateDate                    string `xml:"CreateDate"`
	UpdateDate                    string `xml:"UpdateDate"`
	Tags                          tagSet `xml:"Tags>member,omitempty"`
}

type versionXML struct {
	Document         string `xml:"Document,omitempty"`
	VersionID        string `xml:"VersionId"`
	IsDefaultVersion bool   `xml:"IsDefaultVersion"`
	CreateDate       string `xml:"CreateDate"`
}

type instanceProfileXML struct {
	Path                string    `xml:"Path"`
	InstanceProfileName string    `xml:"InstanceProfileName"`
	InstanceProfileID   string    `xml:"InstanceProfileId"`
	Arn                 string    `xml:"Arn"`
	CreateDate          string    `xml:"CreateDate"`
	Roles               []roleXML `xml:"Roles>member"`
	Tags                tagSet    `xml:"Tags>member,omitempty"`
}

// encodeDocument URL-encodes a policy document as IAM returns it (RFC 3986,
// spaces as %20).
func encodeDocument(doc string) string {
	return strings.ReplaceAll(url.QueryEscape(doc), "+", "%20")
}

func isoDate(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (s *Service) renderRole(r *role) roleXML {
	x := roleXML{
		Path:                     r.path,
		RoleName:                 r.name,
		RoleID:                   r.id,
		Arn:                      r.arn,
		CreateDate:               isoDate(r.created),
		AssumeRolePolicyDocument: encodeDocument(r.assumeRolePolicy),
		Description:              r.description,
		MaxSessionDuration:       r.maxSessionDuration,
		Tags:                     r.tags,
	}
	if r.boundary != "" {
		x.PermissionsBoundary = &boundaryXML{PermissionsBoundaryType: "PermissionsBoundaryPolicy", PermissionsBoundaryArn: r.boundary}
	}
	return x
}

func (s *Service) renderPolicy(p *managedPolicy) policyXML {
	x := policyXML{
		PolicyName:       p.name,
		PolicyID:         p.id,
		Arn:              p.arn,
		Path:             p.path,
		DefaultVersionID: p.defaultID,
		IsAttachable:     true,
		Description:      p.description,
		CreateDate:       isoDate(p.created),
		UpdateDate:       isoDate(p.updated),
		Tags:             p.tags,
	}
	for _, r := range s.roles {
		for _, arn := range r.attached {
			if arn == p.arn {
				x.AttachmentCount++
			}
		}
		if r.boundary == p.arn {
			x.PermissionsBoundaryUsageCount++
		}
	}
	return x
}

func renderVersion(p *managedPolicy, v *policyVersion, withDocument bool) versionXML {
	x := versionXML{VersionID: v.id, IsDefaultVersion: v.id == p.defaultID, CreateDate: isoDate(v.created)}
	if withDocument {
		x.Document = encodeDocument(v.document)
	}
	return x
}

func (s *Service) renderInstanceProfile(p *instanceProfile) instanceProfileXML {
	x := instanceProfileXML{
		Path:                p.path,
		InstanceProfileName: p.name,
		InstanceProfileID:   p.id,
		Arn:                 p.arn,
		CreateDate:          isoDate(p.created),
		Roles:               []roleXML{},
		Tags:                p.tags,
	}
	for _, name := range p.roles {
		if r := s.roles[name]; r != nil {
			x.Roles = append(x.Roles, s.renderRole(r))
		}
	}
	return x
}
