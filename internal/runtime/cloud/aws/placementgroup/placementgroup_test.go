package placementgroup_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/placementgroup"
)

func TestSupports(t *testing.T) {
	all := ec2types.InstanceTypeInfo{PlacementGroupInfo: &ec2types.PlacementGroupInfo{SupportedStrategies: []ec2types.PlacementGroupStrategy{"cluster", "partition", "spread"}}}
	noCluster := ec2types.InstanceTypeInfo{PlacementGroupInfo: &ec2types.PlacementGroupInfo{SupportedStrategies: []ec2types.PlacementGroupStrategy{"partition", "spread"}}}
	unknown := ec2types.InstanceTypeInfo{}
	cluster := &placementgroup.PlacementGroup{ID: "pg-1", Strategy: placementgroup.StrategyCluster}
	spread := &placementgroup.PlacementGroup{ID: "pg-2", Strategy: placementgroup.StrategySpread}
	for _, c := range []struct {
		name string
		info ec2types.InstanceTypeInfo
		pg   *placementgroup.PlacementGroup
		want bool
	}{
		{"no group", noCluster, nil, true},
		{"no group, no info", unknown, nil, true},
		{"cluster on a type with cluster", all, cluster, true},
		{"cluster on a type without", noCluster, cluster, false},
		{"spread on a type without cluster", noCluster, spread, true},
		{"a type that lists no strategies", unknown, spread, false},
	} {
		if got := placementgroup.Supports(c.info, c.pg); got != c.want {
			t.Errorf("%s: Supports = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestInput(t *testing.T) {
	byName := placementgroup.Input(&awsv1.PlacementGroupSelector{Name: "pg-looks-like-an-id"})
	if len(byName.GroupNames) != 1 || byName.GroupNames[0] != "pg-looks-like-an-id" || len(byName.GroupIds) != 0 {
		t.Errorf("by name: %+v", byName)
	}
	byID := placementgroup.Input(&awsv1.PlacementGroupSelector{ID: "pg-0123abc"})
	if len(byID.GroupIds) != 1 || byID.GroupIds[0] != "pg-0123abc" || len(byID.GroupNames) != 0 {
		t.Errorf("by ID: %+v", byID)
	}
	for _, in := range [][]ec2types.Filter{byName.Filters, byID.Filters} {
		if len(in) != 1 || aws.ToString(in[0].Name) != "state" || len(in[0].Values) != 1 || in[0].Values[0] != "available" {
			t.Errorf("filters %+v, want state=available only", in)
		}
	}
}
