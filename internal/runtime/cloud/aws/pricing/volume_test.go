package pricing

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestVolumeHourlyChargesOnlyWhatTheTypeDoesNotInclude(t *testing.T) {
	gp3 := VolumePrice{GBMonth: 0.08, IOPSMonth: 0.005, IncludedIOPS: 3000, MiBpsMonth: 0.04, IncludedMiBps: 125}
	for _, tc := range []struct {
		name             string
		size             float64
		iops, throughput int64
		wantMonth        float64
	}{
		{"defaults", 20, 0, 0, 20 * 0.08},
		{"at the included performance", 20, 3000, 125, 20 * 0.08},
		{"extra IOPS and throughput", 100, 4000, 250, 100*0.08 + 1000*0.005 + 125*0.04},
	} {
		if got := gp3.Hourly(tc.size, tc.iops, tc.throughput); !near(got, tc.wantMonth/HoursPerMonth) {
			t.Errorf("%s: %v/h, want %v/h", tc.name, got, tc.wantMonth/HoursPerMonth)
		}
	}
	io1 := VolumePrice{GBMonth: 0.125, IOPSMonth: 0.065}
	if got, want := io1.Hourly(10, 500, 0), (10*0.125+500*0.065)/HoursPerMonth; !near(got, want) {
		t.Errorf("io1: %v/h, want %v/h (every provisioned IOPS is paid)", got, want)
	}
}

func TestStaticVolumePricesCoverTheCatalogRegions(t *testing.T) {
	for _, region := range []string{"us-east-1", "us-west-2"} {
		got := StaticVolumePrices(region)
		if gp3 := got["gp3"]; gp3.GBMonth != 0.08 || gp3.IncludedIOPS != 3000 || gp3.IncludedMiBps != 125 {
			t.Errorf("%s gp3 = %+v, want 0.08/GB-month with 3,000 IOPS and 125 MiB/s included", region, gp3)
		}
		if got["gp2"].GBMonth != 0.1 {
			t.Errorf("%s gp2 = %+v, want 0.10/GB-month", region, got["gp2"])
		}
	}
	if got := StaticVolumePrices("xx-nowhere-1"); len(got) != 0 {
		t.Errorf("unknown region: %v, want no prices", got)
	}
}

// Documents in the price list's shape (botocore's GetProducts example is an
// io1 storage product): each unit lands in its field, throughput priced per
// GiBps-month becomes per MiB/s, tiers past the first are skipped, and
// products that are not volumes are not counted.
func TestAddVolumePriceReadsPriceListDocuments(t *testing.T) {
	doc := func(api, unit, begin, usd string) string {
		return `{"product":{"productFamily":"Storage","attributes":{"volumeApiName":"` + api + `"}},` +
			`"terms":{"OnDemand":{"S.T":{"priceDimensions":{"S.T.R":{"unit":"` + unit + `","beginRange":"` + begin +
			`","pricePerUnit":{"USD":"` + usd + `"}}}}}}}`
	}
	prices := map[string]VolumePrice{"gp3": {IncludedIOPS: 3000, IncludedMiBps: 125}}
	for _, d := range []string{
		doc("io1", "GB-Mo", "0", "0.1380000000"),
		doc("io2", "IOPS-Mo", "32000", "0.0455000000"),
		doc("io2", "IOPS-Mo", "0", "0.0650000000"),
		doc("gp3", "GiBps-mo", "0", "40.9600000000"),
		doc("gp3", "GB-Mo", "0", "0.0800000000"),
	} {
		ok, err := addVolumePrice(prices, d)
		if err != nil {
			t.Fatal(err)
		}
		if !ok && d != doc("io2", "IOPS-Mo", "32000", "0.0455000000") {
			t.Errorf("not read: %s", d)
		}
	}
	if ok, err := addVolumePrice(prices, `{"product":{"attributes":{"instanceType":"m5.large"}}}`); ok || err != nil {
		t.Errorf("an instance product read as a volume price (ok=%v, err=%v)", ok, err)
	}
	if _, err := addVolumePrice(prices, doc("gp2", "GB-Mo", "0", "cheap")); err == nil {
		t.Error("a price that is not a number was accepted")
	}
	want := map[string]VolumePrice{
		"io1": {GBMonth: 0.138},
		"io2": {IOPSMonth: 0.065},
		"gp3": {GBMonth: 0.08, IncludedIOPS: 3000, MiBpsMonth: 0.04, IncludedMiBps: 125},
	}
	for api, w := range want {
		g := prices[api]
		if !near(g.GBMonth, w.GBMonth) || !near(g.IOPSMonth, w.IOPSMonth) || !near(g.MiBpsMonth, w.MiBpsMonth) ||
			g.IncludedIOPS != w.IncludedIOPS || g.IncludedMiBps != w.IncludedMiBps {
			t.Errorf("%s = %+v, want %+v", api, g, w)
		}
	}
}
