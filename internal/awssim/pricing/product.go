package pricing

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
)

// product is one price-list product with its rendered document.
type product struct {
	attributes map[string]string
	// byField holds the attributes under lower-cased names: GetProducts
	// matches filter fields case-insensitively.
	byField  map[string]string
	document string
}

// locations are the price list's names for regions.
var locations = map[string]string{"us-east-1": "US East (N. Virginia)", "us-west-2": "US West (Oregon)"}

// usagePrefixes are the price list's usage-type region codes.
var usagePrefixes = map[string]string{"us-east-1": "", "us-west-2": "USW2-"}

// publication is the price list's publication time.
const publication = "2026-11-01T00:00:00Z"

// products renders a Linux on-demand product for every priced instance type
// in every catalog region: shared tenancy in the "Compute Instance" family,
// and for bare-metal types dedicated tenancy in "Compute Instance (bare
// metal)", as the price list files them.
func products(cat *catalog.Catalog) []product {
	var out []product
	for _, region := range catalog.RegionNames() {
		for _, t := range cat.InstanceTypes() {
			name := string(t.InstanceType)
			price, ok := cat.OnDemandPrice(region, name)
			if !ok {
				continue
			}
			productFamily, tenancy, usage := "Compute Instance", "Shared", "BoxUsage:"
			if t.BareMetal != nil && *t.BareMetal {
				productFamily, tenancy, usage = "Compute Instance (bare metal)", "Dedicated", "DedicatedUsage:"
			}
			attrs := map[string]string{
				"servicecode": "AmazonEC2", "servicename": "Amazon Elastic Compute Cloud",
				"productFamily": productFamily, "instanceType": name, "instanceFamily": family(name),
				"regionCode": region, "location": locations[region], "locationType": "AWS Region",
				"operatingSystem": "Linux", "tenancy": tenancy, "preInstalledSw": "NA", "capacitystatus": "Used",
				"processorArchitecture": "64-bit", "licenseModel": "No License required", "operation": "RunInstances", "marketoption": "OnDemand",
				"usagetype":         usagePrefixes[region] + usage + name,
				"vcpu":              strconv.Itoa(int(*t.VCpuInfo.DefaultVCpus)),
				"memory":            memory(*t.MemoryInfo.SizeInMiB),
				"currentGeneration": map[bool]string{true: "Yes", false: "No"}[t.CurrentGeneration != nil && *t.CurrentGeneration],
			}
			byField := make(map[string]string, len(attrs))
			for k, v := range attrs {
				byField[strings.ToLower(k)] = v
			}
			out = append(out, product{attributes: attrs, byField: byField, document: document(attrs, price)})
		}
	}
	return out
}

func document(attrs map[string]string, price float64) string {
	sum := sha256.Sum256([]byte(attrs["regionCode"] + "/" + attrs["instanceType"]))
	sku := strings.ToUpper(fmt.Sprintf("%x", sum[:8]))
	const offer, rate = "JRTCKXETXF", "6YS6EN2CT7"
	doc := map[string]any{
		"product":     map[string]any{"productFamily": attrs["productFamily"], "attributes": attrs, "sku": sku},
		"serviceCode": "AmazonEC2",
		"terms": map[string]any{"OnDemand": map[string]any{sku + "." + offer: map[string]any{
			"priceDimensions": map[string]any{sku + "." + offer + "." + rate: map[string]any{
				"unit": "Hrs", "endRange": "Inf", "beginRange": "0", "appliesTo": []string{},
				"rateCode":     sku + "." + offer + "." + rate,
				"description":  fmt.Sprintf("$%s per On Demand Linux %s Instance Hour", strconv.FormatFloat(price, 'f', -1, 64), attrs["instanceType"]),
				"pricePerUnit": map[string]string{"USD": strconv.FormatFloat(price, 'f', 10, 64)},
			}},
			"sku": sku, "effectiveDate": publication, "offerTermCode": offer, "termAttributes": map[string]string{},
		}}},
		"version":         "20261101000000",
		"publicationDate": publication,
	}
	b, _ := json.Marshal(doc)
	return string(b)
}

func family(name string) string {
	switch name[0] {
	case 'c':
		return "Compute optimized"
	case 'r', 'x', 'z', 'u':
		return "Memory optimized"
	case 'i', 'd', 'h':
		return "Storage optimized"
	case 'g', 'p', 'f', 'v':
		return "GPU instance"
	case 't', 'm', 'a':
		return "General purpose"
	}
	return "Machine Learning ASIC Instances"
}

func memory(mib int64) string {
	return strconv.FormatFloat(float64(mib)/1024, 'f', -1, 64) + " GiB"
}
