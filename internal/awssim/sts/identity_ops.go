package sts

import (
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
