package aws

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/placementgroup"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

func TestClusterGroupZone(t *testing.T) {
	cands := []candidate{
		{it: testType("m5.large", "m5", "2", false), offerings: []scheduling.Offering{od("us-west-2a", 0.10), od("us-west-2b", 0.09), spot("us-west-2c", 0.03)}},
		{it: testType("c5.large", "c5", "2", false), offerings: []scheduling.Offering{od("us-west-2a", 0.085), spot("us-west-2a", 0.04)}},
	}
	if z := cheapestZone(cands, v1.CapacityTypeOnDemand); z != "us-west-2a" {
		t.Errorf("cheapest on-demand zone %s, want us-west-2a (c5.large at 0.085)", z)
	}
	if z := cheapestZone(cands, v1.CapacityTypeSpot); z != "us-west-2c" {
		t.Errorf("cheapest spot zone %s, want us-west-2c", z)
	}
	in := inZone(cands, "us-west-2b")
	if len(in) != 1 || in[0].it.Name != "m5.large" || len(in[0].offerings) != 1 || in[0].offerings[0].Zone != "us-west-2b" {
		t.Errorf("inZone us-west-2b = %+v, want m5.large's one offering there", in)
	}
	if in := inZone(cands, "us-west-2d"); len(in) != 0 {
		t.Errorf("inZone of a zone without offerings = %+v", in)
	}
}

func TestPartitionFor(t *testing.T) {
	partition := &placementgroup.PlacementGroup{ID: "pg-1", Strategy: placementgroup.StrategyPartition, PartitionCount: 4}
	cluster := &placementgroup.PlacementGroup{ID: "pg-2", Strategy: placementgroup.StrategyCluster}
	in := func(values ...string) requirements.Requirements {
		return requirements.NewRequirements(requirements.New(v1.LabelPlacementGroupPartition, corev1.NodeSelectorOpIn, values...))
	}
	req := func(op corev1.NodeSelectorOperator, values ...string) requirements.Requirements {
		return requirements.NewRequirements(requirements.New(v1.LabelPlacementGroupPartition, op, values...))
	}
	for _, c := range []struct {
		name    string
		reqs    requirements.Requirements
		pg      *placementgroup.PlacementGroup
		want    int32
		wantErr bool
	}{
		{"no group, no requirement", requirements.NewRequirements(), nil, 0, false},
		{"no group, a partition required", in("2"), nil, 0, true},
		{"cluster group, a partition required", in("2"), cluster, 0, true},
		{"no group, partitions excluded", req(corev1.NodeSelectorOpNotIn, "1"), nil, 0, false},
		{"no group, no partition wanted", req(corev1.NodeSelectorOpDoesNotExist), nil, 0, false},
		{"no partition requirement", requirements.NewRequirements(), partition, 0, false},
		{"any partition", req(corev1.NodeSelectorOpExists), partition, 0, false},
		{"every partition listed", in("1", "2", "3", "4"), partition, 0, false},
		{"lowest allowed", in("3", "2", "4"), partition, 2, false},
		{"numbers, not strings, compared", in("10", "3"), &placementgroup.PlacementGroup{Strategy: placementgroup.StrategyPartition, PartitionCount: 7}, 3, false},
		{"beyond the group's partitions", in("5", "9"), partition, 0, true},
		{"NotIn keeps the rest", req(corev1.NodeSelectorOpNotIn, "1"), partition, 2, false},
		{"NotIn every partition", req(corev1.NodeSelectorOpNotIn, "1", "2", "3", "4"), partition, 0, true},
		{"a partition group node always has a partition", req(corev1.NodeSelectorOpDoesNotExist), partition, 0, true},
	} {
		got, err := partitionFor(c.reqs, c.pg)
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("%s: partitionFor = %d, %v; want %d, error %v", c.name, got, err, c.want, c.wantErr)
		}
	}
}
