// Package subnet resolves an EC2NodeClass's subnet selector terms to
// subnets and picks, per zone, the one a launch should use.
package subnet

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/structhash"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/selector"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ttlcache"
)

// Provider lists subnets with a short cache keyed by the selector terms.
type Provider struct {
	ec2   *ec2.Client
	cache *ttlcache.TTL[string, []ec2types.Subnet]
	// lastGood keeps each selection's last successful listing, for launches
	// while DescribeSubnets fails transiently.
	lastGood sync.Map // selector hash -> []ec2types.Subnet

	mu sync.Mutex
	// inflight counts addresses handed to launches not yet reflected in
	// DescribeSubnets, so consecutive launches spread over subnets.
	inflight map[string]int32
}

// New returns a provider whose lists live for refresh (the subnet refresh
// interval, 1m by default).
func New(client *ec2.Client, refresh time.Duration) *Provider {
	return &Provider{ec2: client, cache: ttlcache.New[string, []ec2types.Subnet](refresh), inflight: map[string]int32{}}
}

// StaleWait bounds how long a launch waits on DescribeSubnets (and its
// retries) when a previous listing of the same selection exists; past it,
// or on a transient failure, the launch uses that listing.
const StaleWait = 10 * time.Second

func key(nc *awsv1.EC2NodeClass) string { return structhash.Hash(nc.Spec.SubnetSelectorTerms) }

// List returns the subnets the node class selects, most free addresses first.
func (p *Provider) List(ctx context.Context, nc *awsv1.EC2NodeClass) ([]ec2types.Subnet, error) {
	key := key(nc)
	if out, ok := p.cache.Get(key); ok {
		return out, nil
	}
	terms := make([]selector.Term, len(nc.Spec.SubnetSelectorTerms))
	for i, term := range nc.Spec.SubnetSelectorTerms {
		var filters []ec2types.Filter
		if term.ID != "" {
			filters = append(filters, selector.Filter("subnet-id", term.ID))
		}
		terms[i] = selector.Term{Path: fmt.Sprintf("spec.subnetSelectorTerms[%d]", i), Fields: "id or tags",
			Filters: append(filters, selector.TagFilters(term.Tags)...)}
	}
	seen, err := selector.Union(ctx, "subnets", terms, func(ctx context.Context, filters []ec2types.Filter, add func(string, ec2types.Subnet)) error {
		pager := ec2.NewDescribeSubnetsPaginator(p.ec2, &ec2.DescribeSubnetsInput{Filters: filters})
		for pager.HasMorePages() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				return err
			}
			for _, s := range page.Subnets {
				if s.State == ec2types.SubnetStateAvailable || s.State == "" {
					add(aws.ToString(s.SubnetId), s)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]ec2types.Subnet, 0, len(seen))
	for _, s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := aws.ToInt32(out[i].AvailableIpAddressCount), aws.ToInt32(out[j].AvailableIpAddressCount)
		if a != b {
			return a > b
		}
		return aws.ToString(out[i].SubnetId) < aws.ToString(out[j].SubnetId)
	})
	p.cache.Set(key, out)
	p.lastGood.Store(key, out)
	return out, nil
}

// ZonalSubnets returns, per zone, the selected subnet with the most free
// addresses after subtracting those promised to launches in flight.
// While DescribeSubnets fails transiently or is slow (StaleWait) the last
// listing is used: a throttled or failing describe says nothing about the
// subnets, and a launch should not wait out the SDK's retries.
func (p *Provider) ZonalSubnets(ctx context.Context, nc *awsv1.EC2NodeClass) (map[string]ec2types.Subnet, error) {
	last, haveLast := p.lastGood.Load(key(nc))
	listCtx := ctx
	if haveLast {
		var cancel context.CancelFunc
		listCtx, cancel = context.WithTimeout(ctx, StaleWait)
		defer cancel()
	}
	subnets, err := p.List(listCtx, nc)
	if err != nil {
		if !haveLast || ctx.Err() != nil || !awserr.IsTransient(err) {
			return nil, err
		}
		subnets = last.([]ec2types.Subnet)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]ec2types.Subnet{}
	free := func(s ec2types.Subnet) int32 {
		return aws.ToInt32(s.AvailableIpAddressCount) - p.inflight[aws.ToString(s.SubnetId)]
	}
	for _, s := range subnets {
		zone := aws.ToString(s.AvailabilityZone)
		if cur, ok := out[zone]; !ok || free(s) > free(cur) {
			out[zone] = s
		}
	}
	for zone, s := range out {
		if free(s) <= 0 {
			delete(out, zone)
		}
	}
	return out, nil
}

// Consume records that a launch took an address from the subnet.
func (p *Provider) Consume(subnetID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight[subnetID]++
}

// Invalidate drops cached lists (and in-flight counts, which the next
// DescribeSubnets reflects), e.g. after a subnet ran out of addresses.
func (p *Provider) Invalidate() {
	p.cache.Flush()
	p.mu.Lock()
	clear(p.inflight)
	p.mu.Unlock()
}
