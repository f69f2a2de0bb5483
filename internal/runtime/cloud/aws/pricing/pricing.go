package pricing

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
)

// Provider holds the current prices of one region. Safe for concurrent use.
type Provider struct {
	ec2     *ec2.Client
	pricing *pricing.Client // nil in isolated VPCs
	region  string
	seq     atomic.Uint64

	mu       sync.RWMutex
	onDemand map[string]float64
	spot     map[string]map[string]float64 // type -> zone -> price
	spotAt   map[string]map[string]time.Time
	volumes  map[string]VolumePrice // EBS volume type -> price
}

// New returns a provider seeded with the embedded on-demand prices. pc may be
// nil (isolated VPC), in which case the static table is all there is.
func New(ec2Client *ec2.Client, pc *pricing.Client, region string) *Provider {
	return &Provider{
		ec2: ec2Client, pricing: pc, region: region,
		onDemand: StaticOnDemand(region),
		volumes:  StaticVolumePrices(region),
		spot:     map[string]map[string]float64{},
		spotAt:   map[string]map[string]time.Time{},
	}
}

// Region is the AWS region whose Pricing API endpoint serves a workload
// region: the API lives in only a few regions.
func Region(workload string) string {
	switch {
	case strings.HasPrefix(workload, "cn-"):
		return "cn-northwest-1"
	case strings.HasPrefix(workload, "ap-"):
		return "ap-south-1"
	case strings.HasPrefix(workload, "eu-"):
		return "eu-central-1"
	default:
		return "us-east-1"
	}
}

// SeqNum changes whenever prices change.
func (p *Provider) SeqNum() uint64 { return p.seq.Load() }

// OnDemandPrice is the hourly on-demand price of an instance type.
func (p *Provider) OnDemandPrice(instanceType string) (float64, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	v, ok := p.onDemand[instanceType]
	return v, ok
}

// SpotPrice is the latest hourly spot price of an instance type in a zone.
func (p *Provider) SpotPrice(instanceType, zone string) (float64, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	v, ok := p.spot[instanceType][zone]
	return v, ok
}

// UpdateOnDemandPricing replaces the on-demand prices with the Pricing
// API's Linux, shared-tenancy prices. Without a Pricing client (isolated
// VPC) it keeps the static table.
func (p *Provider) UpdateOnDemandPricing(ctx context.Context) error {
	if p.pricing == nil {
		return nil
	}
	filter := func(field, value string) pricingtypes.Filter {
		return pricingtypes.Filter{Field: aws.String(field), Type: pricingtypes.FilterTypeTermMatch, Value: aws.String(value)}
	}
	in := &pricing.GetProductsInput{
		ServiceCode: aws.String("AmazonEC2"),
		Filters: []pricingtypes.Filter{
			filter("regionCode", p.region),
			filter("operatingSystem", "Linux"),
			filter("tenancy", "Shared"),
			filter("preInstalledSw", "NA"),
			filter("capacitystatus", "Used"),
		},
	}
	prices := map[string]float64{}
	err := p.eachProduct(ctx, in, "on-demand", func(doc string) error {
		name, price, err := parseProduct(doc)
		if name != "" {
			prices[name] = price
		}
		return err
	})
	if err != nil {
		return err
	}
	if len(prices) == 0 {
		return fmt.Errorf("the Pricing API returned no on-demand prices for %s; keeping the previous ones", p.region)
	}
	p.mu.Lock()
	changed := !maps.Equal(p.onDemand, prices)
	// Types the API omits keep their previous (static) price.
	merged := maps.Clone(p.onDemand)
	maps.Copy(merged, prices)
	p.onDemand = merged
	p.mu.Unlock()
	if changed {
		p.seq.Add(1)
	}
	return nil
}

// eachProduct calls fn with every price list document GetProducts returns
// for in, page by page; what names the prices in errors.
func (p *Provider) eachProduct(ctx context.Context, in *pricing.GetProductsInput, what string, fn func(doc string) error) error {
	pager := pricing.NewGetProductsPaginator(p.pricing, in)
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("getting %s prices for %s from the Pricing API: %w", what, p.region, err)
		}
		for _, doc := range page.PriceList {
			if err := fn(doc); err != nil {
				return err
			}
		}
	}
	return nil
}

// product is the part of a Pricing API price list document we read.
type product struct {
	Product struct {
		Attributes map[string]string `json:"attributes"`
	} `json:"product"`
	Terms struct {
		OnDemand map[string]struct {
			PriceDimensions map[string]struct {
				Unit         string            `json:"unit"`
				BeginRange   string            `json:"beginRange"`
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

// parseProduct returns the instance type and hourly USD price of one price
// list document; the name is empty for documents that are not instances.
func parseProduct(doc string) (string, float64, error) {
	var pr product
	if err := json.Unmarshal([]byte(doc), &pr); err != nil {
		return "", 0, fmt.Errorf("parsing a Pricing API price list entry: %w", err)
	}
	name := pr.Product.Attributes["instanceType"]
	if name == "" {
		return "", 0, nil
	}
	for _, term := range pr.Terms.OnDemand {
		for _, dim := range term.PriceDimensions {
			usd, ok := dim.PricePerUnit["USD"]
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(usd, 64)
			if err != nil {
				return "", 0, fmt.Errorf("price of %s: %q is not a number", name, usd)
			}
			if v > 0 {
				return name, v, nil
			}
		}
	}
	return "", 0, nil
}

// UpdateSpotPricing loads the latest spot price of every type and zone.
func (p *Provider) UpdateSpotPricing(ctx context.Context) error {
	prices := map[string]map[string]float64{}
	at := map[string]map[string]time.Time{}
	pager := ec2.NewDescribeSpotPriceHistoryPaginator(p.ec2, &ec2.DescribeSpotPriceHistoryInput{
		ProductDescriptions: []string{"Linux/UNIX", "Linux/UNIX (Amazon VPC)"},
		StartTime:           aws.Time(time.Now()),
	})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("describing spot price history: %w", err)
		}
		for _, sp := range page.SpotPriceHistory {
			addSpot(prices, at, sp)
		}
	}
	if len(prices) == 0 {
		return fmt.Errorf("no spot prices in the history of %s; keeping the previous ones", p.region)
	}
	p.mu.Lock()
	changed := !equalSpot(p.spot, prices)
	p.spot, p.spotAt = prices, at
	p.mu.Unlock()
	if changed {
		p.seq.Add(1)
	}
	return nil
}

// addSpot keeps the newest price of each (type, zone).
func addSpot(prices map[string]map[string]float64, at map[string]map[string]time.Time, sp ec2types.SpotPrice) {
	if sp.AvailabilityZone == nil || sp.SpotPrice == nil {
		return
	}
	v, err := strconv.ParseFloat(*sp.SpotPrice, 64)
	if err != nil {
		return
	}
	t, zone := string(sp.InstanceType), *sp.AvailabilityZone
	ts := aws.ToTime(sp.Timestamp)
	if prices[t] == nil {
		prices[t], at[t] = map[string]float64{}, map[string]time.Time{}
	}
	if prev, ok := at[t][zone]; ok && prev.After(ts) {
		return
	}
	prices[t][zone], at[t][zone] = v, ts
}

func equalSpot(a, b map[string]map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !maps.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
