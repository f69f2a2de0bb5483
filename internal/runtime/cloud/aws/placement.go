package aws

import (
	"context"
	"fmt"
	"math"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/placementgroup"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// placement resolves the node class's placement group for a launch: nil
// without a selector. A selector that resolves to nothing stops the launch
// rather than launch outside the group.
func (p *Provider) placement(ctx context.Context, nc *awsv1.EC2NodeClass) (*placementgroup.PlacementGroup, error) {
	if nc.Spec.PlacementGroupSelector == nil {
		return nil, nil
	}
	pg, err := p.placementGroups.Get(ctx, nc)
	if pg != nil {
		return pg, nil // on error, the group last resolved
	}
	if err == nil {
		err = fmt.Errorf("spec.placementGroupSelector matches no available placement group")
	}
	return nil, &cloud.NodeClassNotReadyError{Err: fmt.Errorf("EC2NodeClass %s: %w", nc.Name, err)}
}

// clusterZone is the zone a cluster placement group's instances of this
// cluster run in, "" while it has none: EC2 keeps a cluster group in one
// zone, so every launch into it must go there.
func (p *Provider) clusterZone(ctx context.Context, pg *placementgroup.PlacementGroup) (string, error) {
	insts, err := p.instances.List(ctx)
	if err != nil {
		return "", err
	}
	for _, inst := range insts {
		if inst.PlacementGroupID == pg.ID && inst.Zone != "" {
			return inst.Zone, nil
		}
	}
	return "", nil
}

// cheapestZone is the zone of the cheapest offering of a capacity type.
func cheapestZone(cands []candidate, capacityType string) string {
	zone, best := "", math.Inf(1)
	for _, c := range cands {
		for _, o := range c.offerings {
			if o.CapacityType == capacityType && (o.Price < best || (o.Price == best && o.Zone < zone)) {
				zone, best = o.Zone, o.Price
			}
		}
	}
	return zone
}

// inZone keeps the candidates' offerings in one zone.
func inZone(cands []candidate, zone string) []candidate {
	return keepOfferings(cands, func(o scheduling.Offering) bool { return o.Zone == zone })
}

// tenancyFor is the tenancy a claim launches with, as Karpenter picks it:
// default when its karpenter.k8s.aws/instance-tenancy requirement allows it
// (or there is none), else dedicated when allowed, else default.
func tenancyFor(reqs requirements.Requirements) string {
	if r := reqs.Get(v1.LabelInstanceTenancy); reqs.Has(v1.LabelInstanceTenancy) && !r.Has(string(ec2types.TenancyDefault)) && r.Has(string(ec2types.TenancyDedicated)) {
		return string(ec2types.TenancyDedicated)
	}
	return string(ec2types.TenancyDefault)
}

// partitionFor is the partition of a partition group a claim asks for: 0
// when its karpenter.k8s.aws/placement-group-partition requirement allows
// every partition (EC2 picks), else the lowest it allows. A requirement no
// partition meets, or one that needs a partition where the node class has
// no partition group, is an error: the node would carry a partition label
// the claim did not allow, or none it requires.
func partitionFor(reqs requirements.Requirements, pg *placementgroup.PlacementGroup) (int32, error) {
	r := reqs.Get(v1.LabelPlacementGroupPartition)
	if pg == nil || pg.Strategy != placementgroup.StrategyPartition {
		if reqs.Has(v1.LabelPlacementGroupPartition) && !requirements.NewRequirements(r).MatchesLabels(nil) {
			return 0, &cloud.CreateError{Reason: "PlacementPartitionUnavailable", Err: fmt.Errorf("the requirement on %s needs a partition placement group, and the node class selects none", v1.LabelPlacementGroupPartition)}
		}
		return 0, nil
	}
	var allowed []int32
	for i, part := range pg.Partitions() {
		if r.Has(part) {
			allowed = append(allowed, int32(i+1))
		}
	}
	switch {
	case len(allowed) == 0:
		return 0, &cloud.CreateError{Reason: "PlacementPartitionUnavailable", Err: fmt.Errorf("placement group %s has partitions 1-%d, none of which meets the requirement on %s (%s %v)",
			pg.Name, pg.PartitionCount, v1.LabelPlacementGroupPartition, r.Operator(), r.Values())}
	case len(allowed) == int(pg.PartitionCount):
		return 0, nil
	}
	return allowed[0], nil
}
