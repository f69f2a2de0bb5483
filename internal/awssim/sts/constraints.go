package sts

import c "github.com/joistdev/terraform-provider-joist/internal/awssim/constraint"

// constraints are STS's model constraints on the operations' top-level
// input members.
var constraints = func() c.Operations {
	role, session := c.String("RoleArn", 20, 2048).Req(), c.String("RoleSessionName", 2, 64).Req()
	duration := c.Integer("DurationSeconds", 900, 43200)
	return c.Operations{
		"AssumeRole": {role, session, c.String("Policy", 1, c.None), duration,
			c.List("Tags", c.None, 50), c.List("TransitiveTagKeys", c.None, 50), c.String("ExternalId", 2, 1224),
			c.String("SerialNumber", 9, 256), c.String("TokenCode", 6, 6), c.String("SourceIdentity", 2, 64),
			c.List("ProvidedContexts", 1, 5)},
		"AssumeRoleWithWebIdentity": {role, session, c.String("WebIdentityToken", 4, 20000).Req(),
			c.String("ProviderId", 4, 2048), c.String("Policy", 1, 2048), duration},
	}
}()

// Operations lists the operations served, each with its constraints.
func (s *Service) Operations() c.Operations { return s.dispatcher.Operations() }
