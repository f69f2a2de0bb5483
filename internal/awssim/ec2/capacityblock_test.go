package ec2_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

// A capacity block takes launches only in its shape: the launch template
// targets it with market type capacity-block, the fleet's target capacity
// type is capacity-block, the override is the block's type in its zone.
// It refuses when full, and at its end it expires and its instance
// terminates.
func TestCapacityBlockLaunchShapeAndEnd(t *testing.T) {
	svc, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	const zone = "us-west-2b"
	cb, err := svc.AddCapacityBlock("m5.large", zone, 1, time.Now().Add(2*time.Hour), "team", "ml")
	if err != nil {
		t.Fatal(err)
	}
	template := func(name string, market ec2types.MarketType) *string {
		d := &ec2types.RequestLaunchTemplateData{
			ImageId: aws.String(w.al2023x86),
			CapacityReservationSpecification: &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
				CapacityReservationPreference: ec2types.CapacityReservationPreferenceCapacityReservationsOnly,
				CapacityReservationTarget:     &ec2types.CapacityReservationTarget{CapacityReservationId: aws.String(cb)},
			},
		}
		if market != "" {
			d.InstanceMarketOptions = &ec2types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: market}
		}
		out, err := client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String(name), LaunchTemplateData: d})
		if err != nil {
			t.Fatal(err)
		}
		return out.LaunchTemplate.LaunchTemplateId
	}
	plain, block := template("cb-plain", ""), template("cb-market", ec2types.MarketTypeCapacityBlock)
	launch := func(lt *string, target ec2types.DefaultTargetCapacityType, typ string) (*ec2.CreateFleetOutput, error) {
		in := &ec2.CreateFleetInput{
			Type:                        ec2types.FleetTypeInstant,
			TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: target},
			LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
				LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateId: lt, Version: aws.String("$Latest")},
				Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: ec2types.InstanceType(typ), SubnetId: aws.String(w.subnets[zone])}},
			}},
		}
		if target == ec2types.DefaultTargetCapacityTypeOnDemand {
			in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice}
		}
		return client.CreateFleet(ctx, in)
	}

	for name, c := range map[string]struct {
		lt     *string
		target ec2types.DefaultTargetCapacityType
	}{
		"block without its market type":   {plain, ec2types.DefaultTargetCapacityTypeCapacityBlock},
		"on-demand target into a block":   {plain, ec2types.DefaultTargetCapacityTypeOnDemand},
		"capacity-block market on-demand": {block, ec2types.DefaultTargetCapacityTypeOnDemand},
	} {
		out, err := launch(c.lt, c.target, "m5.large")
		code := ""
		switch {
		case err != nil:
			code = apiCode(t, err)
		case len(out.Errors) > 0:
			code = aws.ToString(out.Errors[0].ErrorCode)
		}
		if code != "InvalidParameterCombination" || (out != nil && len(out.Instances) > 0) {
			t.Errorf("%s: %+v, code %q; want InvalidParameterCombination and no instance", name, out, code)
		}
	}
	if out, err := launch(block, ec2types.DefaultTargetCapacityTypeCapacityBlock, "m5.xlarge"); err != nil || len(out.Instances) != 0 ||
		len(out.Errors) == 0 || aws.ToString(out.Errors[0].ErrorCode) != "InvalidParameterCombination" {
		t.Errorf("another type into the block: %+v %v; want an InvalidParameterCombination fleet error", out, err)
	}

	first, err := launch(block, ec2types.DefaultTargetCapacityTypeCapacityBlock, "m5.large")
	if err != nil || len(first.Instances) != 1 {
		t.Fatalf("launch into the block: %+v %v", first, err)
	}
	id := first.Instances[0].InstanceIds[0]
	d, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	inst := d.Reservations[0].Instances[0]
	if aws.ToString(inst.CapacityReservationId) != cb || inst.InstanceLifecycle != ec2types.InstanceLifecycleTypeCapacityBlock {
		t.Errorf("instance in reservation %q with lifecycle %q; want %s, capacity-block", aws.ToString(inst.CapacityReservationId), inst.InstanceLifecycle, cb)
	}
	if full, err := launch(block, ec2types.DefaultTargetCapacityTypeCapacityBlock, "m5.large"); err != nil || len(full.Instances) != 0 ||
		len(full.Errors) == 0 || aws.ToString(full.Errors[0].ErrorCode) != "ReservationCapacityExceeded" {
		t.Errorf("launch into the full block: %+v %v; want ReservationCapacityExceeded", full, err)
	}

	// The block ends: it expires and EC2 takes its instance back.
	if err := svc.SetCapacityReservationEnd(cb, time.Now()); err != nil {
		t.Fatal(err)
	}
	for {
		d, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		if s := d.Reservations[0].Instances[0].State.Name; s == ec2types.InstanceStateNameShuttingDown || s == ec2types.InstanceStateNameTerminated {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	rs, err := client.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{cb}})
	if err != nil {
		t.Fatal(err)
	}
	if s := rs.CapacityReservations[0].State; s != ec2types.CapacityReservationStateExpired {
		t.Errorf("ended block is %s, want expired", s)
	}
	if late, err := launch(block, ec2types.DefaultTargetCapacityTypeCapacityBlock, "m5.large"); err != nil || len(late.Instances) != 0 ||
		len(late.Errors) == 0 || aws.ToString(late.Errors[0].ErrorCode) != "InvalidParameterValue" {
		t.Errorf("launch into the expired block: %+v %v; want it refused", late, err)
	}
}

// An interruptible reservation takes launches with its market type from a
// reserved-capacity fleet that asks for interruptible reservations, and
// its instances show the interruptible lifecycle.
func TestInterruptibleReservationLaunchShape(t *testing.T) {
	svc, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	const zone = "us-west-2b"
	cr, err := svc.AddCapacityReservation("m5.large", zone, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.SetInterruptible(cr); err != nil {
		t.Fatal(err)
	}
	lt, err := client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("icr"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
		ImageId:               aws.String(w.al2023x86),
		InstanceMarketOptions: &ec2types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeInterruptibleCapacityReservation},
		CapacityReservationSpecification: &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationPreference: ec2types.CapacityReservationPreferenceCapacityReservationsOnly,
			CapacityReservationTarget:     &ec2types.CapacityReservationTarget{CapacityReservationId: aws.String(cr)},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	in := &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeReservedCapacity,
		},
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateId: lt.LaunchTemplate.LaunchTemplateId, Version: aws.String("$Latest")},
			Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: "m5.large", SubnetId: aws.String(w.subnets[zone])}},
		}},
	}
	if _, err := client.CreateFleet(ctx, in); apiCode(t, err) != "MissingParameter" {
		t.Errorf("reserved-capacity fleet without ReservedCapacityOptions: %v, want MissingParameter", err)
	}
	in.ReservedCapacityOptions = &ec2types.ReservedCapacityOptionsRequest{ReservationTypes: []ec2types.FleetReservationType{ec2types.FleetReservationTypeInterruptibleCapacityReservation}}
	out, err := client.CreateFleet(ctx, in)
	if err != nil || len(out.Instances) != 1 {
		t.Fatalf("launch into the interruptible reservation: %+v %v", out, err)
	}
	d, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: out.Instances[0].InstanceIds})
	if err != nil {
		t.Fatal(err)
	}
	if l := d.Reservations[0].Instances[0].InstanceLifecycle; l != ec2types.InstanceLifecycleTypeInterruptibleCapacityReservation {
		t.Errorf("lifecycle %q, want interruptible-capacity-reservation", l)
	}
}
