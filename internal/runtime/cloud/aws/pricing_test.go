package aws_test

import (
	"math"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/pricing"
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

	// The EBS prices are the Pricing API's too.
	for api, want := range cat.VolumePrices(region) {
		if got, ok := prov.Pricing().VolumePrice(api); !ok || !nearPrice(got.GBMonth, want.GBMonth) ||
			!nearPrice(got.IOPSMonth, want.IOPSMonth) || !nearPrice(got.MiBpsMonth, want.MiBpsMonth) {
			t.Errorf("%s volume price = %+v (%v), want %+v", api, got, ok, want)
		}
	}

	// Offerings carry those prices, plus the node's EBS volumes: AL2023's
	// default 20 GiB gp3 root.
	root := 20 * cat.VolumePrices(region)["gp3"].GBMonth / pricing.HoursPerMonth
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
		if !nearPrice(o.Price, want+root) || !o.Available {
			t.Errorf("offering %+v, want price %v (instance %v, root volume %v) and available", o, want+root, want, root)
		}
	}
}

// A node class's own block device mappings price its offerings: size,
// type (none named is EC2's gp2) and provisioned performance, every volume.
func TestOfferingsPayForTheNodeClassVolumes(t *testing.T) {
	cat := catalog.MustLoad()
	vp := cat.VolumePrices(sim.Config.Region)
	size := func(s string) *resource.Quantity { q := resource.MustParse(s); return &q }
	nc := testenv.NodeClass("volumes", cluster, "al2023@latest")
	nc.Spec.BlockDeviceMappings = []*awsv1.BlockDeviceMapping{
		{DeviceName: aws.String("/dev/xvda"), RootVolume: true, EBS: &awsv1.BlockDevice{
			VolumeSize: size("100Gi"), VolumeType: aws.String("gp3"), IOPS: aws.Int64(4000), Throughput: aws.Int64(250)}},
		{DeviceName: aws.String("/dev/xvdb"), EBS: &awsv1.BlockDevice{VolumeSize: size("50Gi")}},
	}
	readyNodeClass(t, prov, nc)
	gp3 := vp["gp3"]
	month := 100*gp3.GBMonth + 1000*gp3.IOPSMonth + 125*gp3.MiBpsMonth + 50*vp["gp2"].GBMonth
	volumes := month / pricing.HoursPerMonth
	its, err := prov.GetInstanceTypes(testContext(t), pool("volumes", nc.Name))
	if err != nil {
		t.Fatal(err)
	}
	instance, _ := cat.OnDemandPrice(sim.Config.Region, "m5.large")
	for _, o := range find(its, "m5.large").Offerings {
		if o.CapacityType == v1.CapacityTypeOnDemand && !nearPrice(o.Price, instance+volumes) {
			t.Errorf("offering %+v, want %v (instance %v + volumes %v)", o, instance+volumes, instance, volumes)
		}
	}
}

func nearPrice(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestIsolatedVPCUsesTheEmbeddedPriceTable(t *testing.T) {
	s := settings()
	s.IsolatedVPC = true
	p, err := awsprovider.New(sim.Config, kube.Client, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Pricing().UpdateOnDemandPricing(testContext(t)); err != nil {
		t.Fatal(err)
	}
	cat := catalog.MustLoad()
	for _, name := range []string{"m5.large", "c7g.medium", "p4d.24xlarge"} {
		want, _ := cat.OnDemandPrice(sim.Config.Region, name)
		if got, ok := p.Pricing().OnDemandPrice(name); !ok || got != want {
			t.Errorf("%s static on-demand = %v (%v), want the public price %v", name, got, ok, want)
		}
	}
}
