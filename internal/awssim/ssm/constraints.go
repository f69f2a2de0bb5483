package ssm

import c "github.com/joistdev/terraform-provider-joist/internal/awssim/constraint"

// constraints are SSM's model constraints on the operations' top-level
// input members.
var constraints = c.Operations{
	"GetParameter":        {c.String("Name", 1, 2048).Req()},
	"GetParameters":       {c.List("Names", 1, 10).Req()},
	"GetParametersByPath": {c.String("Path", 1, 2048).Req(), c.Integer("MaxResults", 1, 10)},
}

// Operations lists the operations served, each with its constraints.
func (s *Service) Operations() c.Operations { return s.dispatcher.Operations() }
