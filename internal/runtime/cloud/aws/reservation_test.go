package aws_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/clock"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/capacityblock"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// A node class selecting a reservation of two m5.xlarge: its status lists
// the reservation, the type gets a reserved offering priced near zero with
// two instances, two launches go into the reservation (the launch template
// targets it, the fleet is on-demand) and the third, with the reservation
// full, launches on-demand.
func TestCreateLaunchesIntoTheReservationThenOnDemand(t *testing.T) {
	ctx := testContext(t)
	const typ = "m5.xlarge"
	zone := sim.EC2.Region().Zones[0].Name
	crID, err := sim.EC2.AddCapacityReservation(typ, zone, 2, "joist-test", "reserved-create")
	if err != nil {
		t.Fatal(err)
	}
	nc := testenv.NodeClass("create-reserved", cluster, "al2023@latest")
	nc.Spec.CapacityReservationSelectorTerms = []awsv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"joist-test": "reserved-create"}}}
	nc = readyNodeClass(t, prov, nc)
	if got := nc.Status.CapacityReservations; len(got) != 1 || got[0].ID != crID || got[0].InstanceType != typ || got[0].AvailabilityZone != zone {
		t.Fatalf("status.capacityReservations = %+v, want %s (%s in %s)", got, crID, typ, zone)
	}

	its, err := prov.InstanceTypes().List(ctx, nc, []string{zone})
	if err != nil {
		t.Fatal(err)
	}
	var od, reserved float64
	for _, it := range its {
		if it.Name != typ {
			continue
		}
		for _, o := range it.Offerings {
			switch {
			case o.CapacityType == v1.CapacityTypeOnDemand:
				od = o.Price
			case o.CapacityType == v1.CapacityTypeReserved && o.ReservationID == crID:
				reserved = o.Price
				if o.ReservationCapacity != 2 || !o.Available {
					t.Errorf("reserved offering %+v, want 2 instances available", o)
				}
			}
		}
	}
	// Both offerings carry the node class's volumes; the instance's share
	// of a reserved one is already paid for.
	vol := instancetype.VolumeCost(nc, prov.Pricing())
	if reserved <= 0 || od <= 0 || reserved-vol > (od-vol)/1000 {
		t.Errorf("reserved offering at $%v beside on-demand $%v (each with $%v of volumes), want the instance a tiny fraction", reserved, od, vol)
	}

	newClaim := func(name string) *v1.NodeClaim {
		c := testenv.NodeClaim(name, "reserved", nc.Name, testenv.In(corev1.LabelInstanceTypeStable, typ),
			testenv.In(corev1.LabelTopologyZone, zone),
			testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved, v1.CapacityTypeOnDemand))
		c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		return c
	}
	client := ec2.NewFromConfig(sim.Config)
	fleetsBefore := len(sim.Requests().Requests("ec2", "CreateFleet"))
	var reservedClaim *v1.NodeClaim
	for i, want := range []string{v1.CapacityTypeReserved, v1.CapacityTypeReserved, v1.CapacityTypeOnDemand} {
		got, err := prov.Create(ctx, newClaim("create-reserved-"+string(rune('a'+i))))
		if err != nil {
			t.Fatalf("launch %d: %v", i+1, err)
		}
		t.Cleanup(func() { _ = prov.Delete(ctx, got) })
		if ct := got.Labels[v1.CapacityTypeLabelKey]; ct != want {
			t.Errorf("launch %d: capacity type %s, want %s", i+1, ct, want)
		}
		id := got.Status.ProviderID[strings.LastIndex(got.Status.ProviderID, "/")+1:]
		out, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		inReservation := sdkaws.ToString(out.Reservations[0].Instances[0].CapacityReservationId)
		if want == v1.CapacityTypeReserved {
			reservedClaim = got
			if inReservation != crID || got.Labels[v1.LabelCapacityReservationID] != crID || got.Labels[v1.LabelCapacityReservationType] != "default" {
				t.Errorf("launch %d: instance in reservation %q, labels %s=%q %s=%q; want %s, default",
					i+1, inReservation, v1.LabelCapacityReservationID, got.Labels[v1.LabelCapacityReservationID],
					v1.LabelCapacityReservationType, got.Labels[v1.LabelCapacityReservationType], crID)
			}
		} else if inReservation != "" || got.Labels[v1.LabelCapacityReservationID] != "" {
			t.Errorf("launch %d: on-demand instance in reservation %q (label %q)", i+1, inReservation, got.Labels[v1.LabelCapacityReservationID])
		}
	}

	// The request shapes EC2 saw: on-demand fleets, the first two from a
	// launch template that targets the reservation and nothing else.
	fleets := sim.Requests().Requests("ec2", "CreateFleet")[fleetsBefore:]
	if len(fleets) != 3 {
		t.Fatalf("%d CreateFleet calls, want 3", len(fleets))
	}
	for i, f := range fleets {
		if got := f.Parameters["TargetCapacitySpecification.DefaultTargetCapacityType"]; got != "on-demand" {
			t.Errorf("fleet %d: DefaultTargetCapacityType %v, want on-demand", i+1, got)
		}
	}
	targeted := 0
	for _, r := range sim.Requests().Requests("ec2", "CreateLaunchTemplate") {
		if r.Parameters["LaunchTemplateData.CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId"] == crID {
			targeted++
			if p := r.Parameters["LaunchTemplateData.CapacityReservationSpecification.CapacityReservationPreference"]; p != "capacity-reservations-only" {
				t.Errorf("targeting launch template has preference %v, want capacity-reservations-only", p)
			}
		}
	}
	if targeted == 0 {
		t.Errorf("no launch template targets reservation %s", crID)
	}
	rs, err := client.DescribeCapacityReservations(ctx, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{crID}})
	if err != nil {
		t.Fatal(err)
	}
	if n := sdkaws.ToInt32(rs.CapacityReservations[0].AvailableInstanceCount); n != 0 {
		t.Errorf("reservation has %d instances left, want 0", n)
	}

	// Reservation drift: a reserved instance drifts once its node class
	// stops selecting the reservation.
	if reason, err := prov.IsDrifted(ctx, reservedClaim); err != nil || reason != "" {
		t.Errorf("reserved claim with its reservation selected: drift %q (%v), want none", reason, err)
	}
	if err := kube.Client.Get(ctx, ctrlclient.ObjectKeyFromObject(nc), nc); err != nil {
		t.Fatal(err)
	}
	nc.Status.CapacityReservations = nil
	if err := kube.Client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if reason, _ := prov.IsDrifted(ctx, reservedClaim); reason != awsprovider.DriftCapacityReservation {
		t.Errorf("reservation no longer selected: drift %q, want %s", reason, awsprovider.DriftCapacityReservation)
	}
}

// With the ReservedCapacity feature gate off, a selected reservation is
// neither resolved into status nor offered.
func TestReservedCapacityGateOff(t *testing.T) {
	ctx := testContext(t)
	const typ = "m5.2xlarge"
	zone := sim.EC2.Region().Zones[1].Name
	crID, err := sim.EC2.AddCapacityReservation(typ, zone, 1, "joist-test", "reserved-gate-off")
	if err != nil {
		t.Fatal(err)
	}
	s := settings()
	s.DisableReservedCapacity = true
	off, err := awsprovider.New(sim.Config, kube.Client, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := off.Pricing().UpdateOnDemandPricing(ctx); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*awsprovider.Provider{"gate-on": prov, "gate-off": off} {
		c := testenv.NodeClass("reserved-"+name, cluster, "al2023@latest")
		c.Spec.CapacityReservationSelectorTerms = []awsv1.CapacityReservationSelectorTerm{{ID: crID}}
		c = readyNodeClass(t, p, c)
		its, err := p.InstanceTypes().List(ctx, c, []string{zone})
		if err != nil {
			t.Fatal(err)
		}
		offered := false
		for _, it := range its {
			for _, o := range it.Offerings {
				offered = offered || (it.Name == typ && o.ReservationID == crID)
			}
		}
		if want := name == "gate-on"; offered != want || (len(c.Status.CapacityReservations) == 1) != want {
			t.Errorf("%s: reservation offered %v, status %v; want both %v", name, offered, c.Status.CapacityReservations, want)
		}
	}
}

// launchReserved launches a claim for typ in zone that may go reserved or
// on-demand, and returns it with the CreateFleet and CreateLaunchTemplate
// requests the launch made.
func launchReserved(t *testing.T, nc *awsv1.EC2NodeClass, name, typ, zone string, extra ...v1.NodeSelectorRequirementWithMinValues) (*v1.NodeClaim, []map[string]any, []map[string]any) {
	t.Helper()
	ctx := testContext(t)
	fleets, templates := len(sim.Requests().Requests("ec2", "CreateFleet")), len(sim.Requests().Requests("ec2", "CreateLaunchTemplate"))
	c := testenv.NodeClaim(name, "reserved", nc.Name, append([]v1.NodeSelectorRequirementWithMinValues{testenv.In(corev1.LabelInstanceTypeStable, typ),
		testenv.In(corev1.LabelTopologyZone, zone), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved, v1.CapacityTypeOnDemand)}, extra...)...)
	c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	got, err := prov.Create(ctx, c)
	if err != nil {
		t.Fatalf("launching %s: %v", name, err)
	}
	t.Cleanup(func() { _ = prov.Delete(context.Background(), got) })
	params := func(op string, from int) []map[string]any {
		var out []map[string]any
		for _, r := range sim.Requests().Requests("ec2", op)[from:] {
			out = append(out, r.Parameters)
		}
		return out
	}
	return got, params("CreateFleet", fleets), params("CreateLaunchTemplate", templates)
}

// A capacity block is offered as reserved capacity at the near-zero price
// of any reservation while it is active, launched into in the shape EC2
// asks for (a capacity-block fleet, a launch template with the
// capacity-block market type targeting the block), and once it is within
// 40 minutes of its end its NodeClaims are deleted and it is offered no
// more.
func TestCapacityBlockLaunchAndExpiration(t *testing.T) {
	ctx := testContext(t)
	const typ = "c5.2xlarge"
	zone := sim.EC2.Region().Zones[0].Name
	id, err := sim.EC2.AddCapacityBlock(typ, zone, 1, time.Now().Add(3*time.Hour), "joist-test", "capacity-block")
	if err != nil {
		t.Fatal(err)
	}
	nc := testenv.NodeClass("capacity-block", cluster, "al2023@latest")
	nc.Spec.CapacityReservationSelectorTerms = []awsv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"joist-test": "capacity-block"}}}
	nc = readyNodeClass(t, prov, nc)
	if got := nc.Status.CapacityReservations; len(got) != 1 || got[0].ID != id || got[0].ReservationType != awsv1.CapacityReservationTypeCapacityBlock ||
		got[0].State != awsv1.CapacityReservationStateActive || got[0].EndTime == nil {
		t.Fatalf("status.capacityReservations = %+v, want the active capacity block %s with its end", got, id)
	}
	blockOffering := func() (reserved, od scheduling.Offering) {
		its, err := prov.InstanceTypes().List(ctx, nc, []string{zone})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range its {
			for _, o := range it.Offerings {
				switch {
				case it.Name != typ:
				case o.ReservationID == id:
					reserved = o
				case o.CapacityType == v1.CapacityTypeOnDemand:
					od = o
				}
			}
		}
		return reserved, od
	}
	reserved, od := blockOffering()
	vol := instancetype.VolumeCost(nc, prov.Pricing())
	odPrice, _ := prov.Pricing().OnDemandPrice(typ)
	if reserved.CapacityType != v1.CapacityTypeReserved || !reserved.Available || reserved.ReservationCapacity != 1 ||
		math.Abs(reserved.Price-vol-odPrice/instancetype.ReservedPriceDivisor) > 1e-9 || od.Price <= reserved.Price {
		t.Errorf("capacity block offering %+v beside on-demand %+v: want reserved, available, 1 instance at $%v/%d plus $%v of volumes",
			reserved, od, odPrice, instancetype.ReservedPriceDivisor, vol)
	}

	got, fleets, templates := launchReserved(t, nc, "capacity-block-a", typ, zone)
	if got.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeReserved || got.Labels[v1.LabelCapacityReservationID] != id ||
		got.Labels[v1.LabelCapacityReservationType] != "capacity-block" || got.Labels[v1.LabelCapacityReservationInterruptible] != "false" {
		t.Errorf("claim in the block has labels %v", got.Labels)
	}
	if len(fleets) != 1 || fleets[0]["TargetCapacitySpecification.DefaultTargetCapacityType"] != "capacity-block" || fleets[0]["OnDemandOptions.AllocationStrategy"] != nil {
		t.Errorf("CreateFleet requests %v, want one with DefaultTargetCapacityType capacity-block and no OnDemandOptions", fleets)
	}
	targeting := 0
	for _, lt := range templates {
		if lt["LaunchTemplateData.CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId"] == id {
			targeting++
			if lt["LaunchTemplateData.InstanceMarketOptions.MarketType"] != "capacity-block" {
				t.Errorf("launch template into the block has market type %v, want capacity-block", lt["LaunchTemplateData.InstanceMarketOptions.MarketType"])
			}
		}
	}
	if targeting != 1 {
		t.Errorf("%d new launch templates target the block, want 1", targeting)
	}
	instanceID := got.Status.ProviderID[strings.LastIndex(got.Status.ProviderID, "/")+1:]
	out, err := ec2.NewFromConfig(sim.Config).DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{instanceID}})
	if err != nil {
		t.Fatal(err)
	}
	if inst := out.Reservations[0].Instances[0]; sdkaws.ToString(inst.CapacityReservationId) != id || inst.InstanceLifecycle != ec2types.InstanceLifecycleTypeCapacityBlock {
		t.Errorf("instance in %q with lifecycle %q, want %s and capacity-block", sdkaws.ToString(inst.CapacityReservationId), inst.InstanceLifecycle, id)
	}
	// The block holds one instance: the next launch is on-demand.
	if next, _, _ := launchReserved(t, nc, "capacity-block-b", typ, zone); next.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeOnDemand {
		t.Errorf("launch beside the full block is %s, want on-demand", next.Labels[v1.CapacityTypeLabelKey])
	}

	// Expiration: NodeClaims in the block (and not those in an ODCR) are
	// deleted once the block is within 40 minutes of its end.
	inBlock := testenv.NodeClaim("capacity-block-expiring", "reserved", nc.Name, testenv.In(corev1.LabelInstanceTypeStable, typ))
	inODCR := testenv.NodeClaim("capacity-block-odcr", "reserved", nc.Name, testenv.In(corev1.LabelInstanceTypeStable, typ))
	for claim, labels := range map[*v1.NodeClaim]map[string]string{
		inBlock: {v1.LabelCapacityReservationID: id, v1.LabelCapacityReservationType: "capacity-block"},
		inODCR:  {v1.LabelCapacityReservationID: id, v1.LabelCapacityReservationType: "default"},
	} {
		for k, v := range labels {
			claim.Labels[k] = v
		}
		if err := kube.Client.Create(ctx, claim); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kube.Client.Delete(context.Background(), claim) })
	}
	expiration := capacityblock.NewExpiration(kube.Client, prov.CapacityReservations(), nil, clock.RealClock{})
	exists := func(c *v1.NodeClaim) bool {
		err := kube.Client.Get(ctx, ctrlclient.ObjectKeyFromObject(c), &v1.NodeClaim{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	if err := expiration.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if !exists(inBlock) || !exists(inODCR) {
		t.Fatalf("a NodeClaim was deleted with the block 3 hours from its end")
	}
	if err := sim.EC2.SetCapacityReservationEnd(id, time.Now().Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	prov.CapacityReservations().Invalidate()
	if err := expiration.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if exists(inBlock) || !exists(inODCR) {
		t.Errorf("30 minutes before the block ends: claim in the block exists %v (want deleted), other claim exists %v (want kept)", exists(inBlock), exists(inODCR))
	}
	// The block's offering goes with the latest listing, before the node
	// class's status catches up.
	if reserved, _ := blockOffering(); reserved.Available {
		t.Errorf("block brought within 40 minutes of its end still offered (status not yet re-resolved): %+v", reserved)
	}
	resolve(t, prov, nc)
	if got := nc.Status.CapacityReservations; len(got) != 1 || got[0].State != awsv1.CapacityReservationStateExpiring {
		t.Errorf("status.capacityReservations = %+v, want the block expiring", got)
	}
	if reserved, _ := blockOffering(); reserved.Available {
		t.Errorf("expiring block offered as available: %+v", reserved)
	}
}

// An interruptible capacity reservation is launched into with its own
// shape: a reserved-capacity fleet asking for interruptible reservations
// and a launch template with the interruptible market type.
func TestInterruptibleReservationLaunch(t *testing.T) {
	const typ = "c5.4xlarge"
	zone := sim.EC2.Region().Zones[0].Name
	id, err := sim.EC2.AddCapacityReservation(typ, zone, 1, "joist-test", "interruptible")
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.EC2.SetInterruptible(id); err != nil {
		t.Fatal(err)
	}
	nc := testenv.NodeClass("interruptible", cluster, "al2023@latest")
	nc.Spec.CapacityReservationSelectorTerms = []awsv1.CapacityReservationSelectorTerm{{ID: id}}
	nc = readyNodeClass(t, prov, nc)
	if got := nc.Status.CapacityReservations; len(got) != 1 || !got[0].Interruptible {
		t.Fatalf("status.capacityReservations = %+v, want %s interruptible", got, id)
	}
	got, fleets, templates := launchReserved(t, nc, "interruptible-a", typ, zone)
	if got.Labels[v1.LabelCapacityReservationID] != id || got.Labels[v1.LabelCapacityReservationType] != "default" ||
		got.Labels[v1.LabelCapacityReservationInterruptible] != "true" {
		t.Errorf("claim in the interruptible reservation has labels %v", got.Labels)
	}
	if len(fleets) != 1 || fleets[0]["TargetCapacitySpecification.DefaultTargetCapacityType"] != "reserved-capacity" ||
		fleets[0]["ReservedCapacityOptions.ReservationType.1"] != "interruptible-capacity-reservation" {
		t.Errorf("CreateFleet requests %v, want reserved-capacity with interruptible-capacity-reservation", fleets)
	}
	for _, lt := range templates {
		if lt["LaunchTemplateData.CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId"] == id &&
			lt["LaunchTemplateData.InstanceMarketOptions.MarketType"] != "interruptible-capacity-reservation" {
			t.Errorf("launch template into the reservation has market type %v", lt["LaunchTemplateData.InstanceMarketOptions.MarketType"])
		}
	}
}

// A claim's requirements on a reservation's type and interruptibility pick
// among the node class's reservations, as they do its ID: with an ODCR and
// a capacity block of one type in one zone, a claim asking for a capacity
// block launches into the block, one excluding blocks into the ODCR, and
// one asking for an interruptible reservation finds neither.
func TestReservationTypeRequirements(t *testing.T) {
	ctx := testContext(t)
	const typ = "c5.xlarge"
	zone := sim.EC2.Region().Zones[0].Name
	odcr, err := sim.EC2.AddCapacityReservation(typ, zone, 3, "joist-test", "reservation-type")
	if err != nil {
		t.Fatal(err)
	}
	block, err := sim.EC2.AddCapacityBlock(typ, zone, 3, time.Now().Add(3*time.Hour), "joist-test", "reservation-type")
	if err != nil {
		t.Fatal(err)
	}
	nc := testenv.NodeClass("reservation-type", cluster, "al2023@latest")
	nc.Spec.CapacityReservationSelectorTerms = []awsv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"joist-test": "reservation-type"}}}
	nc = readyNodeClass(t, prov, nc)
	if got := nc.Status.CapacityReservations; len(got) != 2 {
		t.Fatalf("status.capacityReservations = %+v, want %s and %s", got, odcr, block)
	}
	for _, tc := range []struct {
		name string
		req  v1.NodeSelectorRequirementWithMinValues
		want string
	}{
		{"block", testenv.In(v1.LabelCapacityReservationType, "capacity-block"), block},
		{"not-block", v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelCapacityReservationType, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"capacity-block"}}, odcr},
		{"default", testenv.In(v1.LabelCapacityReservationType, "default"), odcr},
	} {
		got, _, _ := launchReserved(t, nc, "reservation-type-"+tc.name, typ, zone, tc.req)
		if got.Labels[v1.LabelCapacityReservationID] != tc.want || got.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeReserved {
			t.Errorf("claim requiring %s %s %v launched into %q (%s), want %s", tc.req.Key, tc.req.Operator, tc.req.Values,
				got.Labels[v1.LabelCapacityReservationID], got.Labels[v1.CapacityTypeLabelKey], tc.want)
		}
	}
	c := testenv.NodeClaim("reservation-type-interruptible", "reserved", nc.Name, testenv.In(corev1.LabelInstanceTypeStable, typ),
		testenv.In(corev1.LabelTopologyZone, zone), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved, v1.CapacityTypeOnDemand),
		testenv.In(v1.LabelCapacityReservationInterruptible, "true"))
	c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if got, err := prov.Create(ctx, c); err == nil {
		_ = prov.Delete(context.Background(), got)
		t.Errorf("a claim requiring an interruptible reservation launched into %q (%s); the node class has none", got.Labels[v1.LabelCapacityReservationID], got.Labels[v1.CapacityTypeLabelKey])
	} else if !cloud.IsInsufficientCapacity(err) {
		t.Errorf("a claim requiring an interruptible reservation failed with %v, want an insufficient-capacity error", err)
	}
}
