package e2e

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/capacityblock"
)

// testCapacityBlock: a pod on a NodePool allowing reserved and on-demand
// capacity of one type lands in a one-instance capacity block, launched
// in the block's shape. When the block comes within 40 minutes of its end,
// its NodeClaim is deleted with an event and the pod runs again on an
// on-demand node.
func testCapacityBlock(t *testing.T) {
	t.Parallel()
	const typ, pool = "c5.xlarge", "capacity-block"
	world := worldOf(t)
	zone := region(t).Zones[0].Name
	id, err := world.sim.EC2.AddCapacityBlock(typ, zone, 1, time.Now().Add(3*time.Hour), "e2e-capacity-block", pool)
	if err != nil {
		t.Fatal(err)
	}
	nodeClassWith(t, pool, func(s *awsv1.EC2NodeClassSpec) {
		s.CapacityReservationSelectorTerms = []awsv1.CapacityReservationSelectorTerm{{ID: id}}
	})
	ns := namespace(t, "e2e-capacity-block")
	nodePool(t, pool, pool, nil,
		req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeReserved, v1.CapacityTypeOnDemand),
		req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, typ),
		req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zone))
	create(t, deployment(ns, "pause", 1, podSpec(pool, requests("2", "2Gi"))))
	waitRunning(t, ns, 1)

	claims := claimsOf(t, pool)
	if len(claims) != 1 || claims[0].Labels[v1.LabelCapacityReservationID] != id ||
		claims[0].Labels[v1.LabelCapacityReservationType] != string(awsv1.CapacityReservationTypeCapacityBlock) {
		t.Fatalf("nodeclaims %d, first labelled %v; want one in capacity block %s", len(claims), claims[0].Labels, id)
	}
	blockClaim := claims[0]
	inst := instances(t, pool)[blockClaim.Status.ProviderID]
	if aws.ToString(inst.CapacityReservationId) != id || inst.InstanceLifecycle != "capacity-block" {
		t.Errorf("instance in %q with lifecycle %q, want %s, capacity-block", aws.ToString(inst.CapacityReservationId), inst.InstanceLifecycle, id)
	}
	blockFleets := 0
	for _, r := range world.sim.Requests().Requests("ec2", "CreateFleet") {
		if r.Parameters["TargetCapacitySpecification.DefaultTargetCapacityType"] == "capacity-block" {
			blockFleets++
		}
	}
	marketTemplates := 0
	for _, r := range world.sim.Requests().Requests("ec2", "CreateLaunchTemplate") {
		if r.Parameters["LaunchTemplateData.CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId"] == id &&
			r.Parameters["LaunchTemplateData.InstanceMarketOptions.MarketType"] == "capacity-block" {
			marketTemplates++
		}
	}
	if blockFleets == 0 || marketTemplates == 0 {
		t.Errorf("%d capacity-block fleets, %d launch templates into %s with the capacity-block market type; want both", blockFleets, marketTemplates, id)
	}

	// 30 minutes left: inside the 40-minute window.
	if err := world.sim.EC2.SetCapacityReservationEnd(id, time.Now().Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the capacity block's NodeClaim replaced by an on-demand one with the pod running", func() (bool, string) {
		var onDemand, inBlock int
		for _, c := range claimsOf(t, pool) {
			switch {
			case c.Name == blockClaim.Name:
				inBlock++
			case c.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeOnDemand:
				onDemand++
			}
		}
		n, waiting := running(pods(t, ns, map[string]string{"app": "pause"}))
		return inBlock == 0 && onDemand == 1 && n == 1, waiting
	})
	if len(runtimeEvents(t, "default", blockClaim.Name, capacityblock.ReasonExpiring)) == 0 {
		t.Errorf("no %s event on NodeClaim %s", capacityblock.ReasonExpiring, blockClaim.Name)
	}
}
