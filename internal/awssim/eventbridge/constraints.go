package eventbridge

import c "github.com/joistdev/terraform-provider-joist/internal/awssim/constraint"

// constraints are EventBridge's model constraints on the operations'
// top-level input members.
var constraints = func() c.Operations {
	name := c.String("Name", 1, 64).Req()
	rule := c.String("Rule", 1, 64).Req()
	bus := c.String("EventBusName", 1, 1600)
	nextToken := c.String("NextToken", 1, 2048)
	limit := c.Integer("Limit", 1, 100)
	arn := c.String("ResourceARN", 1, 1600).Req()
	return c.Operations{
		"PutRule": {name, c.String("ScheduleExpression", c.None, 256), c.String("EventPattern", c.None, 4096),
			c.Enum("State", "ENABLED", "DISABLED", "ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS"),
			c.String("Description", c.None, 512), c.String("RoleArn", 1, 1600), bus},
		"DescribeRule":        {name, bus},
		"DeleteRule":          {name, bus},
		"EnableRule":          {name, bus},
		"DisableRule":         {name, bus},
		"ListRules":           {c.String("NamePrefix", 1, 64), bus, nextToken, limit},
		"PutTargets":          {rule, bus, c.List("Targets", 1, 100).Req()},
		"RemoveTargets":       {rule, bus, c.List("Ids", 1, 100).Req()},
		"ListTargetsByRule":   {rule, bus, nextToken, limit},
		"TagResource":         {arn, c.List("Tags", c.None, c.None).Req()},
		"UntagResource":       {arn, c.List("TagKeys", c.None, c.None).Req()},
		"ListTagsForResource": {arn},
		"PutEvents":           {c.List("Entries", 1, 10).Req(), c.String("EndpointId", 1, 50)},
	}
}()

// Operations lists the operations served, each with its constraints.
func (s *Service) Operations() c.Operations { return s.dispatcher.Operations() }
