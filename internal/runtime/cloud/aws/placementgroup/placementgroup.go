// Package placementgroup resolves an EC2NodeClass's placementGroupSelector
// to the one EC2 placement group its instances launch into, and holds the
// rules a group's strategy puts on instance types.
package placementgroup

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/selector"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ttlcache"
)

// TTL is how long a resolved group is used before EC2 is asked again.
const TTL = time.Minute

// Placement strategies.
const (
	StrategyCluster   = "cluster"
	StrategyPartition = "partition"
	StrategySpread    = "spread"
)

// PlacementGroup is a resolved, available placement group.
type PlacementGroup struct {
	ID       string
	Name     string
	Strategy string
	// PartitionCount is set for partition groups.
	PartitionCount int32
	// SpreadLevel (rack or host) is set for spread groups.
	SpreadLevel string
}

// Partitions are the partition numbers ("1".."N") a node of the group may
// be launched into: the values of karpenter.k8s.aws/placement-group-partition
// the solver may spread pods over. Nil unless pg is a partition group.
func (pg *PlacementGroup) Partitions() []string {
	if pg == nil || pg.Strategy != StrategyPartition {
		return nil
	}
	out := make([]string, 0, pg.PartitionCount)
	for n := int32(1); n <= pg.PartitionCount; n++ {
		out = append(out, strconv.Itoa(int(n)))
	}
	return out
}

// Supports reports whether an instance type can launch into the group:
// its PlacementGroupInfo lists the group's strategy. Every type fits when
// there is no group.
func Supports(info ec2types.InstanceTypeInfo, pg *PlacementGroup) bool {
	if pg == nil {
		return true
	}
	if info.PlacementGroupInfo == nil {
		return false
	}
	return slices.Contains(info.PlacementGroupInfo.SupportedStrategies, ec2types.PlacementGroupStrategy(pg.Strategy))
}

// Input is the DescribePlacementGroups call a selector asks for: the group
// by ID or by name, available ones only.
func Input(sel *awsv1.PlacementGroupSelector) *ec2.DescribePlacementGroupsInput {
	in := &ec2.DescribePlacementGroupsInput{Filters: []ec2types.Filter{selector.Filter("state", string(ec2types.PlacementGroupStateAvailable))}}
	if sel.ID != "" {
		in.GroupIds = []string{sel.ID}
	} else {
		in.GroupNames = []string{sel.Name}
	}
	return in
}

// Provider resolves selectors with a short cache, and remembers the last
// group each selector resolved to so a failed refresh can keep using it.
// Safe for concurrent use.
type Provider struct {
	ec2   *ec2.Client
	cache *ttlcache.TTL[awsv1.PlacementGroupSelector, *PlacementGroup]

	mu   sync.Mutex
	last map[awsv1.PlacementGroupSelector]*PlacementGroup
}

// New returns a provider whose answers live for ttl.
func New(client *ec2.Client, ttl time.Duration) *Provider {
	return &Provider{ec2: client, cache: ttlcache.New[awsv1.PlacementGroupSelector, *PlacementGroup](ttl), last: map[awsv1.PlacementGroupSelector]*PlacementGroup{}}
}

// Get returns the node class's placement group: nil without a selector or
// when no available group matches it. When EC2 fails, the error comes with
// the group last resolved for the selector, if any.
func (p *Provider) Get(ctx context.Context, nc *awsv1.EC2NodeClass) (*PlacementGroup, error) {
	sel := nc.Spec.PlacementGroupSelector
	if sel == nil {
		return nil, nil
	}
	if pg, ok := p.cache.Get(*sel); ok {
		return pg, nil
	}
	out, err := p.ec2.DescribePlacementGroups(ctx, Input(sel))
	var pg *PlacementGroup
	switch {
	case awserr.IsCode(err, "InvalidPlacementGroup.Unknown"):
		// EC2 answers an unknown name or ID with an error: the selector
		// matches nothing.
	case err != nil:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.last[*sel], fmt.Errorf("describing the placement group of spec.placementGroupSelector: %w", err)
	case len(out.PlacementGroups) > 0:
		g := out.PlacementGroups[0]
		pg = &PlacementGroup{
			ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName), Strategy: string(g.Strategy),
			PartitionCount: aws.ToInt32(g.PartitionCount), SpreadLevel: string(g.SpreadLevel),
		}
	}
	p.cache.Set(*sel, pg)
	p.mu.Lock()
	p.last[*sel] = pg
	p.mu.Unlock()
	return pg, nil
}
