package pricing

import c "github.com/joistdev/terraform-provider-joist/internal/awssim/constraint"

// constraints are the Price List API's model constraints on the operations'
// top-level input members.
var constraints = c.Operations{
	"GetProducts": {c.Rule{Member: "ServiceCode", Type: "string"}.Req(), c.List("Filters", 0, 50),
		c.String("FormatVersion", 1, 32), c.Integer("MaxResults", 1, 100)},
	"DescribeServices": {c.String("FormatVersion", 1, 32), c.Integer("MaxResults", 1, 100)},
}

// Operations lists the operations served, each with its constraints.
func (s *Service) Operations() c.Operations { return s.dispatcher.Operations() }
