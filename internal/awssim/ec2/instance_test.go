package ec2_test

import (
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

func run(t *testing.T, client *ec2.Client, w world, instanceType string, count int32, market ec2types.MarketType, tags ...string) []ec2types.Instance {
	t.Helper()
	in := &ec2.RunInstancesInput{
		ImageId: aws.String(w.al2023x86), InstanceType: ec2types.InstanceType(instanceType),
		MinCount: aws.Int32(count), MaxCount: aws.Int32(count), SubnetId: aws.String(w.subnets["us-west-2a"]),
		SecurityGroupIds: w.groups,
	}
	if market != "" {
		in.InstanceMarketOptions = &ec2types.InstanceMarketOptionsRequest{MarketType: market}
	}
	if len(tags) > 0 {
		spec := ec2types.TagSpecification{ResourceType: ec2types.ResourceTypeInstance}
		for i := 0; i+1 < len(tags); i += 2 {
			spec.Tags = append(spec.Tags, ec2types.Tag{Key: aws.String(tags[i]), Value: aws.String(tags[i+1])})
		}
		in.TagSpecifications = []ec2types.TagSpecification{spec}
	}
	out, err := client.RunInstances(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	return out.Instances
}

func state(t *testing.T, client *ec2.Client, id string) ec2types.InstanceStateName {
	t.Helper()
	out, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Reservations[0].Instances[0].State.Name
}

func TestInstanceLifecycleAndStateChangeEvents(t *testing.T) {
	svc, client, events := newEC2(t, sim.Options{})
	w := discover(t, client)
	in := run(t, client, w, "m5.large", 1, "", "team", "a")[0]
	id := *in.InstanceId
	if in.State.Name != ec2types.InstanceStateNamePending || *in.PrivateDnsName == "" || *in.PrivateIpAddress == "" || in.LaunchTime == nil {
		t.Fatalf("launched instance = %+v", in)
	}
	eventually(t, id+" running", func() bool { return state(t, client, id) == ec2types.InstanceStateNameRunning })
	if got := svc.Capacity("m5.large", "us-west-2a", "on-demand"); got != 999 {
		t.Errorf("pool capacity after launch = %d", got)
	}

	term, err := client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	if c := term.TerminatingInstances[0]; c.CurrentState.Name != ec2types.InstanceStateNameShuttingDown || c.PreviousState.Name != ec2types.InstanceStateNameRunning {
		t.Errorf("terminate: %s -> %s", c.PreviousState.Name, c.CurrentState.Name)
	}
	eventually(t, id+" terminated", func() bool { return state(t, client, id) == ec2types.InstanceStateNameTerminated })
	if got := svc.Capacity("m5.large", "us-west-2a", "on-demand"); got != 1000 {
		t.Errorf("terminated instance did not return its capacity: %d", got)
	}
	var states []string
	eventually(t, "four state-change events", func() bool {
		states = nil
		for _, e := range events.ofType("EC2 Instance State-change Notification") {
			if e.Detail["instance-id"] == id {
				states = append(states, e.Detail["state"].(string))
			}
		}
		return len(states) == 4
	})
	if want := []string{"pending", "running", "shutting-down", "terminated"}; !slices.Equal(states, want) {
		t.Errorf("state-change events %v, want %v", states, want)
	}
	e := events.ofType("EC2 Instance State-change Notification")[0]
	if e.Source != "aws.ec2" || e.Resources[0] != "arn:aws:ec2:us-west-2:123456789012:instance/"+id {
		t.Errorf("event envelope %+v", e)
	}

	_, err = client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{"i-00000000000000000"}})
	if code := apiCode(t, err); code != "InvalidInstanceID.NotFound" {
		t.Errorf("unknown instance: %s", code)
	}
}

func TestDescribeInstancesFiltersAndPaginatesAThousandInstances(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	run(t, client, w, "c5.large", 600, "", "karpenter.sh/nodepool", "a")
	run(t, client, w, "m5.large", 400, "", "karpenter.sh/nodepool", "b")
	run(t, client, w, "m5.large", 1, ec2types.MarketTypeSpot)

	count := func(in *ec2.DescribeInstancesInput) (instances, pages int) {
		p := ec2.NewDescribeInstancesPaginator(client, in)
		seen := map[string]bool{}
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, r := range out.Reservations {
				for _, i := range r.Instances {
					if seen[*i.InstanceId] {
						t.Fatalf("%s on two pages", *i.InstanceId)
					}
					seen[*i.InstanceId] = true
				}
			}
		}
		return len(seen), pages
	}
	if n, pages := count(&ec2.DescribeInstancesInput{MaxResults: aws.Int32(100), Filters: []ec2types.Filter{filter("tag-key", "karpenter.sh/nodepool")}}); n != 1000 || pages != 10 {
		t.Errorf("tag-key: %d instances in %d pages, want 1,000 in 10", n, pages)
	}
	if n, _ := count(&ec2.DescribeInstancesInput{MaxResults: aws.Int32(1000), Filters: []ec2types.Filter{filter("tag:karpenter.sh/nodepool", "b"), filter("instance-type", "m5.large")}}); n != 400 {
		t.Errorf("tag:karpenter.sh/nodepool=b: %d instances", n)
	}
	if n, _ := count(&ec2.DescribeInstancesInput{Filters: []ec2types.Filter{filter("instance-lifecycle", "spot")}}); n != 1 {
		t.Errorf("spot instances: %d", n)
	}
	if n, _ := count(&ec2.DescribeInstancesInput{Filters: []ec2types.Filter{filter("instance-state-name", "pending", "running")}}); n != 1001 {
		t.Errorf("live instances: %d", n)
	}
	// EC2's model leaves MaxResults unbounded here: 2,000 is served in
	// pages of at most 1,000.
	if n, pages := count(&ec2.DescribeInstancesInput{MaxResults: aws.Int32(2000)}); n != 1001 || pages != 2 {
		t.Errorf("MaxResults 2000: %d instances in %d pages, want 1,001 in 2", n, pages)
	}
	_, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"i-1"}, MaxResults: aws.Int32(5)})
	if code := apiCode(t, err); code != "InvalidParameterCombination" {
		t.Errorf("ids with MaxResults: %s", code)
	}
}

func TestRunInstancesFailsWhenThePoolIsShort(t *testing.T) {
	svc, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	if err := svc.SetCapacity("m5.large", "us-west-2a", "on-demand", 2); err != nil {
		t.Fatal(err)
	}
	_, err := client.RunInstances(ctx, &ec2.RunInstancesInput{
		ImageId: aws.String(w.al2023x86), InstanceType: "m5.large", MinCount: aws.Int32(3), MaxCount: aws.Int32(3), SubnetId: aws.String(w.subnets["us-west-2a"]),
	})
	if code := apiCode(t, err); code != "InsufficientInstanceCapacity" {
		t.Errorf("3 of 2: %s", code)
	}
	if got := run(t, client, w, "m5.large", 2, ""); len(got) != 2 {
		t.Errorf("2 of 2 launched %d", len(got))
	}
}

func TestSpotInterruptionWarnsThenReclaims(t *testing.T) {
	svc, client, events := newEC2(t, sim.Options{SpotInterruptionNotice: 50 * time.Millisecond})
	w := discover(t, client)
	spot := *run(t, client, w, "m5.large", 1, ec2types.MarketTypeSpot)[0].InstanceId
	od := *run(t, client, w, "m5.large", 1, "")[0].InstanceId
	if err := svc.InterruptSpot(od, 0); err == nil {
		t.Error("an on-demand instance was reclaimed")
	}
	if err := svc.InterruptSpot(spot, 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, "spot reclaimed", func() bool { return state(t, client, spot) == ec2types.InstanceStateNameTerminated })
	warnings := events.ofType("EC2 Spot Instance Interruption Warning")
	if len(warnings) != 1 || warnings[0].Detail["instance-id"] != spot || warnings[0].Detail["instance-action"] != "terminate" {
		t.Errorf("warnings %+v", warnings)
	}
	if err := svc.RecommendRebalance(od); err != nil {
		t.Fatal(err)
	}
	if err := svc.ScheduleChange([]string{od}, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rebalance and health events", func() bool {
		return len(events.ofType("EC2 Instance Rebalance Recommendation")) == 1 && len(events.ofType("AWS Health Event")) == 1
	})
	h := events.ofType("AWS Health Event")[0]
	if h.Source != "aws.health" || h.Detail["eventTypeCategory"] != "scheduledChange" || h.Detail["service"] != "EC2" {
		t.Errorf("health event %+v", h)
	}
	st, err := client.DescribeInstanceStatus(ctx, &ec2.DescribeInstanceStatusInput{InstanceIds: []string{od}, IncludeAllInstances: aws.Bool(true)})
	if err != nil || len(st.InstanceStatuses) != 1 || len(st.InstanceStatuses[0].Events) != 1 || st.InstanceStatuses[0].Events[0].Code != ec2types.EventCodeInstanceRetirement {
		t.Errorf("instance status %+v %v", st, err)
	}
}

func TestDescribeInstanceStatusReportsImpairment(t *testing.T) {
	svc, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	id := *run(t, client, w, "m5.large", 1, "")[0].InstanceId
	eventually(t, "running", func() bool { return state(t, client, id) == ec2types.InstanceStateNameRunning })
	if err := svc.SetImpaired(id, true, false); err != nil {
		t.Fatal(err)
	}
	out, err := client.DescribeInstanceStatus(ctx, &ec2.DescribeInstanceStatusInput{Filters: []ec2types.Filter{filter("instance-status.status", "impaired")}})
	if err != nil || len(out.InstanceStatuses) != 1 || out.InstanceStatuses[0].SystemStatus.Status != ec2types.SummaryStatusOk {
		t.Fatalf("impaired: %+v %v", out, err)
	}
}

func TestLaunchedInstancesCanBeInvisibleForAWhile(t *testing.T) {
	svc, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	svc.SetVisibilityDelay(200 * time.Millisecond)
	id := *run(t, client, w, "m5.large", 1, "")[0].InstanceId
	_, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if code := apiCode(t, err); code != "InvalidInstanceID.NotFound" {
		t.Fatalf("just-launched instance: %s, want InvalidInstanceID.NotFound", code)
	}
	eventually(t, "instance visible", func() bool {
		_, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
		return err == nil
	})
}

func TestTagsAndCapacityReservations(t *testing.T) {
	svc, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	id := *run(t, client, w, "m5.large", 1, "")[0].InstanceId
	if _, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id}, Tags: []ec2types.Tag{{Key: aws.String("Name"), Value: aws.String("node-1")}}}); err != nil {
		t.Fatal(err)
	}
	out, _ := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{filter("tag:Name", "node-*")}})
	if len(out.Reservations) != 1 {
		t.Errorf("tag:Name=node-* matched %d reservations", len(out.Reservations))
	}
	_, err := client.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id, "i-00000000000000000"}, Tags: []ec2types.Tag{{Key: aws.String("x"), Value: aws.String("y")}}})
	if code := apiCode(t, err); code != "InvalidInstanceID.NotFound" {
		t.Errorf("tagging a missing instance: %s", code)
	}

	cr, err := svc.AddCapacityReservation("m5.large", "us-west-2b", 1, "team", "ml")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := client.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{Filters: []ec2types.Filter{filter("tag:team", "ml")}})
	if err != nil || len(rs.CapacityReservations) != 1 || *rs.CapacityReservations[0].CapacityReservationId != cr || *rs.CapacityReservations[0].AvailableInstanceCount != 1 {
		t.Fatalf("reservations %+v %v", rs, err)
	}
	lt, err := client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("odcr"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
		ImageId: aws.String(w.al2023x86),
		CapacityReservationSpecification: &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationTarget: &ec2types.CapacityReservationTarget{CapacityReservationId: aws.String(cr)},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	launch := func() (*ec2.CreateFleetOutput, error) {
		return client.CreateFleet(ctx, &ec2.CreateFleetInput{
			Type:                        ec2types.FleetTypeInstant,
			TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: "on-demand"},
			LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
				LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateId: lt.LaunchTemplate.LaunchTemplateId, Version: aws.String("$Latest")},
				Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: "m5.large", SubnetId: aws.String(w.subnets["us-west-2b"])}},
			}},
		})
	}
	first, err := launch()
	if err != nil || len(first.Instances) != 1 {
		t.Fatalf("launch into reservation: %+v %v", first, err)
	}
	second, err := launch()
	if err != nil || len(second.Instances) != 0 || *second.Errors[0].ErrorCode != "ReservationCapacityExceeded" {
		t.Errorf("second launch into a full reservation: %+v %v", second, err)
	}
	d, _ := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: first.Instances[0].InstanceIds})
	if got := aws.ToString(d.Reservations[0].Instances[0].CapacityReservationId); got != cr {
		t.Errorf("instance reservation = %q, want %s", got, cr)
	}
}
