package ec2_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

// fleet asks for one instance of capacityType over the given (type, zone) overrides.
func fleet(client *ec2.Client, lt string, w world, capacityType ec2types.DefaultTargetCapacityType, overrides ...[2]string) (*ec2.CreateFleetOutput, error) {
	var os []ec2types.FleetLaunchTemplateOverridesRequest
	for _, o := range overrides {
		os = append(os, ec2types.FleetLaunchTemplateOverridesRequest{
			InstanceType: ec2types.InstanceType(o[0]), SubnetId: aws.String(w.subnets[o[1]]), AvailabilityZone: aws.String(o[1]),
		})
	}
	return client.CreateFleet(ctx, &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: capacityType,
		},
		SpotOptions:     &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyPriceCapacityOptimized},
		OnDemandOptions: &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice},
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateId: aws.String(lt), Version: aws.String("$Latest")},
			Overrides:                   os,
		}},
		TagSpecifications: []ec2types.TagSpecification{{
			ResourceType: ec2types.ResourceTypeInstance,
			Tags:         []ec2types.Tag{{Key: aws.String("karpenter.sh/nodeclaim"), Value: aws.String("default-abcde")}},
		}},
	})
}

func TestCreateFleetLaunchesTheCheapestOnDemandOverride(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	lt := createTemplate(t, client, "fleet-od", w.al2023x86, w.groups, "")
	out, err := fleet(client, lt, w, ec2types.DefaultTargetCapacityTypeOnDemand,
		[2]string{"m5.xlarge", "us-west-2a"}, [2]string{"m5.large", "us-west-2b"}, [2]string{"c5.2xlarge", "us-west-2c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Errors) != 0 || len(out.Instances) != 1 {
		t.Fatalf("fleet: instances %+v errors %+v", out.Instances, out.Errors)
	}
	got := out.Instances[0]
	if got.InstanceType != "m5.large" || got.Lifecycle != ec2types.InstanceLifecycleOnDemand || len(got.InstanceIds) != 1 {
		t.Fatalf("lowest-price launched %s %s, want on-demand m5.large", got.InstanceType, got.Lifecycle)
	}
	if *got.LaunchTemplateAndOverrides.Overrides.SubnetId != w.subnets["us-west-2b"] {
		t.Errorf("override subnet = %s", *got.LaunchTemplateAndOverrides.Overrides.SubnetId)
	}
	d, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: got.InstanceIds})
	if err != nil {
		t.Fatal(err)
	}
	in := d.Reservations[0].Instances[0]
	tags := map[string]string{}
	for _, tg := range in.Tags {
		tags[*tg.Key] = *tg.Value
	}
	if tags["karpenter.sh/nodepool"] != "default" || tags["karpenter.sh/nodeclaim"] != "default-abcde" {
		t.Errorf("instance tags %v: want the template's and the fleet's instance tags", tags)
	}
	if *in.Placement.AvailabilityZone != "us-west-2b" || *in.ImageId != w.al2023x86 || in.InstanceLifecycle != "" ||
		in.MetadataOptions.HttpTokens != ec2types.HttpTokensStateRequired || len(in.SecurityGroups) != 2 ||
		*in.IamInstanceProfile.Arn != "arn:aws:iam::123456789012:instance-profile/test-cluster-node" {
		t.Errorf("instance = %+v", in)
	}
}

func TestCreateFleetFallsBackAcrossOverridesAndReportsEach(t *testing.T) {
	svc, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	lt := createTemplate(t, client, "fleet-spot", w.al2023arm, w.groups, "")
	overrides := [][2]string{{"m7g.large", "us-west-2a"}, {"m7g.large", "us-west-2b"}, {"m7g.xlarge", "us-west-2a"}}
	cat := catalog.MustLoad()
	// Order the pools by spot price so the test knows which the fleet tries first.
	price := func(o [2]string) float64 { p, _ := cat.SpotPrice("us-west-2", o[1], o[0]); return p }
	if price(overrides[1]) < price(overrides[0]) {
		overrides[0], overrides[1] = overrides[1], overrides[0]
	}
	for _, o := range overrides[:2] {
		if err := svc.SetCapacity(o[0], o[1], "spot", 0); err != nil {
			t.Fatal(err)
		}
	}
	out, err := fleet(client, lt, w, ec2types.DefaultTargetCapacityTypeSpot, overrides...)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 1 || out.Instances[0].InstanceType != "m7g.xlarge" || out.Instances[0].Lifecycle != ec2types.InstanceLifecycleSpot {
		t.Fatalf("fleet launched %+v, want spot m7g.xlarge after both m7g.large pools failed", out.Instances)
	}
	if len(out.Errors) != 2 {
		t.Fatalf("errors %+v, want one per exhausted pool", out.Errors)
	}
	for i, e := range out.Errors {
		o := e.LaunchTemplateAndOverrides.Overrides
		if *e.ErrorCode != "InsufficientInstanceCapacity" || string(o.InstanceType) != overrides[i][0] || *o.SubnetId != w.subnets[overrides[i][1]] || e.Lifecycle != "spot" {
			t.Errorf("error %d = %s for %s in %s, want InsufficientInstanceCapacity for %v", i, *e.ErrorCode, o.InstanceType, *o.SubnetId, overrides[i])
		}
	}
	if got := svc.Capacity("m7g.xlarge", "us-west-2a", "spot"); got != 999 {
		t.Errorf("m7g.xlarge/us-west-2a/spot has %d left after one launch, want 999", got)
	}

	// With every pool exhausted the fleet launches nothing and says why.
	_ = svc.SetCapacity("m7g.xlarge", "us-west-2a", "spot", 0)
	out, err = fleet(client, lt, w, ec2types.DefaultTargetCapacityTypeSpot, overrides...)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 0 || len(out.Errors) != 3 {
		t.Errorf("exhausted fleet: instances %+v, %d errors", out.Instances, len(out.Errors))
	}
}

func TestCreateFleetReportsUnsupportedAndMissingTemplates(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	lt := createTemplate(t, client, "fleet-x86", w.al2023x86, w.groups, "")
	// a1 types are arm64 only; this image is x86_64. u-3tb1.56xlarge is not offered in us-west-2d.
	out, err := fleet(client, lt, w, ec2types.DefaultTargetCapacityTypeOnDemand,
		[2]string{"a1.large", "us-west-2a"}, [2]string{"m5.large", "us-west-2a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 1 || out.Instances[0].InstanceType != "m5.large" || len(out.Errors) != 1 || *out.Errors[0].ErrorCode != "InvalidParameterValue" {
		t.Errorf("instances %+v errors %+v", out.Instances, out.Errors)
	}
	// c8ine types are sold on-demand only.
	out, err = fleet(client, lt, w, ec2types.DefaultTargetCapacityTypeSpot, [2]string{"c8ine.large", "us-west-2a"}, [2]string{"m5.large", "us-west-2a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Instances) != 1 || out.Instances[0].InstanceType != "m5.large" || len(out.Errors) != 1 || *out.Errors[0].ErrorCode != "Unsupported" {
		t.Errorf("spot fleet with an on-demand-only type: instances %+v errors %+v", out.Instances, out.Errors)
	}
	out, err = fleet(client, "lt-0000000000000000f", w, ec2types.DefaultTargetCapacityTypeOnDemand, [2]string{"m5.large", "us-west-2a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Errors) != 1 || *out.Errors[0].ErrorCode != "InvalidLaunchTemplateId.NotFound" {
		t.Errorf("missing template errors: %+v", out.Errors)
	}
}

func TestCreateFleetAndRunInstancesHonourDryRun(t *testing.T) {
	svc, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	lt := createTemplate(t, client, "dry", w.al2023x86, w.groups, "")
	_, err := client.CreateFleet(ctx, &ec2.CreateFleetInput{
		DryRun: aws.Bool(true), Type: ec2types.FleetTypeInstant,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: "on-demand"},
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateId: aws.String(lt), Version: aws.String("$Latest")},
			Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: "m5.large", SubnetId: aws.String(w.subnets["us-west-2a"])}},
		}},
	})
	if code := apiCode(t, err); code != "DryRunOperation" {
		t.Errorf("CreateFleet DryRun: %s", code)
	}
	_, err = client.RunInstances(ctx, &ec2.RunInstancesInput{DryRun: aws.Bool(true), ImageId: aws.String(w.al2023x86), InstanceType: "m5.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	if code := apiCode(t, err); code != "DryRunOperation" {
		t.Errorf("RunInstances DryRun: %s", code)
	}
	_, err = client.RunInstances(ctx, &ec2.RunInstancesInput{DryRun: aws.Bool(true), ImageId: aws.String("ami-00000000000000000"), InstanceType: "m5.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	if code := apiCode(t, err); code != "InvalidAMIID.NotFound" {
		t.Errorf("invalid DryRun request: %s, want the validation error", code)
	}
	_, err = client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{DryRun: aws.Bool(true)})
	if code := apiCode(t, err); code != "DryRunOperation" {
		t.Errorf("DescribeInstances DryRun: %s", code)
	}
	out, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	if err != nil || len(out.Reservations) != 0 || svc.Capacity("m5.large", "us-west-2a", "on-demand") != 1000 {
		t.Errorf("dry runs launched instances: %+v %v", out.Reservations, err)
	}
}
