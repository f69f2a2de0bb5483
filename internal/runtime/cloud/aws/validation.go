package aws

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/selector"
)

// ValidationTTL is how long a permission check's outcome is reused.
const ValidationTTL = 30 * time.Minute

// Validation failure reasons (the ValidationSucceeded condition's).
const (
	ReasonCreateLaunchTemplateAuthCheckFailed = "CreateLaunchTemplateAuthCheckFailed"
	ReasonCreateFleetAuthCheckFailed          = "CreateFleetAuthCheckFailed"
	ReasonRunInstancesAuthCheckFailed         = "RunInstancesAuthCheckFailed"
)

type validation struct{ reason, message string }

// ValidateLaunchPermissions dry-runs the calls a launch for the node class
// makes (CreateLaunchTemplate, CreateFleet, RunInstances) with its tags,
// and returns a reason and message when EC2 refuses one. Checks that
// cannot run yet (no AMI or subnet resolved) pass; outcomes are cached.
// DISABLE_DRY_RUN skips them.
func (p *Provider) ValidateLaunchPermissions(ctx context.Context, nc *awsv1.EC2NodeClass) (reason, message string) {
	if p.settings.DisableDryRun || len(nc.Status.AMIs) == 0 || len(nc.Status.Subnets) == 0 {
		return "", ""
	}
	key := nc.Name + "/" + nc.Hash(p.settings.ClusterCABundle) + "/" + nc.Status.AMIs[0].ID + "/" + nc.Status.Subnets[0].ID
	if v, ok := p.validations.Get(key); ok {
		return v.reason, v.message
	}
	tags := selector.Tags(p.ownershipTags(nc, "validation"))
	image, subnet := nc.Status.AMIs[0].ID, nc.Status.Subnets[0].ID
	checks := []struct {
		reason, call string
		run          func() error
	}{
		{ReasonCreateLaunchTemplateAuthCheckFailed, "ec2:CreateLaunchTemplate", func() error {
			_, err := p.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
				DryRun: aws.Bool(true), LaunchTemplateName: aws.String("joist-validation-" + nc.Name),
				LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(image)},
				TagSpecifications:  []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: tags}},
			})
			return err
		}},
		{ReasonCreateFleetAuthCheckFailed, "ec2:CreateFleet", func() error {
			_, err := p.ec2.CreateFleet(ctx, &ec2.CreateFleetInput{
				DryRun: aws.Bool(true), Type: ec2types.FleetTypeInstant,
				LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{
					LaunchTemplateName: aws.String("joist-validation-" + nc.Name), Version: aws.String("$Latest"),
				}}},
				TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
					TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand,
				},
				TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeFleet, Tags: tags}},
			})
			return err
		}},
		{ReasonRunInstancesAuthCheckFailed, "ec2:RunInstances", func() error {
			_, err := p.ec2.RunInstances(ctx, &ec2.RunInstancesInput{
				DryRun: aws.Bool(true), ImageId: aws.String(image), InstanceType: ec2types.InstanceTypeM5Large,
				MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: aws.String(subnet),
				TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: tags}},
			})
			return err
		}},
	}
	result := validation{}
	unsure := false
	for _, c := range checks {
		err := c.run()
		if awserr.IsAccessDenied(err) {
			result = validation{c.reason, fmt.Sprintf("the controller may not call %s with the node class's tags: %v; grant it in the controller's IAM policy", c.call, err)}
			break
		}
		// DryRunOperation is success; other errors say nothing about
		// permissions, and a transient one is asked again next time.
		unsure = unsure || awserr.IsTransient(err)
	}
	if result.reason != "" || !unsure {
		p.validations.Set(key, result)
	}
	return result.reason, result.message
}
