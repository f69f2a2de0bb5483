package aws

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

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

// partitionFor is the partition of a partition group a claim asks for: the
// lowest its karpenter.k8s.aws/placement-group-partition requirement
// allows (EC2 takes one), 0 when it does not constrain it and EC2 picks.
func partitionFor(reqs requirements.Requirements, pg *placementgroup.PlacementGroup) int32 {
	if pg == nil || pg.Strategy != placementgroup.StrategyPartition {
		return 0
	}
	r := reqs.Get(v1.LabelPlacementGroupPartition)
	if r.Operator() != corev1.NodeSelectorOpIn {
		return 0
	}
	var allowed []int32
	for _, v := range r.Values() {
		if n, err := strconv.ParseInt(v, 10, 32); err == nil && n >= 1 && int32(n) <= pg.PartitionCount {
			allowed = append(allowed, int32(n))
		}
	}
	if len(allowed) == 0 {
		return 0
	}
	return slices.Min(allowed)
}
