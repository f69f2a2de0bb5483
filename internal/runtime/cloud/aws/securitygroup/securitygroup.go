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
	terms := make([]selector.Term, len(nc.Spec.SecurityGroupSelectorTerms))
	for i, term := range nc.Spec.SecurityGroupSelectorTerms {
		var filters []ec2types.Filter
		if term.ID != "" {
			filters = append(filters, selector.Filter("group-id", term.ID))
		}
		if term.Name != "" {
			filters = append(filters, selector.Filter("group-name", term.Name))
		}
		terms[i] = selector.Term{Path: fmt.Sprintf("spec.securityGroupSelectorTerms[%d]", i), Fields: "id, name or tags",
			Filters: append(filters, selector.TagFilters(term.Tags)...)}
	}
	seen, err := selector.Union(ctx, "security groups", terms, func(ctx context.Context, filters []ec2types.Filter, add func(string, ec2types.SecurityGroup)) error {
		pager := ec2.NewDescribeSecurityGroupsPaginator(p.ec2, &ec2.DescribeSecurityGroupsInput{Filters: filters})
		for pager.HasMorePages() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				return err
			}
			for _, g := range page.SecurityGroups {
				add(aws.ToString(g.GroupId), g)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
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
