// Package catalog is the simulated EC2 world's fixed data: the instance types
// (real DescribeInstanceTypes records), which zones offer them, their Linux
// on-demand prices and spot price estimates, EBS volume prices, and the
// regions' zones. The data
// is embedded (see data/README.md for its origin) and parsed once on first use.
package catalog

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/ec2data"
)

//go:embed data/*.json data/*.json.gz
var files embed.FS

// Catalog is the parsed instance data. Its values are shared: callers must
// not modify what it returns.
type Catalog struct {
	types     []ec2types.InstanceTypeInfo
	byName    map[string]*ec2types.InstanceTypeInfo
	onDemand  map[string]map[string]float64         // region -> type -> USD/hour
	offerings map[string]map[string]map[string]bool // region -> zone -> type -> offered
	spot      map[string]map[string]SpotEstimate    // region -> type -> estimate
	ebs       map[string]map[string]VolumePrice     // region -> volume type -> price
	vpc       map[string]VPCLimits                  // type -> VPC resource controller limits
	memory    map[string]int64                      // type -> MiB its nodes do not see
}

// VPCLimits is what the VPC resource controller knows of a type.
type VPCLimits struct {
	// BranchInterfaces are the pod ENIs a trunking-compatible type
	// advertises (vpc.amazonaws.com/pod-eni); 0 when it cannot trunk.
	BranchInterfaces int64 `json:"branchInterfaces"`
}

// VolumePrice is the list price of an EBS volume type: per GB-month of
// size, per provisioned IOPS-month and per provisioned MiB/s-month beyond
// what the type includes.
type VolumePrice struct {
	GBMonth       float64 `json:"gbMonth"`
	IOPSMonth     float64 `json:"iopsMonth,omitempty"`
	IncludedIOPS  int64   `json:"includedIOPS,omitempty"`
	MiBpsMonth    float64 `json:"mibpsMonth,omitempty"`
	IncludedMiBps int64   `json:"includedMiBps,omitempty"`
}

// SpotEstimate is the Spot Instance Advisor view of a type in a region.
type SpotEstimate struct {
	EstimatedSpotPrice     float64 `json:"estimatedSpotPrice"`
	InterruptionFrequency  string  `json:"interruptionFrequency"`
	SavingsOverOnDemandPct float64 `json:"savingsOverOnDemandPct"`
}

var (
	loadOnce sync.Once
	loaded   *Catalog
	loadErr  error
)

// Load returns the embedded catalog, parsing it on first use.
func Load() (*Catalog, error) {
	loadOnce.Do(func() { loaded, loadErr = parse() })
	return loaded, loadErr
}

// MustLoad is Load for callers that treat a corrupt embedded catalog as a build defect.
func MustLoad() *Catalog {
	c, err := Load()
	if err != nil {
		panic(err)
	}
	return c
}

func parse() (*Catalog, error) {
	c := &Catalog{byName: map[string]*ec2types.InstanceTypeInfo{}}
	var offerings map[string]map[string][]string
	for _, f := range []struct {
		name string
		into any
	}{
		{"data/instance_types.json.gz", &c.types},
		{"data/offerings.json", &offerings},
		{"data/spot_price_estimates.json.gz", &c.spot},
		{"data/memory_overhead.json", &c.memory},
	} {
		if err := readJSON(f.name, f.into); err != nil {
			return nil, err
		}
	}
	// The prices and VPC limits are the ones the product ships.
	c.onDemand = ec2data.OnDemand()
	if err := json.Unmarshal(ec2data.EBSPricesJSON, &c.ebs); err != nil {
		return nil, fmt.Errorf("catalog: EBS prices: %w", err)
	}
	c.vpc = map[string]VPCLimits{}
	for name, l := range ec2data.VPCLimits() {
		c.vpc[name] = VPCLimits{BranchInterfaces: l.BranchInterfaces}
	}
	for i := range c.types {
		c.byName[string(c.types[i].InstanceType)] = &c.types[i]
	}
	c.offerings = map[string]map[string]map[string]bool{}
	for region, zones := range offerings {
		c.offerings[region] = map[string]map[string]bool{}
		for zone, names := range zones {
			set := make(map[string]bool, len(names))
			for _, n := range names {
				set[n] = true
			}
			c.offerings[region][zone] = set
		}
	}
	return c, nil
}

func readJSON(name string, into any) error {
	b, err := files.ReadFile(name)
	if err != nil {
		return err
	}
	var r io.Reader = bytes.NewReader(b)
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		if r, err = gzip.NewReader(r); err != nil {
			return fmt.Errorf("catalog %s: %w", name, err)
		}
	}
	if err := json.NewDecoder(r).Decode(into); err != nil {
		return fmt.Errorf("catalog %s: %w", name, err)
	}
	return nil
}

// Memory a node does not see, for a type never measured: a fit of the
// measured types' overhead (within 1.6% of the memory for nine in ten).
const (
	memoryOverheadBaseMiB = 78
	memoryOverheadShare   = 0.032
)

// NodeMemoryMiB is the memory a node of the type reports to Kubernetes as
// its capacity: the type's memory less what the hypervisor, firmware and
// kernel keep, as measured on launched instances, or estimated for a type
// without a measurement.
func (c *Catalog) NodeMemoryMiB(name string) (int64, bool) {
	t, ok := c.byName[name]
	if !ok || t.MemoryInfo == nil || t.MemoryInfo.SizeInMiB == nil {
		return 0, false
	}
	mem := *t.MemoryInfo.SizeInMiB
	overhead, measured := c.memory[name]
	if !measured {
		overhead = memoryOverheadBaseMiB + int64(memoryOverheadShare*float64(mem))
	}
	return mem - overhead, true
}

// InstanceTypes returns every instance type, sorted by name.
func (c *Catalog) InstanceTypes() []ec2types.InstanceTypeInfo { return c.types }

// InstanceType returns one instance type by name.
func (c *Catalog) InstanceType(name string) (*ec2types.InstanceTypeInfo, bool) {
	t, ok := c.byName[name]
	return t, ok
}

// Offered reports whether zone (a zone name) of region offers the type.
func (c *Catalog) Offered(region, zone, instanceType string) bool {
	return c.offerings[region][zone][instanceType]
}

// OfferedTypes returns the types a zone offers, sorted.
func (c *Catalog) OfferedTypes(region, zone string) []string {
	out := make([]string, 0, len(c.offerings[region][zone]))
	for t := range c.offerings[region][zone] {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// VolumePrices returns the EBS volume prices of a region by volume type
// (gp3, gp2, io1, io2, st1, sc1, standard).
func (c *Catalog) VolumePrices(region string) map[string]VolumePrice { return c.ebs[region] }

// OnDemandPrice is the Linux on-demand USD/hour of a type in a region.
func (c *Catalog) OnDemandPrice(region, instanceType string) (float64, bool) {
	p, ok := c.onDemand[region][instanceType]
	return p, ok
}

// VPC returns the VPC resource controller's limits of a type.
func (c *Catalog) VPC(instanceType string) (VPCLimits, bool) {
	l, ok := c.vpc[instanceType]
	return l, ok
}

// Spot returns the Spot Instance Advisor estimate of a type in a region.
func (c *Catalog) Spot(region, instanceType string) (SpotEstimate, bool) {
	s, ok := c.spot[region][instanceType]
	return s, ok
}
