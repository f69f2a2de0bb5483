package ec2_test

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

// A template's extra interfaces are checked against the instance type (EFA
// support and count, network cards) and attached to the instance.
func TestLaunchTemplateInterfacesMeetTheInstanceType(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	template := func(name string, extra ...ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest) string {
		out, err := client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
			LaunchTemplateName: aws.String(name),
			LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
				ImageId: aws.String(w.al2023x86),
				NetworkInterfaces: append([]ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{
					NetworkCardIndex: aws.Int32(0), DeviceIndex: aws.Int32(0), InterfaceType: aws.String("interface"), Groups: w.groups,
				}}, extra...),
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return *out.LaunchTemplate.LaunchTemplateId
	}
	run := func(lt, typ string) (*ec2.RunInstancesOutput, error) {
		return client.RunInstances(ctx, &ec2.RunInstancesInput{
			LaunchTemplate: &ec2types.LaunchTemplateSpecification{LaunchTemplateId: aws.String(lt)},
			InstanceType:   ec2types.InstanceType(typ), MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		})
	}
	code := func(err error) string {
		var api smithy.APIError
		if errors.As(err, &api) {
			return api.ErrorCode()
		}
		return ""
	}
	efaOnly := template("efa-only", ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{
		NetworkCardIndex: aws.Int32(0), DeviceIndex: aws.Int32(1), InterfaceType: aws.String("efa-only"),
	})
	if _, err := run(efaOnly, "m5.large"); code(err) != "InvalidParameterCombination" {
		t.Errorf("efa-only interface on m5.large (no EFA): %v, want InvalidParameterCombination", err)
	}
	out, err := run(efaOnly, "c5n.18xlarge")
	if err != nil {
		t.Fatalf("efa-only interface on c5n.18xlarge: %v", err)
	}
	var kinds []string
	for _, ni := range out.Instances[0].NetworkInterfaces {
		kinds = append(kinds, aws.ToString(ni.InterfaceType)+"@"+string(rune('0'+aws.ToInt32(ni.Attachment.NetworkCardIndex)))+"/"+string(rune('0'+aws.ToInt32(ni.Attachment.DeviceIndex))))
	}
	if len(kinds) != 2 || kinds[0] != "interface@0/0" || kinds[1] != "efa-only@0/1" {
		t.Errorf("instance interfaces %v, want [interface@0/0 efa-only@0/1]", kinds)
	}
	secondCard := template("second-card", ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{
		NetworkCardIndex: aws.Int32(1), DeviceIndex: aws.Int32(0), InterfaceType: aws.String("efa-only"),
	})
	if _, err := run(secondCard, "c5n.18xlarge"); code(err) != "InvalidParameterValue" {
		t.Errorf("network card 1 on c5n.18xlarge (one card): %v, want InvalidParameterValue", err)
	}
	if _, err := run(secondCard, "c6in.32xlarge"); err != nil {
		t.Errorf("network card 1 on c6in.32xlarge (two cards): %v", err)
	}
}
