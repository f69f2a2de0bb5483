package aws_test

import (
	"context"
	"strings"
	"testing"
	"time"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/nodeclass"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
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

// A selected capacity block is listed but refused by name: launches do not
// target capacity blocks, so the node class is not Ready.
func TestCapacityBlockIsRefused(t *testing.T) {
	ctx := testContext(t)
	zone := sim.EC2.Region().Zones[0].Name
	id, err := sim.EC2.AddCapacityBlock("p4d.24xlarge", zone, 1, time.Now().Add(24*time.Hour), "joist-test", "capacity-block")
	if err != nil {
		t.Fatal(err)
	}
	nc := testenv.NodeClass("capacity-block", cluster, "al2023@latest")
	nc.Spec.CapacityReservationSelectorTerms = []awsv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"joist-test": "capacity-block"}}}
	if err := kube.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Client.Delete(context.Background(), nc) })
	nodeclass.Resolve(ctx, prov, nc)
	if got := nc.Status.CapacityReservations; len(got) != 1 || got[0].ID != id || got[0].ReservationType != awsv1.CapacityReservationTypeCapacityBlock {
		t.Errorf("status.capacityReservations = %+v, want the capacity block %s", got, id)
	}
	c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeCapacityReservationsReady)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, id) || !strings.Contains(c.Message, "spec.capacityReservationSelectorTerms") {
		t.Errorf("CapacityReservationsReady = %+v, want False naming %s and the field", c, id)
	}
	if meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeReady) {
		t.Error("node class selecting a capacity block is Ready")
	}
}
