package aws_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/nodeclass"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// launchedPlacement launches a claim and returns it with the Placement
// parameters of the CreateLaunchTemplate requests EC2 received for it and
// the placement EC2 reports for the instance.
func launchedPlacement(t *testing.T, name string, nc *awsv1.EC2NodeClass, reqs ...v1.NodeSelectorRequirementWithMinValues) (*v1.NodeClaim, map[string]string, *ec2.DescribeInstancesOutput) {
	t.Helper()
	ctx := testContext(t)
	before := len(sim.Requests().Requests("ec2", "CreateLaunchTemplate"))
	claim := testenv.NodeClaim(name, "general", nc.Name, append(reqs, testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))...)
	got, err := prov.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prov.Delete(ctx, got) })
	placement := map[string]string{}
	for _, r := range sim.Requests().Requests("ec2", "CreateLaunchTemplate")[before:] {
		for k, v := range r.Parameters {
			if strings.HasPrefix(k, "LaunchTemplateData.Placement.") && r.Status == 200 {
				placement[strings.TrimPrefix(k, "LaunchTemplateData.Placement.")] = fmt.Sprint(v)
			}
		}
	}
	id := got.Status.ProviderID[strings.LastIndex(got.Status.ProviderID, "/")+1:]
	out, err := ec2.NewFromConfig(sim.Config).DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	return got, placement, out
}

// TestPartitionPlacementGroupLaunch resolves a partition group by name,
// launches into it through the launch template's Placement, and labels the
// claim with the group and the partition EC2 chose.
func TestPartitionPlacementGroupLaunch(t *testing.T) {
	pgID, err := sim.EC2.AddPlacementGroup("joist-kafka", "partition", 3)
	if err != nil {
		t.Fatal(err)
	}
	nc := testenv.NodeClass("pg-partition", cluster, "al2023@latest")
	nc.Spec.PlacementGroupSelector = &awsv1.PlacementGroupSelector{Name: "joist-kafka"}
	nc = readyNodeClass(t, prov, nc)
	if !meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypePlacementGroupReady) {
		t.Fatalf("PlacementGroupReady is not True: %+v", nc.Status.Conditions)
	}
	// The partitions are a scheduling domain: every type may take any.
	its, err := prov.InstanceTypes().List(testContext(t), nc, []string{"us-west-2a", "us-west-2b", "us-west-2c"})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range its {
		if got := it.Values(v1.LabelPlacementGroupPartition); !slices.Equal(got, []string{"1", "2", "3"}) {
			t.Fatalf("%s may take partitions %v, want [1 2 3]", it.Name, got)
		}
	}

	got, placement, out := launchedPlacement(t, "pg-partition", nc, testenv.In(corev1.LabelInstanceTypeStable, "m5.large", "m5.xlarge"))
	if placement["GroupId"] != pgID || placement["PartitionNumber"] != "" {
		t.Errorf("launch template Placement = %v, want GroupId %s and no partition (EC2 picks)", placement, pgID)
	}
	pl := out.Reservations[0].Instances[0].Placement
	if sdkaws.ToString(pl.GroupId) != pgID || pl.PartitionNumber == nil {
		t.Fatalf("instance placement %+v, want group %s with a partition", pl, pgID)
	}
	if got.Labels[v1.LabelPlacementGroupID] != pgID || got.Labels[v1.LabelPlacementGroupPartition] != fmt.Sprint(*pl.PartitionNumber) {
		t.Errorf("claim labels %v, want %s=%s and %s=%d", got.Labels, v1.LabelPlacementGroupID, pgID, v1.LabelPlacementGroupPartition, *pl.PartitionNumber)
	}

	// A claim that asks for partitions launches into the lowest allowed.
	_, placement, out = launchedPlacement(t, "pg-partition-3", nc, testenv.In(corev1.LabelInstanceTypeStable, "m5.large"),
		testenv.In(v1.LabelPlacementGroupPartition, "3", "2"))
	if placement["PartitionNumber"] != "2" || sdkaws.ToInt32(out.Reservations[0].Instances[0].Placement.PartitionNumber) != 2 {
		t.Errorf("launch template Placement %v, instance placement %+v: want partition 2", placement, out.Reservations[0].Instances[0].Placement)
	}
}

// TestClusterPlacementGroupLaunch keeps launches into a cluster group in
// one zone and offers only the types that support the cluster strategy.
func TestClusterPlacementGroupLaunch(t *testing.T) {
	ctx := testContext(t)
	pgID, err := sim.EC2.AddPlacementGroup("joist-hpc", "cluster", 0)
	if err != nil {
		t.Fatal(err)
	}
	nc := testenv.NodeClass("pg-cluster", cluster, "al2023@latest")
	nc.Spec.PlacementGroupSelector = &awsv1.PlacementGroupSelector{ID: pgID}
	nc = readyNodeClass(t, prov, nc)

	its, err := prov.InstanceTypes().List(ctx, nc, []string{"us-west-2a", "us-west-2b", "us-west-2c"})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, it := range its {
		names[it.Name] = true
		if it.Labels[v1.LabelPlacementGroupID] != pgID {
			t.Fatalf("%s has labels %v, want %s=%s", it.Name, it.Labels, v1.LabelPlacementGroupID, pgID)
		}
	}
	if !names["m5.large"] || names["t3.large"] || names["c7i-flex.large"] {
		t.Errorf("types for a cluster group: m5.large %v (want true), t3.large %v and c7i-flex.large %v (want false: no cluster support)",
			names["m5.large"], names["t3.large"], names["c7i-flex.large"])
	}

	first, placement, _ := launchedPlacement(t, "pg-cluster-1", nc, testenv.In(corev1.LabelInstanceTypeStable, "m5.large", "c5.large", "m6i.large"))
	if placement["GroupId"] != pgID {
		t.Errorf("launch template Placement = %v, want GroupId %s", placement, pgID)
	}
	for i := 2; i <= 3; i++ {
		next, _, out := launchedPlacement(t, fmt.Sprintf("pg-cluster-%d", i), nc, testenv.In(corev1.LabelInstanceTypeStable, "m5.large", "c5.large", "m6i.large"))
		if z := next.Labels[corev1.LabelTopologyZone]; z != first.Labels[corev1.LabelTopologyZone] {
			t.Errorf("claim %s launched in %s, the group's first instance in %s", next.Name, z, first.Labels[corev1.LabelTopologyZone])
		}
		if g := sdkaws.ToString(out.Reservations[0].Instances[0].Placement.GroupName); g != "joist-hpc" {
			t.Errorf("instance placement group %q, want joist-hpc", g)
		}
	}
}

// TestPlacementGroupNotFound leaves the node class not Ready, naming the
// selector, and launches nothing from it.
func TestPlacementGroupNotFound(t *testing.T) {
	ctx := testContext(t)
	nc := testenv.NodeClass("pg-missing", cluster, "al2023@latest")
	nc.Spec.PlacementGroupSelector = &awsv1.PlacementGroupSelector{Name: "no-such-group"}
	if err := kube.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Client.Delete(ctx, nc) })
	nodeclass.Resolve(ctx, prov, nc)
	c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypePlacementGroupReady)
	if c == nil || c.Status != "False" || c.Reason != "PlacementGroupNotFound" || !strings.Contains(c.Message, "no-such-group") {
		t.Fatalf("PlacementGroupReady = %+v, want False, PlacementGroupNotFound, naming the group", c)
	}
	if meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeReady) {
		t.Fatal("the node class is Ready without its placement group")
	}
	if err := kube.Client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
		t.Fatal(err)
	}
	if _, err := prov.Create(ctx, testenv.NodeClaim("pg-missing", "general", nc.Name)); err == nil {
		t.Fatal("launched from a node class whose placement group is not found")
	}
}

// TestSpreadPlacementGroupLimit fills a spread group's seven instances in
// a zone: the eighth launch there fails for want of capacity, and the
// zone's offerings become unavailable to the group's node class only.
func TestSpreadPlacementGroupLimit(t *testing.T) {
	ctx := testContext(t)
	const zone = "us-west-2a"
	if _, err := sim.EC2.AddPlacementGroup("joist-spread", "spread", 0); err != nil {
		t.Fatal(err)
	}
	nc := testenv.NodeClass("pg-spread", cluster, "al2023@latest")
	nc.Spec.PlacementGroupSelector = &awsv1.PlacementGroupSelector{Name: "joist-spread"}
	nc = readyNodeClass(t, prov, nc)
	plain := readyNodeClass(t, prov, testenv.NodeClass("pg-spread-plain", cluster, "al2023@latest"))

	reqs := []v1.NodeSelectorRequirementWithMinValues{
		testenv.In(corev1.LabelInstanceTypeStable, "m5.large"), testenv.In(corev1.LabelTopologyZone, zone),
	}
	for i := 1; i <= 7; i++ {
		launchedPlacement(t, fmt.Sprintf("pg-spread-%d", i), nc, reqs...)
	}
	claim := testenv.NodeClaim("pg-spread-8", "general", nc.Name, append(reqs, testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))...)
	if got, err := prov.Create(ctx, claim); err == nil {
		_ = prov.Delete(ctx, got)
		t.Fatal("an eighth instance launched into a spread group's zone")
	} else if !cloud.IsInsufficientCapacity(err) {
		t.Fatalf("eighth launch: %v, want an insufficient capacity error", err)
	}
	available := func(nc *awsv1.EC2NodeClass) bool {
		its, err := prov.InstanceTypes().List(ctx, nc, []string{"us-west-2a", "us-west-2b", "us-west-2c"})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range its {
			if it.Name != "m5.large" {
				continue
			}
			for _, o := range it.Offerings {
				if o.Zone == zone && o.CapacityType == v1.CapacityTypeOnDemand {
					return o.Available
				}
			}
		}
		t.Fatalf("no m5.large on-demand offering in %s", zone)
		return false
	}
	if available(nc) {
		t.Error("m5.large on-demand in the full zone is still offered to the spread group's node class")
	}
	if !available(plain) {
		t.Error("the spread group's limit took m5.large on-demand in the zone away from a node class without a placement group")
	}
}

// TestPlacementGroupDrift: a claim whose placement group is not the one the
// node class resolves to now drifts, as in Karpenter, even where the static
// hash is not compared (a claim stamped by another hash version): one that
// ran in a group since replaced under the same name, or in none.
func TestPlacementGroupDrift(t *testing.T) {
	ctx := testContext(t)
	pgID, err := sim.EC2.AddPlacementGroup("joist-drift", "spread", 0)
	if err != nil {
		t.Fatal(err)
	}
	nc := testenv.NodeClass("pg-drift", cluster, "al2023@latest")
	nc.Spec.PlacementGroupSelector = &awsv1.PlacementGroupSelector{Name: "joist-drift"}
	nc = readyNodeClass(t, prov, nc)
	got, _, _ := launchedPlacement(t, "pg-drift", nc, testenv.In(corev1.LabelInstanceTypeStable, "m5.large"))
	if reason, err := prov.IsDrifted(ctx, got); err != nil || reason != "" {
		t.Fatalf("claim in the node class's group: drift %q, %v", reason, err)
	}
	otherVersion := func(c *v1.NodeClaim) *v1.NodeClaim {
		c = c.DeepCopy()
		c.Annotations[v1.EC2NodeClassHashVersionAnnotationKey] = "older"
		return c
	}
	replaced := otherVersion(got)
	replaced.Labels[v1.LabelPlacementGroupID] = "pg-0123456789abcdef0"
	none := otherVersion(got)
	delete(none.Labels, v1.LabelPlacementGroupID)
	for name, c := range map[string]*v1.NodeClaim{"a replaced group": replaced, "no group": none} {
		if reason, err := prov.IsDrifted(ctx, c); err != nil || reason != awsprovider.DriftPlacementGroup {
			t.Errorf("claim in %s (node class group %s): drift %q, %v; want %s", name, pgID, reason, err, awsprovider.DriftPlacementGroup)
		}
	}
}
