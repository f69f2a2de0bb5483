package aws_test

import (
	"testing"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

func TestPricesComeFromPricingAPIAndSpotHistory(t *testing.T) {
	cat := catalog.MustLoad()
	region := sim.Config.Region
	for _, name := range []string{"m5.large", "c6g.xlarge", "g4dn.xlarge", "r6i.2xlarge"} {
		want, _ := cat.OnDemandPrice(region, name)
		if got, ok := prov.Pricing().OnDemandPrice(name); !ok || got != want {
			t.Errorf("%s on-demand = %v (%v), want %v", name, got, ok, want)
		}
		for _, z := range sim.EC2.Region().Zones {
			want, offered := cat.SpotPrice(region, z.Name, name)
			if !offered || !cat.Offered(region, z.Name, name) {
				continue
			}
			if got, ok := prov.Pricing().SpotPrice(name, z.Name); !ok || got != want {
				t.Errorf("%s spot in %s = %v (%v), want %v", name, z.Name, got, ok, want)
			}
		}
	}

	// Offerings carry those prices.
	nc := readyNodeClass(t, prov, testenv.NodeClass("prices", cluster, "al2023@latest"))
	its, err := prov.GetInstanceTypes(testContext(t), pool("prices", nc.Name))
	if err != nil {
		t.Fatal(err)
	}
	it := find(its, "m5.large")
	for _, o := range it.Offerings {
		var want float64
		if o.CapacityType == v1.CapacityTypeSpot {
			want, _ = cat.SpotPrice(region, o.Zone, "m5.large")
		} else {
			want, _ = cat.OnDemandPrice(region, "m5.large")
		}
		if o.Price != want || !o.Available {
			t.Errorf("offering %+v, want price %v and available", o, want)
		}
	}
}

func TestIsolatedVPCUsesTheEmbeddedPriceTable(t *testing.T) {
	s := settings()
	s.IsolatedVPC = true
	p, err := awsprovider.New(sim.Config, kube.Client, s)
	if err != nil {
		t.Fatal(err)
	}
	before := sim.Requests().Count("pricing", "")
	if err := p.Pricing().UpdateOnDemandPricing(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if n := sim.Requests().Count("pricing", "") - before; n != 0 {
		t.Errorf("ISOLATED_VPC made %d Pricing API calls, want none", n)
	}
	cat := catalog.MustLoad()
	for _, name := range []string{"m5.large", "c7g.medium", "p4d.24xlarge"} {
		want, _ := cat.OnDemandPrice(sim.Config.Region, name)
		if got, ok := p.Pricing().OnDemandPrice(name); !ok || got != want {
			t.Errorf("%s static on-demand = %v (%v), want the public price %v", name, got, ok, want)
		}
	}
}
