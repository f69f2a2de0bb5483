package ec2_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

func TestPlacementGroupsCreateDescribeDelete(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	part, err := client.CreatePlacementGroup(ctx, &ec2.CreatePlacementGroupInput{GroupName: aws.String("kafka"), Strategy: ec2types.PlacementStrategyPartition, PartitionCount: aws.Int32(3)})
	if err != nil {
		t.Fatal(err)
	}
	if pg := part.PlacementGroup; *pg.PartitionCount != 3 || pg.State != ec2types.PlacementGroupStateAvailable || len(*pg.GroupId) < 4 {
		t.Fatalf("created %+v", pg)
	}
	spread, err := client.CreatePlacementGroup(ctx, &ec2.CreatePlacementGroupInput{GroupName: aws.String("ha"), Strategy: ec2types.PlacementStrategySpread})
	if err != nil || spread.PlacementGroup.SpreadLevel != ec2types.SpreadLevelRack {
		t.Fatalf("spread group: %+v %v", spread, err)
	}
	for name, in := range map[string]*ec2.CreatePlacementGroupInput{
		"InvalidPlacementGroup.Duplicate": {GroupName: aws.String("kafka"), Strategy: ec2types.PlacementStrategyCluster},
		"InvalidParameterValue":           {GroupName: aws.String("big"), Strategy: ec2types.PlacementStrategyPartition, PartitionCount: aws.Int32(8)},
		"InvalidParameterCombination":     {GroupName: aws.String("odd"), Strategy: ec2types.PlacementStrategyCluster, PartitionCount: aws.Int32(2)},
	} {
		if _, err := client.CreatePlacementGroup(ctx, in); apiCode(t, err) != name {
			t.Errorf("CreatePlacementGroup %s: got %v, want %s", *in.GroupName, err, name)
		}
	}

	byName, err := client.DescribePlacementGroups(ctx, &ec2.DescribePlacementGroupsInput{GroupNames: []string{"ha"}})
	if err != nil || len(byName.PlacementGroups) != 1 || *byName.PlacementGroups[0].GroupId != *spread.PlacementGroup.GroupId {
		t.Fatalf("by name: %+v %v", byName, err)
	}
	byID, err := client.DescribePlacementGroups(ctx, &ec2.DescribePlacementGroupsInput{GroupIds: []string{*part.PlacementGroup.GroupId},
		Filters: []ec2types.Filter{filter("state", "available")}})
	if err != nil || len(byID.PlacementGroups) != 1 || *byID.PlacementGroups[0].GroupName != "kafka" {
		t.Fatalf("by id: %+v %v", byID, err)
	}
	byStrategy, err := client.DescribePlacementGroups(ctx, &ec2.DescribePlacementGroupsInput{Filters: []ec2types.Filter{filter("strategy", "spread")}})
	if err != nil || len(byStrategy.PlacementGroups) != 1 {
		t.Fatalf("by strategy: %+v %v", byStrategy, err)
	}
	if _, err := client.DescribePlacementGroups(ctx, &ec2.DescribePlacementGroupsInput{GroupNames: []string{"nope"}}); apiCode(t, err) != "InvalidPlacementGroup.Unknown" {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := client.DeletePlacementGroup(ctx, &ec2.DeletePlacementGroupInput{GroupName: aws.String("ha")}); err != nil {
		t.Fatal(err)
	}
	if all, err := client.DescribePlacementGroups(ctx, &ec2.DescribePlacementGroupsInput{}); err != nil || len(all.PlacementGroups) != 1 {
		t.Fatalf("after delete: %+v %v", all, err)
	}
}

// launchInto launches one m5.large from a template placing it as pl, in zone.
func launchInto(t *testing.T, client *ec2.Client, w world, name, zone string, pl *ec2types.LaunchTemplatePlacementRequest) (*ec2.CreateFleetOutput, error) {
	t.Helper()
	_, err := client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String("pg-" + name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(w.al2023x86), SecurityGroupIds: w.groups, Placement: pl},
	})
	if err != nil {
		return nil, err
	}
	return client.CreateFleet(ctx, &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand,
		},
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String("pg-" + name), Version: aws.String("$Latest")},
			Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: "m5.large", SubnetId: aws.String(w.subnets[zone])}},
		}},
	})
}

func fleetErrorCode(out *ec2.CreateFleetOutput) string {
	if out == nil || len(out.Errors) == 0 {
		return ""
	}
	return aws.ToString(out.Errors[0].ErrorCode)
}

func TestLaunchIntoPlacementGroups(t *testing.T) {
	svc, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	zones := []string{}
	for z := range w.subnets {
		zones = append(zones, z)
	}
	if len(zones) < 2 {
		t.Fatalf("need two zones, have %v", zones)
	}
	clusterID, err := svc.AddPlacementGroup("hpc", "cluster", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AddPlacementGroup("spread", "spread", 0); err != nil {
		t.Fatal(err)
	}
	partID, err := svc.AddPlacementGroup("kafka", "partition", 3)
	if err != nil {
		t.Fatal(err)
	}

	// Cluster: the first launch pins the group to its zone.
	first, err := launchInto(t, client, w, "c1", zones[0], &ec2types.LaunchTemplatePlacementRequest{GroupId: aws.String(clusterID)})
	if err != nil || len(first.Instances) != 1 {
		t.Fatalf("cluster launch: %+v %v", first, err)
	}
	other, err := launchInto(t, client, w, "c2", zones[1], &ec2types.LaunchTemplatePlacementRequest{GroupName: aws.String("hpc")})
	if err != nil || len(other.Instances) != 0 || fleetErrorCode(other) != "InvalidParameterValue" {
		t.Fatalf("cluster launch in another zone: %+v %v", other, err)
	}
	got, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: first.Instances[0].InstanceIds})
	if err != nil {
		t.Fatal(err)
	}
	if pl := got.Reservations[0].Instances[0].Placement; aws.ToString(pl.GroupName) != "hpc" || aws.ToString(pl.GroupId) != clusterID || pl.PartitionNumber != nil {
		t.Fatalf("cluster instance placement = %+v", pl)
	}

	// Spread: seven per zone, then the limit error Karpenter recognises.
	for i := 0; i < sim.SpreadPerZone; i++ {
		out, err := launchInto(t, client, w, "s"+string(rune('a'+i)), zones[0], &ec2types.LaunchTemplatePlacementRequest{GroupName: aws.String("spread")})
		if err != nil || len(out.Instances) != 1 {
			t.Fatalf("spread launch %d: %+v %v", i, out, err)
		}
	}
	eighth, err := launchInto(t, client, w, "s-eighth", zones[0], &ec2types.LaunchTemplatePlacementRequest{GroupName: aws.String("spread")})
	if err != nil || len(eighth.Instances) != 0 || fleetErrorCode(eighth) != "InsufficientInstanceCapacity" {
		t.Fatalf("eighth spread instance: %+v %v", eighth, err)
	}
	if other, err := launchInto(t, client, w, "s-other", zones[1], &ec2types.LaunchTemplatePlacementRequest{GroupName: aws.String("spread")}); err != nil || len(other.Instances) != 1 {
		t.Fatalf("spread launch in another zone: %+v %v", other, err)
	}

	// Partition: EC2 spreads over the partitions, or uses the one named.
	seen := map[int32]bool{}
	for i := 0; i < 3; i++ {
		out, err := launchInto(t, client, w, "p"+string(rune('a'+i)), zones[0], &ec2types.LaunchTemplatePlacementRequest{GroupId: aws.String(partID)})
		if err != nil || len(out.Instances) != 1 {
			t.Fatalf("partition launch: %+v %v", out, err)
		}
		d, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: out.Instances[0].InstanceIds})
		if err != nil {
			t.Fatal(err)
		}
		seen[aws.ToInt32(d.Reservations[0].Instances[0].Placement.PartitionNumber)] = true
	}
	if !seen[1] || !seen[2] || !seen[3] {
		t.Errorf("partitions used by three launches: %v, want 1, 2 and 3", seen)
	}
	named, err := launchInto(t, client, w, "p-named", zones[0], &ec2types.LaunchTemplatePlacementRequest{GroupName: aws.String("kafka"), PartitionNumber: aws.Int32(2)})
	if err != nil || len(named.Instances) != 1 {
		t.Fatalf("named partition: %+v %v", named, err)
	}
	byPartition, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		filter("placement-group-name", "kafka"), filter("placement-partition-number", "2")}})
	if err != nil || len(byPartition.Reservations) != 2 {
		t.Fatalf("instances in partition 2: %+v %v", byPartition, err)
	}
	// A partition number outside the group, or on a group of another strategy, is refused.
	if _, err := launchInto(t, client, w, "p-bad", zones[0], &ec2types.LaunchTemplatePlacementRequest{GroupName: aws.String("kafka"), PartitionNumber: aws.Int32(4)}); apiCode(t, err) != "InvalidParameterValue" {
		t.Errorf("partition 4 of 3: %v", err)
	}
	if _, err := client.RunInstances(ctx, &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(1), InstanceType: "m5.large", ImageId: aws.String(w.al2023x86),
		Placement: &ec2types.Placement{GroupName: aws.String("hpc"), PartitionNumber: aws.Int32(1)}}); apiCode(t, err) != "InvalidParameterCombination" {
		t.Errorf("partition on a cluster group: %v", err)
	}
	if _, err := client.RunInstances(ctx, &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(1), InstanceType: "t3.large", ImageId: aws.String(w.al2023x86),
		SubnetId: aws.String(w.subnets[zones[0]]), Placement: &ec2types.Placement{GroupName: aws.String("hpc")}}); apiCode(t, err) != "InvalidParameterCombination" {
		t.Errorf("t3 (no cluster support) into a cluster group: %v", err)
	}
	if _, err := client.DeletePlacementGroup(ctx, &ec2.DeletePlacementGroupInput{GroupName: aws.String("kafka")}); apiCode(t, err) != "InvalidPlacementGroup.InUse" {
		t.Errorf("deleting a group in use: %v", err)
	}
}

// TestLaunchTenancy checks that a launch's Placement.Tenancy, from its
// launch template or the RunInstances request, is the instance's.
func TestLaunchTenancy(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	var zone string
	for z := range w.subnets {
		zone = z
	}
	tenancyOf := func(ids []string) ec2types.Tenancy {
		t.Helper()
		d, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids})
		if err != nil {
			t.Fatal(err)
		}
		return d.Reservations[0].Instances[0].Placement.Tenancy
	}
	for name, pl := range map[string]*ec2types.LaunchTemplatePlacementRequest{"unset": nil, "dedicated": {Tenancy: ec2types.TenancyDedicated}} {
		out, err := launchInto(t, client, w, "tenancy-"+name, zone, pl)
		if err != nil || len(out.Instances) != 1 {
			t.Fatalf("%s: %+v %v", name, out, err)
		}
		want := ec2types.TenancyDefault
		if pl != nil {
			want = pl.Tenancy
		}
		if got := tenancyOf(out.Instances[0].InstanceIds); got != want {
			t.Errorf("launch template tenancy %s: instance tenancy %s, want %s", name, got, want)
		}
	}
	run, err := client.RunInstances(ctx, &ec2.RunInstancesInput{
		ImageId: aws.String(w.al2023x86), InstanceType: "m5.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		SubnetId: aws.String(w.subnets[zone]), Placement: &ec2types.Placement{Tenancy: ec2types.TenancyDedicated},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := tenancyOf([]string{aws.ToString(run.Instances[0].InstanceId)}); got != ec2types.TenancyDedicated {
		t.Errorf("RunInstances with dedicated tenancy: instance tenancy %s", got)
	}
	bad, err := launchInto(t, client, w, "tenancy-bad", zone, &ec2types.LaunchTemplatePlacementRequest{Tenancy: "shared"})
	if err == nil && fleetErrorCode(bad) != "InvalidParameterValue" {
		t.Errorf("tenancy shared accepted: %+v", bad)
	}
}
