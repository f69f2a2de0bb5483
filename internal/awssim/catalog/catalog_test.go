package catalog

import (
	"testing"
)

func TestCatalogLoadsRealData(t *testing.T) {
	c := MustLoad()
	if got := len(c.InstanceTypes()); got != 1373 {
		t.Fatalf("instance types = %d, want the 1,373 records of the data file", got)
	}
	m5, ok := c.InstanceType("m5.large")
	if !ok || *m5.VCpuInfo.DefaultVCpus != 2 || *m5.MemoryInfo.SizeInMiB != 8192 {
		t.Fatalf("m5.large = %+v", m5)
	}
	if got := ENILimitedMaxPods(m5); got != 29 {
		t.Errorf("m5.large max pods = %d, want 29 (3 ENIs × 9 + 2)", got)
	}
	if p, ok := c.OnDemandPrice("us-west-2", "m5.large"); !ok || p != 0.096 {
		t.Errorf("m5.large on-demand = %v %v, want 0.096", p, ok)
	}
	if !c.Offered("us-west-2", "us-west-2a", "m5.large") || c.Offered("us-west-2", "us-west-2a", "no.such") {
		t.Error("offerings of us-west-2a wrong")
	}
	if n := len(c.OfferedTypes("us-west-2", "us-west-2d")); n != 1024 {
		t.Errorf("us-west-2d offers %d types, want 1,024", n)
	}
}

func TestSpotPriceIsDeterministicPerZoneAndNearEstimate(t *testing.T) {
	c := MustLoad()
	est, ok := c.Spot("us-west-2", "m5.large")
	if !ok {
		t.Fatal("no spot estimate for m5.large")
	}
	prices := map[float64]bool{}
	for _, z := range []string{"us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"} {
		p1, ok1 := c.SpotPrice("us-west-2", z, "m5.large")
		p2, _ := c.SpotPrice("us-west-2", z, "m5.large")
		if !ok1 || p1 != p2 {
			t.Fatalf("%s: spot price %v then %v", z, p1, p2)
		}
		if p1 < est.EstimatedSpotPrice*0.9-1e-9 || p1 > est.EstimatedSpotPrice*1.1+1e-9 {
			t.Errorf("%s: spot %v outside ±10%% of estimate %v", z, p1, est.EstimatedSpotPrice)
		}
		prices[p1] = true
	}
	if len(prices) < 2 {
		t.Errorf("all zones have the same spot price %v; pools should differ", prices)
	}
	for _, it := range c.InstanceTypes() {
		if !supports(&it, "spot") {
			if _, ok := c.SpotPrice("us-west-2", "us-west-2a", string(it.InstanceType)); ok {
				t.Errorf("%s cannot run as spot but has a spot price", it.InstanceType)
			}
		}
	}
}

func TestRegionsHaveZoneIDs(t *testing.T) {
	r, ok := LookupRegion(DefaultRegion)
	if !ok || len(r.Zones) != 4 || r.Zones[0] != (Zone{"us-west-2a", "usw2-az2"}) {
		t.Fatalf("us-west-2 = %+v", r)
	}
}

// TestNodeMemoryIsLessThanTheTypes: a node reports its type's memory less
// what its kernel does not see: measured for c6a.xlarge, estimated for a
// type without a measurement, a few percent either way.
func TestNodeMemoryIsLessThanTheTypes(t *testing.T) {
	c := MustLoad()
	if got, ok := c.NodeMemoryMiB("c6a.xlarge"); !ok || got != 8192-450 {
		t.Errorf("c6a.xlarge node memory = %d MiB (known %v), want 7742 (8192 less the 450 measured)", got, ok)
	}
	if _, measured := c.memory["c7a.xlarge"]; measured {
		t.Fatal("c7a.xlarge has a measurement; pick a type without one")
	}
	if got, ok := c.NodeMemoryMiB("c7a.xlarge"); !ok || got != 8192-78-262 {
		t.Errorf("c7a.xlarge node memory = %d MiB (known %v), want 7852 (8192 less 78 MiB and 3.2%%)", got, ok)
	}
	for _, it := range c.InstanceTypes() {
		name := string(it.InstanceType)
		got, ok := c.NodeMemoryMiB(name)
		mem := *it.MemoryInfo.SizeInMiB
		if !ok || got >= mem || got < mem*80/100 {
			t.Errorf("%s: node memory %d MiB of %d", name, got, mem)
		}
	}
	if _, ok := c.NodeMemoryMiB("no.such-type"); ok {
		t.Error("an unknown type has node memory")
	}
}
