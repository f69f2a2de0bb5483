package ec2

import (
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// instanceTypeAttributes are the DescribeInstanceTypes filters served.
var instanceTypeAttributes = map[string]func(*ec2types.InstanceTypeInfo) []string{
	"instance-type":      func(t *ec2types.InstanceTypeInfo) []string { return []string{string(t.InstanceType)} },
	"current-generation": func(t *ec2types.InstanceTypeInfo) []string { return []string{boolString(deref(t.CurrentGeneration))} },
	"bare-metal":         func(t *ec2types.InstanceTypeInfo) []string { return []string{boolString(deref(t.BareMetal))} },
	"burstable-performance-supported": func(t *ec2types.InstanceTypeInfo) []string {
		return []string{boolString(deref(t.BurstablePerformanceSupported))}
	},
	"free-tier-eligible": func(t *ec2types.InstanceTypeInfo) []string { return []string{boolString(deref(t.FreeTierEligible))} },
	"hibernation-supported": func(t *ec2types.InstanceTypeInfo) []string {
		return []string{boolString(deref(t.HibernationSupported))}
	},
	"instance-storage-supported": func(t *ec2types.InstanceTypeInfo) []string {
		return []string{boolString(deref(t.InstanceStorageSupported))}
	},
	"hypervisor":                    func(t *ec2types.InstanceTypeInfo) []string { return []string{string(t.Hypervisor)} },
	"supported-usage-class":         func(t *ec2types.InstanceTypeInfo) []string { return enumStrings(t.SupportedUsageClasses) },
	"supported-root-device-type":    func(t *ec2types.InstanceTypeInfo) []string { return enumStrings(t.SupportedRootDeviceTypes) },
	"supported-virtualization-type": func(t *ec2types.InstanceTypeInfo) []string { return enumStrings(t.SupportedVirtualizationTypes) },
	"supported-boot-mode":           func(t *ec2types.InstanceTypeInfo) []string { return enumStrings(t.SupportedBootModes) },
	"processor-info.supported-architecture": func(t *ec2types.InstanceTypeInfo) []string {
		return enumStrings(t.ProcessorInfo.SupportedArchitectures)
	},
	"processor-info.manufacturer": func(t *ec2types.InstanceTypeInfo) []string {
		return []string{deref(t.ProcessorInfo.Manufacturer)}
	},
	"vcpu-info.default-vcpus": func(t *ec2types.InstanceTypeInfo) []string {
		return []string{strconv.Itoa(int(deref(t.VCpuInfo.DefaultVCpus)))}
	},
	"memory-info.size-in-mib": func(t *ec2types.InstanceTypeInfo) []string {
		return []string{strconv.FormatInt(deref(t.MemoryInfo.SizeInMiB), 10)}
	},
	"network-info.ena-support": func(t *ec2types.InstanceTypeInfo) []string { return []string{string(t.NetworkInfo.EnaSupport)} },
	"network-info.efa-supported": func(t *ec2types.InstanceTypeInfo) []string {
		return []string{boolString(deref(t.NetworkInfo.EfaSupported))}
	},
	"network-info.maximum-network-interfaces": func(t *ec2types.InstanceTypeInfo) []string {
		return []string{strconv.Itoa(int(deref(t.NetworkInfo.MaximumNetworkInterfaces)))}
	},
	"network-info.ipv6-supported": func(t *ec2types.InstanceTypeInfo) []string {
		return []string{boolString(deref(t.NetworkInfo.Ipv6Supported))}
	},
}

func enumStrings[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// regionTypes is whether any zone of the region offers a type.
func (s *Service) offeredInRegion(name string) bool {
	for _, z := range s.region.Zones {
		if s.catalog.Offered(s.region.Name, z.Name, name) {
			return true
		}
	}
	return false
}

func (s *Service) describeInstanceTypes(in *ec2.DescribeInstanceTypesInput, _ bool) (*ec2.DescribeInstanceTypesOutput, *protocol.Error) {
	for _, n := range in.InstanceTypes {
		if _, ok := s.catalog.InstanceType(string(n)); !ok || !s.offeredInRegion(string(n)) {
			return nil, errorf("InvalidInstanceType", "The following supplied instance types do not exist: [%s]", n)
		}
	}
	names := enumStrings(in.InstanceTypes)
	var found []ec2types.InstanceTypeInfo
	for i := range s.catalog.InstanceTypes() {
		t := &s.catalog.InstanceTypes()[i]
		if !allowed(names, string(t.InstanceType)) || !s.offeredInRegion(string(t.InstanceType)) {
			continue
		}
		ok, err := matches(in.Filters, nil, func(name string) ([]string, bool) {
			f, ok := instanceTypeAttributes[name]
			if !ok {
				return nil, false
			}
			return f(t), true
		})
		if err != nil {
			return nil, err
		}
		if ok {
			found = append(found, *t)
		}
	}
	start, end, next, err := page(len(found), in.MaxResults, in.NextToken, 100)
	if err != nil {
		return nil, err
	}
	return &ec2.DescribeInstanceTypesOutput{InstanceTypes: found[start:end], NextToken: next}, nil
}

func (s *Service) describeInstanceTypeOfferings(in *ec2.DescribeInstanceTypeOfferingsInput, _ bool) (*ec2.DescribeInstanceTypeOfferingsOutput, *protocol.Error) {
	lt := in.LocationType
	if lt == "" {
		lt = ec2types.LocationTypeRegion
	}
	var found []ec2types.InstanceTypeOffering
	add := func(location string, types []string) *protocol.Error {
		for _, t := range types {
			ok, err := matches(in.Filters, nil, func(name string) ([]string, bool) {
				switch name {
				case "location":
					return []string{location}, true
				case "instance-type":
					return []string{t}, true
				}
				return nil, false
			})
			if err != nil {
				return err
			}
			if ok {
				found = append(found, ec2types.InstanceTypeOffering{
					InstanceType: ec2types.InstanceType(t), LocationType: lt, Location: ptr(location),
				})
			}
		}
		return nil
	}
	switch lt {
	case ec2types.LocationTypeRegion:
		set := map[string]bool{}
		for _, z := range s.region.Zones {
			for _, t := range s.catalog.OfferedTypes(s.region.Name, z.Name) {
				set[t] = true
			}
		}
		types := make([]string, 0, len(set))
		for t := range set {
			types = append(types, t)
		}
		sort.Strings(types)
		if err := add(s.region.Name, types); err != nil {
			return nil, err
		}
	case ec2types.LocationTypeAvailabilityZone, ec2types.LocationTypeAvailabilityZoneId:
		for _, z := range s.region.Zones {
			location := z.Name
			if lt == ec2types.LocationTypeAvailabilityZoneId {
				location = z.ID
			}
			if err := add(location, s.catalog.OfferedTypes(s.region.Name, z.Name)); err != nil {
				return nil, err
			}
		}
	case ec2types.LocationTypeOutpost:
		// The simulated region has no Outposts: nothing is offered on one.
	}
	start, end, next, err := page(len(found), in.MaxResults, in.NextToken, 1000)
	if err != nil {
		return nil, err
	}
	return &ec2.DescribeInstanceTypeOfferingsOutput{InstanceTypeOfferings: found[start:end], NextToken: next}, nil
}

// spotPriceTime is the timestamp of every simulated spot price: prices do not
// move, so the history has one entry per pool.
var spotPriceTime = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func (s *Service) describeSpotPriceHistory(in *ec2.DescribeSpotPriceHistoryInput, _ bool) (*ec2.DescribeSpotPriceHistoryOutput, *protocol.Error) {
	types := enumStrings(in.InstanceTypes)
	var found []ec2types.SpotPrice
	for _, z := range s.region.Zones {
		if in.AvailabilityZone != nil && *in.AvailabilityZone != z.Name {
			continue
		}
		for _, t := range s.catalog.OfferedTypes(s.region.Name, z.Name) {
			if !allowed(types, t) {
				continue
			}
			price, ok := s.catalog.SpotPrice(s.region.Name, z.Name, t)
			if !ok {
				continue
			}
			for _, product := range []string{"Linux/UNIX", "Linux/UNIX (Amazon VPC)"} {
				if !allowed(in.ProductDescriptions, product) {
					continue
				}
				if len(in.ProductDescriptions) == 0 && product != "Linux/UNIX" {
					continue
				}
				ok, err := matches(in.Filters, nil, func(name string) ([]string, bool) {
					switch name {
					case "instance-type":
						return []string{t}, true
					case "availability-zone":
						return []string{z.Name}, true
					case "product-description":
						return []string{product}, true
					case "spot-price":
						return []string{strconv.FormatFloat(price, 'f', 6, 64)}, true
					}
					return nil, false
				})
				if err != nil {
					return nil, err
				}
				if ok {
					found = append(found, ec2types.SpotPrice{
						AvailabilityZone: ptr(z.Name), InstanceType: ec2types.InstanceType(t),
						ProductDescription: ec2types.RIProductDescription(product),
						SpotPrice:          ptr(strconv.FormatFloat(price, 'f', 6, 64)), Timestamp: ptr(spotPriceTime),
					})
				}
			}
		}
	}
	start, end, next, err := page(len(found), in.MaxResults, in.NextToken, 1000)
	if err != nil {
		return nil, err
	}
	if next == nil {
		next = ptr("") // EC2 ends spot price history with an empty token
	}
	return &ec2.DescribeSpotPriceHistoryOutput{SpotPriceHistory: found[start:end], NextToken: next}, nil
}
