package pricing

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"

	"github.com/joistdev/terraform-provider-joist/internal/ec2data"
)

// HoursPerMonth turns EBS's monthly prices into hourly ones: AWS prorates
// a GB-month over the month's hours and prices a month at 730 of them.
const HoursPerMonth = 730

// VolumePrice is what an EBS volume type costs: per GB-month of size, per
// provisioned IOPS-month and per provisioned MiB/s-month beyond what the
// type includes (gp3: 3,000 IOPS and 125 MiB/s).
type VolumePrice struct {
	GBMonth       float64 `json:"gbMonth"`
	IOPSMonth     float64 `json:"iopsMonth,omitempty"`
	IncludedIOPS  int64   `json:"includedIOPS,omitempty"`
	MiBpsMonth    float64 `json:"mibpsMonth,omitempty"`
	IncludedMiBps int64   `json:"includedMiBps,omitempty"`
}

// Hourly is the cost per hour of one volume of this type: sizeGiB, with
// iops and throughput (MiB/s) provisioned (0: the type's default).
func (v VolumePrice) Hourly(sizeGiB float64, iops, throughput int64) float64 {
	month := v.GBMonth * sizeGiB
	if iops > v.IncludedIOPS {
		month += v.IOPSMonth * float64(iops-v.IncludedIOPS)
	}
	if throughput > v.IncludedMiBps {
		month += v.MiBpsMonth * float64(throughput-v.IncludedMiBps)
	}
	return month / HoursPerMonth
}

// StaticVolumePrices returns the shipped EBS prices of a region by volume
// type, empty for a region the table does not cover.
func StaticVolumePrices(region string) map[string]VolumePrice {
	var all map[string]map[string]VolumePrice
	if err := json.Unmarshal(ec2data.EBSPricesJSON, &all); err != nil {
		return map[string]VolumePrice{}
	}
	if out := all[region]; out != nil {
		return out
	}
	return map[string]VolumePrice{}
}

// VolumePrice is the current price of an EBS volume type (gp3, gp2, io1,
// io2, st1, sc1, standard).
func (p *Provider) VolumePrice(volumeType string) (VolumePrice, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	v, ok := p.volumes[volumeType]
	return v, ok
}

// UpdateVolumePricing reads the region's EBS prices (size, provisioned
// IOPS, provisioned throughput of every volume type) from the Pricing API
// in one query. What the types include (gp3's 3,000 IOPS) is not in the
// price list and stays as the embedded table has it.
func (p *Provider) UpdateVolumePricing(ctx context.Context) error {
	if p.pricing == nil {
		return nil
	}
	in := &pricing.GetProductsInput{
		ServiceCode: aws.String("AmazonEC2"),
		Filters: []pricingtypes.Filter{
			{Field: aws.String("regionCode"), Type: pricingtypes.FilterTypeTermMatch, Value: aws.String(p.region)},
			{Field: aws.String("productFamily"), Type: pricingtypes.FilterTypeAnyOf, Value: aws.String("Storage,System Operation,Provisioned Throughput")},
		},
	}
	p.mu.RLock()
	prices := maps.Clone(p.volumes)
	p.mu.RUnlock()
	found := 0
	err := p.eachProduct(ctx, in, "EBS", func(doc string) error {
		ok, err := addVolumePrice(prices, doc)
		if ok {
			found++
		}
		return err
	})
	if err != nil {
		return err
	}
	if found == 0 {
		return fmt.Errorf("the Pricing API returned no EBS prices for %s; keeping the previous ones", p.region)
	}
	p.mu.Lock()
	changed := !maps.Equal(p.volumes, prices)
	p.volumes = prices
	p.mu.Unlock()
	if changed {
		p.seq.Add(1)
	}
	return nil
}

// addVolumePrice records one price list document's EBS price and reports
// whether it was one.
func addVolumePrice(prices map[string]VolumePrice, doc string) (bool, error) {
	var pr product
	if err := json.Unmarshal([]byte(doc), &pr); err != nil {
		return false, fmt.Errorf("parsing a Pricing API price list entry: %w", err)
	}
	api := pr.Product.Attributes["volumeApiName"]
	if api == "" {
		return false, nil
	}
	for _, term := range pr.Terms.OnDemand {
		for _, dim := range term.PriceDimensions {
			usd, ok := dim.PricePerUnit["USD"]
			// Tiered prices (io2's IOPS) list a dimension per tier: the
			// first tier is what a node's volume pays.
			if !ok || (dim.BeginRange != "" && dim.BeginRange != "0") {
				continue
			}
			v, err := strconv.ParseFloat(usd, 64)
			if err != nil {
				return false, fmt.Errorf("EBS price of %s: %q is not a number", api, usd)
			}
			vp := prices[api]
			switch dim.Unit {
			case "GB-Mo", "GB-month":
				vp.GBMonth = v
			case "IOPS-Mo":
				vp.IOPSMonth = v
			case "MiBps-Mo", "MiBps-mo":
				vp.MiBpsMonth = v
			case "GiBps-mo", "GiBps-Mo":
				vp.MiBpsMonth = v / 1024
			default:
				continue
			}
			prices[api] = vp
			return true, nil
		}
	}
	return false, nil
}
