// Package capacityreservation resolves an EC2NodeClass's capacity
// reservation selector terms to active reservations and keeps how many
// instances each still holds between listings, so offerings and launches
// agree on what is left.
package capacityreservation

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/structhash"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/selector"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ttlcache"
)

// ExpiringWithin is how long before its end a capacity block counts as
// expiring: EC2 reclaims its instances at the end, so none is launched
// into it any more.
const ExpiringWithin = 40 * time.Minute

// Provider lists reservations with a short cache keyed by the terms and
// tracks their available instance counts. Safe for concurrent use.
type Provider struct {
	ec2   *ec2.Client
	cache *ttlcache.TTL[string, []ec2types.CapacityReservation]
	now   func() time.Time

	mu        sync.Mutex
	available map[string]int       // reservation ID -> instances left
	blockEnds map[string]time.Time // capacity block ID -> end, as last listed
	seq       uint64
}

// New returns a provider whose listings live for ttl.
func New(client *ec2.Client, ttl time.Duration) *Provider {
	return &Provider{ec2: client, cache: ttlcache.New[string, []ec2types.CapacityReservation](ttl), now: time.Now, available: map[string]int{}, blockEnds: map[string]time.Time{}}
}

// query is one DescribeCapacityReservations call a term asks for.
type query struct {
	path string
	in   *ec2.DescribeCapacityReservationsInput
}

// queries turns the terms into calls: an ID term asks for that reservation
// (with its owner, if given); a tags or instanceMatchCriteria term filters
// (fields within a term ANDed). Only active reservations are selected.
func queries(terms []awsv1.CapacityReservationSelectorTerm) ([]query, error) {
	var out []query
	for i, t := range terms {
		path := fmt.Sprintf("spec.capacityReservationSelectorTerms[%d]", i)
		filters := []ec2types.Filter{selector.Filter("state", string(ec2types.CapacityReservationStateActive))}
		if t.OwnerID != "" {
			filters = append(filters, selector.Filter("owner-id", t.OwnerID))
		}
		if t.InstanceMatchCriteria != "" {
			filters = append(filters, selector.Filter("instance-match-criteria", t.InstanceMatchCriteria))
		}
		filters = append(filters, selector.TagFilters(t.Tags)...)
		in := &ec2.DescribeCapacityReservationsInput{Filters: filters}
		switch {
		case t.ID != "":
			in.CapacityReservationIds = []string{t.ID}
		case len(t.Tags) == 0 && t.InstanceMatchCriteria == "":
			return nil, fmt.Errorf("%s is empty: set id, tags or instanceMatchCriteria", path)
		default:
			in.MaxResults = aws.Int32(1000)
		}
		out = append(out, query{path: path, in: in})
	}
	return out, nil
}

// List returns the active, unexpired reservations the node class selects,
// sorted by ID. A term naming a reservation that does not exist selects
// nothing.
func (p *Provider) List(ctx context.Context, nc *awsv1.EC2NodeClass) ([]ec2types.CapacityReservation, error) {
	return p.ListTerms(ctx, nc.Spec.CapacityReservationSelectorTerms)
}

// ListTerms is List for selector terms of any origin.
func (p *Provider) ListTerms(ctx context.Context, terms []awsv1.CapacityReservationSelectorTerm) ([]ec2types.CapacityReservation, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	key := structhash.Hash(terms)
	if out, ok := p.cache.Get(key); ok {
		return p.unexpired(out), nil
	}
	qs, err := queries(terms)
	if err != nil {
		return nil, err
	}
	seen := map[string]ec2types.CapacityReservation{}
	for _, q := range qs {
		pager := ec2.NewDescribeCapacityReservationsPaginator(p.ec2, q.in)
		for pager.HasMorePages() {
			page, err := pager.NextPage(ctx)
			if awserr.IsCode(err, "InvalidCapacityReservationId.NotFound") {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("describing capacity reservations for %s: %w", q.path, err)
			}
			for _, r := range page.CapacityReservations {
				seen[aws.ToString(r.CapacityReservationId)] = r
			}
		}
	}
	out := make([]ec2types.CapacityReservation, 0, len(seen))
	for _, r := range seen {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		return aws.ToString(out[i].CapacityReservationId) < aws.ToString(out[j].CapacityReservationId)
	})
	p.sync(out)
	p.cache.Set(key, out)
	return p.unexpired(out), nil
}

func (p *Provider) unexpired(in []ec2types.CapacityReservation) []ec2types.CapacityReservation {
	now := p.now()
	var out []ec2types.CapacityReservation
	for _, r := range in {
		if r.EndDate == nil || r.EndDate.After(now) {
			out = append(out, r)
		}
	}
	return out
}

// sync takes EC2's available counts as the truth.
func (p *Provider) sync(rs []ec2types.CapacityReservation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range rs {
		id, n := aws.ToString(r.CapacityReservationId), int(aws.ToInt32(r.AvailableInstanceCount))
		if have, ok := p.available[id]; !ok || have != n {
			p.available[id] = n
			p.seq++
		}
		if r.ReservationType == ec2types.CapacityReservationTypeCapacityBlock && r.EndDate != nil && !p.blockEnds[id].Equal(*r.EndDate) {
			p.blockEnds[id] = *r.EndDate
			p.seq++
		}
	}
}

// Available is how many more instances the reservation holds, as last
// listed less the launches since; false when it was never listed.
func (p *Provider) Available(id string) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, ok := p.available[id]
	return n, ok
}

// Expiring reports whether the reservation is a capacity block within
// ExpiringWithin of its end, by its latest listing: a block's end can move
// (an extension, or an end brought forward) after a node class's status
// recorded it.
func (p *Provider) Expiring(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	end, ok := p.blockEnds[id]
	return ok && end.Sub(p.now()) <= ExpiringWithin
}

// MarkLaunched counts an instance launched into the reservation.
func (p *Provider) MarkLaunched(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n, ok := p.available[id]; ok && n > 0 {
		p.available[id] = n - 1
		p.seq++
	}
}

// MarkFull records that EC2 refused a launch into the reservation for want
// of capacity, until the next listing says otherwise.
func (p *Provider) MarkFull(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.available[id] != 0 {
		p.available[id] = 0
		p.seq++
	}
}

// SeqNum changes whenever an available count does.
func (p *Provider) SeqNum() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seq
}

// Invalidate drops cached listings.
func (p *Provider) Invalidate() { p.cache.Flush() }

// Status is a reservation as EC2NodeClass status lists it. A capacity
// block within ExpiringWithin of its end is expiring.
func Status(r ec2types.CapacityReservation, now time.Time) (awsv1.CapacityReservation, error) {
	id := aws.ToString(r.CapacityReservationId)
	out := awsv1.CapacityReservation{
		ID: id, AvailabilityZone: aws.ToString(r.AvailabilityZone), InstanceType: aws.ToString(r.InstanceType),
		OwnerID: aws.ToString(r.OwnerId), InstanceMatchCriteria: string(r.InstanceMatchCriteria),
		ReservationType: awsv1.CapacityReservationTypeDefault, State: awsv1.CapacityReservationStateActive,
		Interruptible: aws.ToBool(r.Interruptible),
	}
	switch r.ReservationType {
	case "", ec2types.CapacityReservationTypeDefault:
	case ec2types.CapacityReservationTypeCapacityBlock:
		out.ReservationType = awsv1.CapacityReservationTypeCapacityBlock
	default:
		return awsv1.CapacityReservation{}, fmt.Errorf("capacity reservation %s has reservation type %q, which is not supported", id, r.ReservationType)
	}
	if r.EndDate != nil {
		end := metav1.NewTime(*r.EndDate)
		out.EndTime = &end
		if out.ReservationType == awsv1.CapacityReservationTypeCapacityBlock && r.EndDate.Sub(now) <= ExpiringWithin {
			out.State = awsv1.CapacityReservationStateExpiring
		}
	}
	return out, nil
}
