package e2e

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// testPlacementGroup: a node class naming a partition placement group
// launches into it. Pods that select the group's ID label and spread over
// its partitions run on nodes whose launch template placed them in the
// group, one partition each (the claims name it: the partitions are a
// scheduling domain), each node labelled with its instance's partition.
func testPlacementGroup(t *testing.T) {
	t.Parallel()
	const pool = "placement-group"
	pgID, err := worldOf(t).sim.EC2.AddPlacementGroup("e2e-partitions", "partition", 2)
	if err != nil {
		t.Fatal(err)
	}
	nodeClassWith(t, pool, func(s *awsv1.EC2NodeClassSpec) {
		s.PlacementGroupSelector = &awsv1.PlacementGroupSelector{Name: "e2e-partitions"}
	})
	ns := namespace(t, "e2e-placement-group")
	nodePool(t, pool, pool, nil, req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeOnDemand),
		req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large"))
	spec := podSpec(pool, requests("1500m", "1Gi"))
	spec.NodeSelector[v1.LabelPlacementGroupID] = pgID
	spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
		TopologyKey: v1.LabelPlacementGroupPartition, MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pause"}},
	}}
	create(t, deployment(ns, "pause", 2, spec))
	waitRunning(t, ns, 2)

	templates := 0
	partitions := map[string]bool{}
	for _, r := range worldOf(t).sim.Requests().Requests("ec2", "CreateLaunchTemplate") {
		if !tagged(r.Parameters, v1.LabelNodeClass, pool) || r.Parameters["DryRun"] == "true" {
			continue
		}
		templates++
		if g := fmt.Sprint(r.Parameters["LaunchTemplateData.Placement.GroupId"]); g != pgID {
			t.Errorf("launch template of node class %s: Placement.GroupId %s, want %s (parameters %v)", pool, g, pgID, r.Parameters)
		}
		partitions[fmt.Sprint(r.Parameters["LaunchTemplateData.Placement.PartitionNumber"])] = true
	}
	if templates == 0 {
		t.Fatalf("no CreateLaunchTemplate call for node class %s", pool)
	}
	if !partitions["1"] || !partitions["2"] || len(partitions) != 2 {
		t.Errorf("launch templates name partitions %v, want 1 and 2: each claim of the spread names its partition", partitions)
	}
	nodes := nodesOf(t, pool)
	if len(nodes) != 2 {
		t.Fatalf("%d nodes, want 2 (one 1500m pod per m5.large)", len(nodes))
	}
	if a, b := nodes[0].Labels[v1.LabelPlacementGroupPartition], nodes[1].Labels[v1.LabelPlacementGroupPartition]; a == b {
		t.Errorf("both nodes in partition %q, want one per partition", a)
	}
	insts := instances(t, pool)
	for _, n := range nodes {
		inst, ok := insts[n.Spec.ProviderID]
		if !ok {
			t.Fatalf("no instance for node %s", n.Name)
		}
		pl := inst.Placement
		if aws.ToString(pl.GroupId) != pgID || pl.PartitionNumber == nil {
			t.Errorf("node %s: instance placement %+v, want group %s with a partition", n.Name, pl, pgID)
			continue
		}
		if n.Labels[v1.LabelPlacementGroupID] != pgID || n.Labels[v1.LabelPlacementGroupPartition] != fmt.Sprint(*pl.PartitionNumber) {
			t.Errorf("node %s labels %s=%q %s=%q, want %s and %d", n.Name, v1.LabelPlacementGroupID, n.Labels[v1.LabelPlacementGroupID],
				v1.LabelPlacementGroupPartition, n.Labels[v1.LabelPlacementGroupPartition], pgID, *pl.PartitionNumber)
		}
	}
}
