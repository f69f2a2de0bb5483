package pricing

import (
	"maps"

	"github.com/joistdev/terraform-provider-joist/internal/ec2data"
)

// StaticOnDemand returns the shipped on-demand prices of a region, empty
// for a region the table does not cover.
func StaticOnDemand(region string) map[string]float64 {
	out := maps.Clone(ec2data.OnDemand()[region])
	if out == nil {
		out = map[string]float64{}
	}
	return out
}
