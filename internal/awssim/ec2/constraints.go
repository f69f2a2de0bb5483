package ec2

import (
	"fmt"

	c "github.com/joistdev/terraform-provider-joist/internal/awssim/constraint"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// constraints are EC2's model constraints on the operations' top-level input
// members. EC2's model bounds MaxResults of some operations only; the others
// take any value and are served in pages of at most pageCap.
var constraints = c.Operations{
	"CancelCapacityReservation": {c.String("CapacityReservationId", c.None, c.None).Req()},
	"CopyImage": {
		c.String("ClientToken", 0, 128), c.String("Description", 0, 255), c.String("Name", 3, 128).Req(),
		c.String("SourceImageId", c.None, c.None).Req(), c.String("SourceRegion", c.None, c.None).Req(),
	},
	"EnableImageDeprecation": {c.String("ImageId", c.None, c.None).Req(), c.Rule{Member: "DeprecateAt", Type: "timestamp"}.Req()},
	"CreateCapacityReservation": {
		c.String("InstanceType", c.None, c.None).Req(),
		c.Enum("InstancePlatform", "Linux/UNIX", "Red Hat Enterprise Linux", "SUSE Linux", "Windows", "Windows with SQL Server",
			"Windows with SQL Server Enterprise", "Windows with SQL Server Standard", "Windows with SQL Server Web",
			"Linux with SQL Server Standard", "Linux with SQL Server Web", "Linux with SQL Server Enterprise",
			"RHEL with SQL Server Standard", "RHEL with SQL Server Enterprise", "RHEL with SQL Server Web", "RHEL with HA",
			"RHEL with HA and SQL Server Standard", "RHEL with HA and SQL Server Enterprise", "Ubuntu Pro").Req(),
		c.Integer("InstanceCount", c.None, c.None).Req(),
		c.Enum("Tenancy", "default", "dedicated"),
		c.Enum("EndDateType", "unlimited", "limited"),
		c.Enum("InstanceMatchCriteria", "open", "targeted"),
		c.Enum("DeliveryPreference", "fixed", "incremental"),
		c.Long("CommitmentDuration", 1, 200000000),
	},
	"CreateFleet": {
		c.Enum("ExcessCapacityTerminationPolicy", "no-termination", "termination"),
		c.List("LaunchTemplateConfigs", 0, 50).Req(),
		c.Structure("TargetCapacitySpecification").Req(),
		c.Enum("Type", "request", "maintain", "instant"),
	},
	"CreateLaunchTemplate": {
		c.String("LaunchTemplateName", 3, 128).Req(),
		c.String("VersionDescription", 0, 255),
		c.Structure("LaunchTemplateData").Req(),
	},
	"CreatePlacementGroup": {
		c.Enum("Strategy", "cluster", "spread", "partition"),
		c.Enum("SpreadLevel", "host", "rack"),
	},
	"CreateSecurityGroup":           {c.String("Description", c.None, c.None).Req(), c.String("GroupName", c.None, c.None).Req()},
	"CreateTags":                    {c.List("Resources", c.None, c.None).Req(), c.List("Tags", c.None, c.None).Req()},
	"DeleteTags":                    {c.List("Resources", c.None, c.None).Req()},
	"DeleteLaunchTemplate":          {c.String("LaunchTemplateName", 3, 128)},
	"DeletePlacementGroup":          {c.String("GroupName", c.None, c.None).Req()},
	"DescribeCapacityReservations":  {c.Integer("MaxResults", 1, 1000)},
	"DescribeInstanceTypeOfferings": {c.Enum("LocationType", "region", "availability-zone", "availability-zone-id", "outpost"), c.Integer("MaxResults", 5, 1000)},
	"DescribeInstanceTypes":         {c.List("InstanceTypes", 0, 100), c.Integer("MaxResults", 5, 100)},
	"DescribeLaunchTemplates":       {c.Integer("MaxResults", 1, 200)},
	"DescribeSecurityGroups":        {c.Integer("MaxResults", 5, 1000)},
	"DescribeSubnets":               {c.Integer("MaxResults", 5, 1000)},
	"DescribeVpcs":                  {c.Integer("MaxResults", 5, 1000)},
	"RunInstances": {
		c.Rule{Member: "InstanceType", Type: "string"}.Leave("enum",
			"EC2 answers a type the region does not offer with InvalidParameterValue; the model's list grows with every release"),
		c.Integer("MaxCount", c.None, c.None).Req(),
		c.Integer("MinCount", c.None, c.None).Req(),
		c.Enum("InstanceInitiatedShutdownBehavior", "stop", "terminate"),
	},
	"TerminateInstances": {c.List("InstanceIds", c.None, c.None).Req()},
	"StopInstances":      {c.List("InstanceIds", c.None, c.None).Req()},
}

// Operations lists the operations served, each with its constraints.
func (s *Service) Operations() c.Operations { return c.Served(s.ops, constraints) }

// invalid is EC2's answer to a broken constraint.
func invalid(v *c.Violation) *protocol.Error {
	if v.Kind == "required" {
		return errorf("MissingParameter", "The request must contain the parameter %s", v.Member)
	}
	return errorf("InvalidParameterValue", "Value (%s) for parameter %s is invalid. %s", v.Value, v.Member, v.Message)
}

// errNotSimulated answers a valid request for something the simulator does
// not model, in EC2's code for an unsupported request.
func errNotSimulated(format string, args ...any) *protocol.Error {
	return errorf("UnsupportedOperation", "%s (not simulated)", fmt.Sprintf(format, args...))
}
