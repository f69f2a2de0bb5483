package ec2_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

// TestCreateAndCancelCapacityReservation: Karpenter's e2e suites reserve
// capacity with CreateCapacityReservation (skipping offerings EC2 answers
// with Unsupported or InsufficientInstanceCapacity) and cancel it after.
func TestCreateAndCancelCapacityReservation(t *testing.T) {
	s, client, _ := newEC2(t, sim.Options{})
	created, err := client.CreateCapacityReservation(ctx, &ec2.CreateCapacityReservationInput{
		InstanceType: aws.String("m5.large"), InstancePlatform: ec2types.CapacityReservationInstancePlatformLinuxUnix,
		AvailabilityZone: aws.String("us-west-2a"), InstanceCount: aws.Int32(2), InstanceMatchCriteria: ec2types.InstanceMatchCriteriaTargeted,
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeCapacityReservation,
			Tags: []ec2types.Tag{{Key: aws.String("team"), Value: aws.String("e2e")}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := *created.CapacityReservation.CapacityReservationId
	got, err := client.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	r := got.CapacityReservations[0]
	if r.State != ec2types.CapacityReservationStateActive || *r.AvailableInstanceCount != 2 || *r.InstanceType != "m5.large" ||
		r.InstanceMatchCriteria != ec2types.InstanceMatchCriteriaTargeted || tagValue(r.Tags, "team") != "e2e" {
		t.Fatalf("reservation = %+v", r)
	}

	if _, err := client.CancelCapacityReservation(ctx, &ec2.CancelCapacityReservationInput{CapacityReservationId: &id}); err != nil {
		t.Fatal(err)
	}
	got, _ = client.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{id}})
	if got.CapacityReservations[0].State != ec2types.CapacityReservationStateCancelled {
		t.Errorf("cancelled reservation is %s", got.CapacityReservations[0].State)
	}
	_, err = client.CancelCapacityReservation(ctx, &ec2.CancelCapacityReservationInput{CapacityReservationId: &id})
	if code := apiCode(t, err); code != "IncorrectState" {
		t.Errorf("cancelling twice: %s", code)
	}

	// An offering the zone lacks, and a pool without the capacity.
	_, err = client.CreateCapacityReservation(ctx, &ec2.CreateCapacityReservationInput{
		InstanceType: aws.String(typeNotOfferedIn(t, client, "us-west-2d")), InstancePlatform: ec2types.CapacityReservationInstancePlatformLinuxUnix,
		AvailabilityZone: aws.String("us-west-2d"), InstanceCount: aws.Int32(1),
	})
	if code := apiCode(t, err); code != "Unsupported" {
		t.Errorf("a type the zone does not offer: %s", code)
	}
	if err := s.SetCapacity("m5.xlarge", "us-west-2b", "on-demand", 1); err != nil {
		t.Fatal(err)
	}
	_, err = client.CreateCapacityReservation(ctx, &ec2.CreateCapacityReservationInput{
		InstanceType: aws.String("m5.xlarge"), InstancePlatform: ec2types.CapacityReservationInstancePlatformLinuxUnix,
		AvailabilityZone: aws.String("us-west-2b"), InstanceCount: aws.Int32(2),
	})
	if code := apiCode(t, err); code != "InsufficientInstanceCapacity" {
		t.Errorf("more than the pool holds: %s", code)
	}
}

// typeNotOfferedIn is an instance type the region offers but not in zone.
func typeNotOfferedIn(t *testing.T, client *ec2.Client, zone string) string {
	t.Helper()
	offered := map[string]bool{}
	p := ec2.NewDescribeInstanceTypeOfferingsPaginator(client, &ec2.DescribeInstanceTypeOfferingsInput{
		LocationType: ec2types.LocationTypeAvailabilityZone, Filters: []ec2types.Filter{filter("location", zone)}})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.InstanceTypeOfferings {
			offered[string(o.InstanceType)] = true
		}
	}
	all, err := client.DescribeInstanceTypeOfferings(ctx, &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZone})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range all.InstanceTypeOfferings {
		if !offered[string(o.InstanceType)] {
			return string(o.InstanceType)
		}
	}
	t.Fatalf("every type is offered in %s", zone)
	return ""
}
