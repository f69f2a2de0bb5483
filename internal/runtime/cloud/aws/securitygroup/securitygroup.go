// Package securitygroup resolves an EC2NodeClass's security group selector
// terms (tags, id, or group name) to security groups.
package securitygroup

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/structhash"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/selector"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ttlcache"
)

// Provider lists security groups with a short cache keyed by the terms.
type Provider struct {
	ec2   *ec2.Client
	cache *ttlcache.TTL[string, []ec2types.SecurityGroup]
}

// New returns a provider whose lists live for ttl (1m by default).
func New(client *ec2.Client, ttl time.Duration) *Provider {
	return &Provider{ec2: client, cache: ttlcache.New[string, []ec2types.SecurityGroup](ttl)}
}

// List returns every security group the node class selects, sorted by ID.
func (p *Provider) List(ctx context.Context, nc *awsv1.EC2NodeClass) ([]ec2types.SecurityGroup, error) {
	key := structhash.Hash(nc.Spec.SecurityGroupSelectorTerms)
	if out, ok := p.cache.Get(key); ok {
		return out, nil
	}
	seen := map[string]ec2types.SecurityGroup{}
	for i, term := range nc.Spec.SecurityGroupSelectorTerms {
		in := &ec2.DescribeSecurityGroupsInput{}
		if term.ID != "" {
			in.Filters = append(in.Filters, selector.Filter("group-id", term.ID))
		}
		if term.Name != "" {
			in.Filters = append(in.Filters, selector.Filter("group-name", term.Name))
		}
		in.Filters = append(in.Filters, selector.TagFilters(term.Tags)...)
		if len(in.Filters) == 0 {
			return nil, fmt.Errorf("spec.securityGroupSelectorTerms[%d] is empty: set id, name or tags", i)
		}
		pager := ec2.NewDescribeSecurityGroupsPaginator(p.ec2, in)
		for pager.HasMorePages() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing security groups for spec.securityGroupSelectorTerms[%d]: %w", i, err)
			}
			for _, g := range page.SecurityGroups {
				seen[aws.ToString(g.GroupId)] = g
			}
		}
	}
	out := make([]ec2types.SecurityGroup, 0, len(seen))
	for _, g := range seen {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return aws.ToString(out[i].GroupId) < aws.ToString(out[j].GroupId) })
	p.cache.Set(key, out)
	return out, nil
}

// Invalidate drops cached lists.
func (p *Provider) Invalidate() { p.cache.Flush() }
