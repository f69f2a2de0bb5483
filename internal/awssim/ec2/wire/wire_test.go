package wire

import (
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

func TestEncodeUsesEC2ElementNames(t *testing.T) {
	out := &ec2.DescribeInstancesOutput{Reservations: []ec2types.Reservation{{
		ReservationId: aws.String("r-1"),
		Instances: []ec2types.Instance{{
			InstanceId: aws.String("i-1"), State: &ec2types.InstanceState{Code: aws.Int32(16), Name: "running"},
			Tags: []ec2types.Tag{{Key: aws.String("a&b"), Value: aws.String("<c>")}},
		}},
	}}}
	doc := string(Encode("DescribeInstances", "req-1", out))
	for _, want := range []string{
		`<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>req-1</requestId>`,
		`<reservationSet><item><instancesSet><item><instanceId>i-1</instanceId>`,
		`</instancesSet><reservationId>r-1</reservationId></item></reservationSet>`,
		`<instanceState><code>16</code><name>running</name></instanceState>`,
		`<tagSet><item><key>a&amp;b</key><value>&lt;c&gt;</value></item></tagSet>`,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("document lacks %s:\n%s", want, doc)
		}
	}
	info := &ec2.DescribeInstanceTypesOutput{InstanceTypes: []ec2types.InstanceTypeInfo{{
		InferenceAcceleratorInfo: &ec2types.InferenceAcceleratorInfo{Accelerators: []ec2types.InferenceDeviceInfo{{Name: aws.String("x")}}},
	}}}
	if doc := string(Encode("DescribeInstanceTypes", "r", info)); !strings.Contains(doc, `<accelerators><member><name>x</name></member></accelerators>`) {
		t.Errorf("inference accelerators are not <member> items:\n%s", doc)
	}
}

func TestDecodeReadsQueryKeysIntoSDKInputs(t *testing.T) {
	form := url.Values{
		"Action": {"CreateFleet"}, "Type": {"instant"}, "DryRun": {"true"},
		"TargetCapacitySpecification.TotalTargetCapacity":                        {"2"},
		"LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateName": {"lt"},
		"LaunchTemplateConfigs.1.Overrides.2.InstanceType":                       {"m5.xlarge"},
		"LaunchTemplateConfigs.1.Overrides.1.InstanceType":                       {"m5.large"},
		"LaunchTemplateConfigs.1.Overrides.1.Priority":                           {"1.5"},
		"TagSpecification.1.ResourceType":                                        {"instance"},
		"TagSpecification.1.Tag.1.Key":                                           {"k"},
	}
	var in ec2.CreateFleetInput
	if err := Decode(form, &in); err != nil {
		t.Fatal(err)
	}
	o := in.LaunchTemplateConfigs[0].Overrides
	if in.Type != "instant" || !*in.DryRun || *in.TargetCapacitySpecification.TotalTargetCapacity != 2 ||
		len(o) != 2 || o[0].InstanceType != "m5.large" || *o[0].Priority != 1.5 || o[1].InstanceType != "m5.xlarge" ||
		*in.TagSpecifications[0].Tags[0].Key != "k" {
		t.Errorf("decoded %+v", in)
	}
	if err := Decode(url.Values{"TargetCapacitySpecification.TotalTargetCapacity": {"two"}}, &in); err == nil {
		t.Error("a non-numeric capacity decoded")
	}
}
