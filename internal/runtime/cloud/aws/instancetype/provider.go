package instancetype

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/structhash"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/cache"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/placementgroup"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/pricing"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ttlcache"
)

// DefaultRefresh is how long discovered types and offerings are reused
// before DescribeInstanceTypes and DescribeInstanceTypeOfferings run again:
// 12 hours, as Karpenter. EC2 adds types and zones rarely, and a refresh is
// a dozen or more paginated calls; what changes often (prices, capacity
// errors, reservations) has caches of its own.
const DefaultRefresh = 12 * time.Hour

// resultsTTL drops a node class's computed types once no List has asked for
// them this long (the node class changed or went).
const resultsTTL = 5 * time.Minute

// Options are the provider-wide settings that change capacity.
type Options struct {
	Region                  string
	VMMemoryOverheadPercent float64
	ReservedENIs            int
	Refresh                 time.Duration // default DefaultRefresh
	// Reservations counts the instances left in capacity reservations;
	// nil lists no reserved offerings.
	Reservations Reservations
	// PlacementGroups resolves node classes' placement groups; nil
	// resolves none.
	PlacementGroups PlacementGroups
}

// PlacementGroups is what listing needs of placement groups.
type PlacementGroups interface {
	// Get returns the node class's group, nil without one; on error, the
	// group it last resolved to, if any.
	Get(ctx context.Context, nc *awsv1.EC2NodeClass) (*placementgroup.PlacementGroup, error)
}

// Reservations is what offerings need of the capacity reservations.
type Reservations interface {
	// Available is how many more instances the reservation holds; false
	// when it is not known.
	Available(id string) (int, bool)
	// Expiring reports whether the reservation is a capacity block near
	// its end by its latest listing.
	Expiring(id string) bool
	// SeqNum changes whenever an available count or a block's end does.
	SeqNum() uint64
}

// Provider lists instance types per node class. Safe for concurrent use.
type Provider struct {
	ec2         *ec2.Client
	pricing     *pricing.Provider
	unavailable *cache.UnavailableOfferings
	opts        Options

	// refreshing serializes refreshes of a stale catalog.
	refreshing sync.Mutex

	mu        sync.RWMutex
	infos     map[string]ec2types.InstanceTypeInfo
	zones     map[string][]string // type -> zones offering it
	fetchedAt time.Time
	seq       uint64

	results *ttlcache.TTL[string, listed]
}

// New returns a provider; nothing is fetched until the first List.
func New(client *ec2.Client, prices *pricing.Provider, unavailable *cache.UnavailableOfferings, opts Options) *Provider {
	if opts.Refresh == 0 {
		opts.Refresh = DefaultRefresh
	}
	return &Provider{ec2: client, pricing: prices, unavailable: unavailable, opts: opts,
		results: ttlcache.New[string, listed](resultsTTL)}
}

// NewFromConfig is a provider of its own, reading EC2 and the Pricing API
// with cfg, with no offering marked unavailable: for callers outside the
// runtime, such as the joist_instance_types data source.
func NewFromConfig(cfg aws.Config) *Provider {
	return NewFromConfigWith(cfg, Options{})
}

// NewFromConfigWith is NewFromConfig with the controller's capacity
// options (VMMemoryOverheadPercent, ReservedENIs), so allocatable is what
// the deployed controller computes; the region is cfg's.
func NewFromConfigWith(cfg aws.Config, opts Options) *Provider {
	client := ec2.NewFromConfig(cfg)
	prices := pricing.New(client, awspricing.NewFromConfig(cfg, func(o *awspricing.Options) { o.Region = pricing.Region(cfg.Region) }), cfg.Region)
	opts.Region = cfg.Region
	return New(client, prices, cache.NewUnavailableOfferings(), opts)
}

// Prices are the prices offerings are listed with; UpdateOnDemandPricing
// and UpdateSpotPricing refresh them.
func (p *Provider) Prices() *pricing.Provider { return p.pricing }

// Catalog lists every discovered type with its labels under os and its
// priced offerings in every zone that offers it: what could be launched
// before a node class narrows it (subnets' zones, AMIs). Capacity is not
// computed: it depends on the node class.
func (p *Provider) Catalog(ctx context.Context, os string) ([]*scheduling.InstanceType, error) {
	if err := p.ensureFresh(ctx); err != nil {
		return nil, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]*scheduling.InstanceType, 0, len(p.infos))
	choices := labelChoices(nil)
	for _, name := range slices.Sorted(maps.Keys(p.infos)) {
		info := p.infos[name]
		if offerings := p.offerings(info, p.zones[name], ""); len(offerings) > 0 {
			out = append(out, &scheduling.InstanceType{Name: name, Labels: Labels(info, p.opts.Region, os), Offerings: offerings, LabelChoices: choices})
		}
	}
	return out, nil
}

// Info returns the EC2 description of a discovered type.
func (p *Provider) Info(name string) (ec2types.InstanceTypeInfo, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	info, ok := p.infos[name]
	return info, ok
}

// Refresh re-reads instance types and zonal offerings from EC2.
func (p *Provider) Refresh(ctx context.Context) error {
	infos := map[string]ec2types.InstanceTypeInfo{}
	typesPager := ec2.NewDescribeInstanceTypesPaginator(p.ec2, &ec2.DescribeInstanceTypesInput{
		Filters: []ec2types.Filter{{Name: aws.String("supported-virtualization-type"), Values: []string{"hvm"}}},
	})
	for typesPager.HasMorePages() {
		page, err := typesPager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("describing instance types: %w", err)
		}
		for _, info := range page.InstanceTypes {
			if Arch(info) == "" {
				continue
			}
			infos[string(info.InstanceType)] = info
		}
	}
	zones := map[string][]string{}
	offPager := ec2.NewDescribeInstanceTypeOfferingsPaginator(p.ec2, &ec2.DescribeInstanceTypeOfferingsInput{
		LocationType: ec2types.LocationTypeAvailabilityZone,
	})
	for offPager.HasMorePages() {
		page, err := offPager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("describing instance type offerings: %w", err)
		}
		for _, o := range page.InstanceTypeOfferings {
			t := string(o.InstanceType)
			zones[t] = append(zones[t], aws.ToString(o.Location))
		}
	}
	for t := range zones {
		sort.Strings(zones[t])
	}
	p.mu.Lock()
	p.infos, p.zones, p.fetchedAt = infos, zones, time.Now()
	p.seq++
	p.mu.Unlock()
	p.results.Flush()
	return nil
}

func (p *Provider) stale() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.infos == nil || time.Since(p.fetchedAt) > p.opts.Refresh
}

// ensureFresh refreshes a stale catalog once: callers that find it stale
// together wait for one refresh instead of each describing the whole
// catalog (at 2,000 nodes that was hundreds of concurrent refreshes).
func (p *Provider) ensureFresh(ctx context.Context) error {
	if !p.stale() {
		return nil
	}
	p.refreshing.Lock()
	defer p.refreshing.Unlock()
	if !p.stale() {
		return nil
	}
	return p.Refresh(ctx)
}

// List returns the types the node class can launch into the given zones (its
// subnets' zones), with every offering, available or not. Types without an
// AMI among the node class's resolved AMIs, types that cannot take its
// network interfaces, and types that do not support its placement group's
// strategy are left out; with a placement group, every type carries its ID
// as the karpenter.k8s.aws/placement-group-id label.
func (p *Provider) List(ctx context.Context, nc *awsv1.EC2NodeClass, zones []string) ([]*scheduling.InstanceType, error) {
	if err := p.ensureFresh(ctx); err != nil {
		return nil, err
	}
	p.mu.RLock()
	seq := p.seq
	p.mu.RUnlock()
	var pg *placementgroup.PlacementGroup
	if p.opts.PlacementGroups != nil {
		// A failed refresh keeps the group last resolved; the node class's
		// PlacementGroupReady condition reports the failure.
		pg, _ = p.opts.PlacementGroups.Get(ctx, nc)
	}
	zones = slices.Clone(zones)
	slices.Sort(zones)
	// One entry per node class configuration, tagged with the generation of
	// the catalog, prices and unavailable offerings it was computed from: a
	// new generation replaces the entry instead of adding one, so the cache
	// holds one copy of the types per node class, not one per change.
	gen := fmt.Sprintf("%d/%d/%d", seq, p.pricing.SeqNum(), p.unavailable.SeqNum())
	if p.opts.Reservations != nil {
		gen += fmt.Sprintf("/%d", p.opts.Reservations.SeqNum())
	}
	key := structhash.Hash(struct {
		Name    string
		Family  string
		Kubelet string
		BDMs    []*awsv1.BlockDeviceMapping
		Store   *awsv1.InstanceStorePolicy
		AMIs    []awsv1.AMI
		Zones   string
		CRs     []awsv1.CapacityReservation
		NIs     []awsv1.NetworkInterface
		PG      *placementgroup.PlacementGroup
		// What FitsLaunchOptions reads.
		Enclave   *awsv1.EnclaveOptions
		CPU       *awsv1.CPUOptions
		ConnTrack bool
	}{nc.Name, nc.AMIFamily(), nc.Spec.Kubelet.String(), nc.Spec.BlockDeviceMappings, nc.Spec.InstanceStorePolicy, nc.Status.AMIs, strings.Join(zones, ","), nc.Status.CapacityReservations, nc.Spec.NetworkInterfaces, pg,
		nc.Spec.EnclaveOptions, nc.Spec.CPUOptions, nc.Spec.ConnectionTracking != nil})
	if r, ok := p.results.Get(key); ok && r.gen == gen {
		return r.types, nil
	}
	out, err := p.compute(nc, zones, pg)
	if err != nil {
		return nil, err
	}
	p.results.Set(key, listed{gen: gen, types: out})
	return out, nil
}

// labelChoices are the label choices of every type: either tenancy, and in
// a partition group any partition. The types share the (read-only) map.
func labelChoices(pg *placementgroup.PlacementGroup) map[string][]string {
	choices := map[string][]string{v1.LabelInstanceTenancy: Tenancies}
	if parts := pg.Partitions(); len(parts) > 0 {
		choices[v1.LabelPlacementGroupPartition] = parts
	}
	return choices
}

// listed is a List result and the generation it was computed from.
type listed struct {
	gen   string
	types []*scheduling.InstanceType
}

func (p *Provider) compute(nc *awsv1.EC2NodeClass, zones []string, pg *placementgroup.PlacementGroup) ([]*scheduling.InstanceType, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	family := nc.AMIFamily()
	volumes := VolumeCost(nc, p.pricing)
	names := make([]string, 0, len(p.infos))
	for n := range p.infos {
		names = append(names, n)
	}
	sort.Strings(names)
	choices := labelChoices(pg)
	out := make([]*scheduling.InstanceType, 0, len(names))
	for _, name := range names {
		info := p.infos[name]
		if !FitsNetworkInterfaces(info, nc.Spec.NetworkInterfaces) || !FitsLaunchOptions(info, nc.Spec) || !placementgroup.Supports(info, pg) ||
			!awsv1.FamilyRunsOn(family, name) {
			continue
		}
		labels := LabelsFor(info, p.opts.Region, family)
		if pg != nil {
			labels[v1.LabelPlacementGroupID] = pg.ID
		}
		if labels[corev1.LabelOSStable] == string(corev1.Windows) && labels[corev1.LabelArchStable] != v1.ArchitectureAmd64 {
			continue // Windows Server runs on x86_64 only
		}
		labels[v1.LabelNodeClass] = nc.Name
		if _, ok := awsv1.AMIForLabels(nc.Status.AMIs, labels); !ok {
			continue
		}
		pgID := ""
		if pg != nil {
			pgID = pg.ID
		}
		offerings := append(p.offerings(info, zones, pgID), p.reservedOfferings(name, nc.Status.CapacityReservations, zones)...)
		if len(offerings) == 0 {
			continue
		}
		// Every node of the class pays for its volumes besides the instance.
		for i := range offerings {
			offerings[i].Price += volumes
		}
		res, err := Resources(info, nc, p.opts.VMMemoryOverheadPercent, p.opts.ReservedENIs)
		if err != nil {
			return nil, err
		}
		out = append(out, &scheduling.InstanceType{
			Name: name, Labels: labels, Capacity: res.Capacity, Allocatable: res.Allocatable, Offerings: offerings,
			BaselineCPU: BaselineCPU(info), LabelChoices: choices,
		})
	}
	return out, nil
}

// offerings lists (zone, capacity type) pools with a known price; those
// that recently failed to launch, for every launch or for launches into
// placement group pgID, are not available.
func (p *Provider) offerings(info ec2types.InstanceTypeInfo, zones []string, pgID string) []scheduling.Offering {
	name := string(info.InstanceType)
	var out []scheduling.Offering
	for _, zone := range p.zones[name] {
		if !slices.Contains(zones, zone) {
			continue
		}
		for _, class := range info.SupportedUsageClasses {
			var ct string
			var price float64
			var ok bool
			switch class {
			case ec2types.UsageClassTypeOnDemand:
				ct = v1.CapacityTypeOnDemand
				price, ok = p.pricing.OnDemandPrice(name)
			case ec2types.UsageClassTypeSpot:
				ct = v1.CapacityTypeSpot
				price, ok = p.pricing.SpotPrice(name, zone)
			}
			if !ok {
				continue
			}
			out = append(out, scheduling.Offering{
				Zone: zone, CapacityType: ct, Price: price,
				Available: !p.unavailable.IsUnavailableIn(pgID, name, zone, ct),
			})
		}
	}
	return out
}

// ReservedPriceDivisor makes a reserved offering's price a tiny fraction of
// the type's on-demand price: the reservation is paid for whether used or
// not, so launching into it is all but free, yet cheaper types stay
// preferred among reservations.
const ReservedPriceDivisor = 10_000_000

// reservedOfferings are type name's offerings in the node class's capacity
// reservations that lie in zones: capacity type reserved, priced near zero,
// with the instances each reservation has left. An expiring reservation or
// one EC2 refused for want of capacity is not available.
func (p *Provider) reservedOfferings(name string, crs []awsv1.CapacityReservation, zones []string) []scheduling.Offering {
	if p.opts.Reservations == nil {
		return nil
	}
	var out []scheduling.Offering
	for _, cr := range crs {
		if cr.InstanceType != name || !slices.Contains(zones, cr.AvailabilityZone) {
			continue
		}
		od, ok := p.pricing.OnDemandPrice(name)
		if !ok {
			continue
		}
		left, known := p.opts.Reservations.Available(cr.ID)
		out = append(out, scheduling.Offering{
			Zone: cr.AvailabilityZone, CapacityType: v1.CapacityTypeReserved, Price: od / ReservedPriceDivisor,
			Available:     known && cr.State != awsv1.CapacityReservationStateExpiring && !p.opts.Reservations.Expiring(cr.ID),
			ReservationID: cr.ID, ReservationCapacity: left,
			ReservationType: string(cr.ReservationType), ReservationInterruptible: cr.Interruptible,
		})
	}
	return out
}

// Zones are the zones of the node class's resolved subnets, with their IDs:
// the zones List offers a node class in.
func Zones(nc *awsv1.EC2NodeClass) (names []string, ids map[string]string) {
	ids = map[string]string{}
	for _, s := range nc.Status.Subnets {
		if _, seen := ids[s.Zone]; !seen {
			names = append(names, s.Zone)
		}
		ids[s.Zone] = s.ZoneID
	}
	return names, ids
}
