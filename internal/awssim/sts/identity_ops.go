package sts

import (
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// caller returns the identity behind the request's access key: the assumed
// role for keys this STS issued, otherwise the account root (the sandbox's
// static credentials).
func (s *Service) caller(c *awsquery.Call) identity {
	cred, _ := protocol.ParseAuthorization(c.Request.Header.Get("Authorization"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.sessions[cred.AccessKeyID]; ok {
		return id
	}
	return identity{Arn: "arn:aws:iam::" + s.account + ":root", UserID: s.account, Account: s.account}
}

func (s *Service) getCallerIdentity(c *awsquery.Call) (any, *awsquery.Error) {
	return s.caller(c), nil
}

// Authorize reports who signs with the access key and whether IAM lets
// them call action on resource (context holds the request's condition
// keys). A session of a role this STS issued is held to the role's
// policies; the account root (the sandbox's static credentials, and any key
// this STS did not issue) may do anything, as the root user may.
func (s *Service) Authorize(accessKey, action, resource string, context map[string]string) (principal string, allowed bool) {
	s.mu.Lock()
	id, isSession := s.sessions[accessKey]
	s.mu.Unlock()
	if !isSession {
		return "arn:aws:iam::" + s.account + ":root", true
	}
	if s.roles == nil {
		return id.Arn, true
	}
	// arn:aws:sts::<account>:assumed-role/<role name>/<session>
	_, rest, _ := strings.Cut(id.Arn, ":assumed-role/")
	role, _, _ := strings.Cut(rest, "/")
	return id.Arn, s.roles.RoleAllows(role, action, resource, context)
}
