package pricing_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/loopback"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/pricing"
)

// priceDoc is the part of a price-list document a consumer reads.
type priceDoc struct {
	Product struct {
		Attributes map[string]string `json:"attributes"`
	} `json:"product"`
	Terms struct {
		OnDemand map[string]struct {
			PriceDimensions map[string]struct {
				Unit         string            `json:"unit"`
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

func TestGetProductsListsLinuxOnDemandPricesOfARegion(t *testing.T) {
	client := serve(t)
	term := func(field, value string) pricingtypes.Filter {
		return pricingtypes.Filter{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String(field), Value: aws.String(value)}
	}
	// Karpenter's queries: shared "Compute Instance" products, then
	// dedicated bare-metal ones; field names in any case.
	shared := getPrices(t, client, term("regionCode", "us-west-2"), term("tenancy", "Shared"), term("productFamily", "Compute Instance"),
		term("operatingSystem", "Linux"), term("preInstalledSw", "NA"), term("capacitystatus", "Used"), term("serviceCode", "AmazonEC2"))
	metal := getPrices(t, client, term("RegionCode", "us-west-2"), term("Tenancy", "Dedicated"), term("ProductFamily", "Compute Instance (bare metal)"),
		term("OperatingSystem", "Linux"), term("PreInstalledSw", "NA"), term("CapacityStatus", "Used"), term("ServiceCode", "AmazonEC2"))
	if len(metal) == 0 {
		t.Fatal("no bare-metal products (productFamily \"Compute Instance (bare metal)\", tenancy Dedicated)")
	}
	prices := map[string]float64{}
	for name, p := range shared {
		prices[name] = p
	}
	for name, p := range metal {
		if !strings.Contains(name, "metal") {
			t.Errorf("%s is listed as bare metal", name)
		}
		if _, dup := prices[name]; dup {
			t.Errorf("%s is listed both shared and bare metal", name)
		}
		prices[name] = p
	}
	if len(prices) != 1312 {
		t.Errorf("%d priced types in us-west-2, want the catalog's 1,312", len(prices))
	}
	cat := catalog.MustLoad()
	for name, got := range prices {
		if want, _ := cat.OnDemandPrice("us-west-2", name); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	none, err := client.GetProducts(context.Background(), &awspricing.GetProductsInput{
		ServiceCode: aws.String("AmazonEC2"), Filters: []pricingtypes.Filter{term("operatingSystem", "Windows")},
	})
	if err != nil || len(none.PriceList) != 0 {
		t.Errorf("Windows products: %d %v", len(none.PriceList), err)
	}
}

func getPrices(t *testing.T, client *awspricing.Client, filters ...pricingtypes.Filter) map[string]float64 {
	t.Helper()
	return getPricesBy(t, client, func(a map[string]string, _ string) string { return a["instanceType"] }, filters...)
}

// getPricesBy reads every matching product's USD price under key(attributes, unit).
func getPricesBy(t *testing.T, client *awspricing.Client, key func(attrs map[string]string, unit string) string, filters ...pricingtypes.Filter) map[string]float64 {
	t.Helper()
	p := awspricing.NewGetProductsPaginator(client, &awspricing.GetProductsInput{
		ServiceCode: aws.String("AmazonEC2"), FormatVersion: aws.String("aws_v1"), Filters: filters,
	})
	prices := map[string]float64{}
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.PriceList {
			var doc priceDoc
			if err := json.Unmarshal([]byte(raw), &doc); err != nil {
				t.Fatal(err)
			}
			for _, term := range doc.Terms.OnDemand {
				for _, dim := range term.PriceDimensions {
					f, err := strconv.ParseFloat(dim.PricePerUnit["USD"], 64)
					if err != nil {
						t.Fatal(err)
					}
					prices[key(doc.Product.Attributes, dim.Unit)] = f
				}
			}
		}
	}
	return prices
}

func TestGetProductsListsEBSVolumePrices(t *testing.T) {
	client := serve(t)
	filter := func(typ pricingtypes.FilterType, field, value string) pricingtypes.Filter {
		return pricingtypes.Filter{Type: typ, Field: aws.String(field), Value: aws.String(value)}
	}
	// One query for sizes, IOPS and throughput of every volume type.
	got := getPricesBy(t, client, func(a map[string]string, unit string) string {
		return a["volumeApiName"] + " " + unit
	}, filter(pricingtypes.FilterTypeTermMatch, "regionCode", "us-west-2"),
		filter(pricingtypes.FilterTypeAnyOf, "productFamily", "Storage,System Operation,Provisioned Throughput"))
	want := map[string]float64{}
	for api, vp := range catalog.MustLoad().VolumePrices("us-west-2") {
		want[api+" GB-Mo"] = vp.GBMonth
		if vp.IOPSMonth > 0 {
			want[api+" IOPS-Mo"] = vp.IOPSMonth
		}
		if vp.MiBpsMonth > 0 {
			want[api+" GiBps-mo"] = vp.MiBpsMonth * 1024
		}
	}
	if len(want) < 7 || want["gp3 GB-Mo"] != 0.08 {
		t.Fatalf("catalog volume prices %v: want at least gp3, gp2, io1 sizes", want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %v, want %v", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d volume prices, want %d: %v", len(got), len(want), got)
	}
}

// serve starts the simulated Pricing API and returns a client of it.
func serve(t *testing.T) *awspricing.Client {
	t.Helper()
	svc, err := pricing.New()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	return awspricing.NewFromConfig(aws.Config{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), HTTPClient: loopback.HTTPClient(),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDPRICING", "secret", ""),
	})
}
