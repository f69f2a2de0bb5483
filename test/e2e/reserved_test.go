package e2e

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// testReservedCapacity: a NodePool allowing reserved and on-demand capacity
// on a node class that selects a two-instance m5.xlarge reservation. Three
// pods of 3 CPU need three nodes: two land in the reservation, the third,
// with the reservation full, on-demand.
func testReservedCapacity(t *testing.T) {
	const typ, pool = "m5.xlarge", "reserved"
	zone := region(t).Zones[0].Name
	crID, err := w.sim.EC2.AddCapacityReservation(typ, zone, 2, "e2e-reservation", pool)
	if err != nil {
		t.Fatal(err)
	}
	nodeClassWith(t, pool, func(s *awsv1.EC2NodeClassSpec) {
		s.CapacityReservationSelectorTerms = []awsv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"e2e-reservation": pool}}}
	})
	ns := namespace(t, "e2e-reserved")
	nodePool(t, pool, pool, nil,
		req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeReserved, v1.CapacityTypeOnDemand),
		req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, typ),
		req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zone))
	create(t, deployment(ns, "pause", 3, podSpec(pool, requests("3", "4Gi"))))
	waitRunning(t, ns, 3)

	insts := instances(t, pool)
	byCT := map[string]int{}
	for _, c := range claimsOf(t, pool) {
		ct := c.Labels[v1.CapacityTypeLabelKey]
		byCT[ct]++
		inst, ok := insts[c.Status.ProviderID]
		if !ok {
			t.Errorf("nodeclaim %s: instance %s not found", c.Name, c.Status.ProviderID)
			continue
		}
		inReservation := aws.ToString(inst.CapacityReservationId)
		switch ct {
		case v1.CapacityTypeReserved:
			if inReservation != crID || c.Labels[v1.LabelCapacityReservationID] != crID {
				t.Errorf("reserved nodeclaim %s: instance in reservation %q, label %q; want %s", c.Name, inReservation, c.Labels[v1.LabelCapacityReservationID], crID)
			}
		case v1.CapacityTypeOnDemand:
			if inReservation != "" {
				t.Errorf("on-demand nodeclaim %s runs in reservation %s", c.Name, inReservation)
			}
		default:
			t.Errorf("nodeclaim %s launched %s, want reserved or on-demand", c.Name, ct)
		}
		t.Logf("nodeclaim %s: %s %s in %s, reservation %q", c.Name, inst.InstanceType, ct, aws.ToString(inst.Placement.AvailabilityZone), inReservation)
	}
	if byCT[v1.CapacityTypeReserved] != 2 || byCT[v1.CapacityTypeOnDemand] != 1 {
		t.Errorf("nodeclaims by capacity type %v, want 2 reserved (the reservation's size) and 1 on-demand", byCT)
	}
	reservedNodes := 0
	for _, n := range nodesOf(t, pool) {
		if n.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeReserved {
			continue
		}
		reservedNodes++
		if n.Labels[v1.LabelCapacityReservationID] != crID {
			t.Errorf("reserved node %s is labelled with reservation %q, want %s", n.Name, n.Labels[v1.LabelCapacityReservationID], crID)
		}
	}
	if reservedNodes != 2 {
		t.Errorf("%d nodes labelled capacity-type=reserved, want 2", reservedNodes)
	}
	out, err := ec2.NewFromConfig(w.sim.AWSConfig()).DescribeCapacityReservations(context.Background(), &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{crID}})
	if err != nil {
		t.Fatal(err)
	}
	if n := aws.ToInt32(out.CapacityReservations[0].AvailableInstanceCount); n != 0 {
		t.Errorf("reservation %s has %d instances left, want 0", crID, n)
	}
}
