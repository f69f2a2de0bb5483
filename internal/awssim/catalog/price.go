package catalog

import (
	"hash/fnv"
	"math"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// defaultSpotDiscount is applied to types the Spot Instance Advisor has no
// estimate for; 60% is close to the advisor's median saving.
const defaultSpotDiscount = 0.6

// SpotPrice is the simulated spot price of a type in a zone: the advisor's
// estimate moved by up to ±10% by a hash of (type, zone), so zones differ the
// way real spot pools do, yet every run sees the same numbers. Types that
// cannot run as spot have no spot price.
func (c *Catalog) SpotPrice(region, zone, instanceType string) (float64, bool) {
	t, ok := c.byName[instanceType]
	if !ok || !supports(t, ec2types.UsageClassTypeSpot) {
		return 0, false
	}
	base := 0.0
	if s, ok := c.spot[region][instanceType]; ok && s.EstimatedSpotPrice > 0 {
		base = s.EstimatedSpotPrice
	} else if od, ok := c.onDemand[region][instanceType]; ok {
		base = od * (1 - defaultSpotDiscount)
	} else {
		return 0, false
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(instanceType + "/" + zone))
	factor := 0.9 + 0.2*float64(h.Sum32()%1000)/999
	return math.Round(base*factor*1e5) / 1e5, true
}

func supports(t *ec2types.InstanceTypeInfo, class ec2types.UsageClassType) bool {
	for _, c := range t.SupportedUsageClasses {
		if c == class {
			return true
		}
	}
	return false
}

// ENILimitedMaxPods is the pod limit EKS nodes derive from the default network
// card: ENIs × (IPv4 addresses per ENI − 1) + 2.
func ENILimitedMaxPods(t *ec2types.InstanceTypeInfo) int32 {
	n := t.NetworkInfo
	if n == nil || n.Ipv4AddressesPerInterface == nil {
		return 110
	}
	enis := int32(0)
	if n.MaximumNetworkInterfaces != nil {
		enis = *n.MaximumNetworkInterfaces
	}
	if n.DefaultNetworkCardIndex != nil {
		for _, card := range n.NetworkCards {
			if card.NetworkCardIndex != nil && *card.NetworkCardIndex == *n.DefaultNetworkCardIndex && card.MaximumNetworkInterfaces != nil {
				enis = *card.MaximumNetworkInterfaces
			}
		}
	}
	return enis*(*n.Ipv4AddressesPerInterface-1) + 2
}
