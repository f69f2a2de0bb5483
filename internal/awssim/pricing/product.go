package pricing

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
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
			desc := fmt.Sprintf("$%s per On Demand Linux %s Instance Hour", strconv.FormatFloat(price, 'f', -1, 64), name)
			out = append(out, newProduct(attrs, name, "Hrs", desc, price))
		}
		out = append(out, volumeProducts(cat, region)...)
	}
	return out
}

func newProduct(attrs map[string]string, key, unit, desc string, price float64) product {
	byField := make(map[string]string, len(attrs))
	for k, v := range attrs {
		byField[strings.ToLower(k)] = v
	}
	return product{attributes: attrs, byField: byField, document: document(attrs, key, unit, desc, price)}
}

// volumeKind is how the price list names and files an EBS volume type.
type volumeKind struct {
	name, media string
	usage       string // usage-type suffix (io1's is "piops", magnetic has none)
	label       string // the type's name in price descriptions
}

// volumeKinds are the price list's facts of each EBS volume type, as its
// documents carry them (botocore's GetProducts example: an io1 product,
// "Provisioned IOPS", "SSD-backed", usage type "EBS:VolumeUsage.piops").
var volumeKinds = map[string]volumeKind{
	"gp3":      {"General Purpose", "SSD-backed", ".gp3", "General Purpose SSD (gp3)"},
	"gp2":      {"General Purpose", "SSD-backed", ".gp2", "General Purpose SSD (gp2)"},
	"io1":      {"Provisioned IOPS", "SSD-backed", ".piops", "Provisioned IOPS SSD (io1)"},
	"io2":      {"Provisioned IOPS", "SSD-backed", ".io2", "Provisioned IOPS SSD (io2)"},
	"st1":      {"Throughput Optimized HDD", "HDD-backed", ".st1", "Throughput Optimized HDD (st1)"},
	"sc1":      {"Cold HDD", "HDD-backed", ".sc1", "Cold HDD (sc1)"},
	"standard": {"Magnetic", "HDD-backed", "", "Magnetic"},
}

// volumeProducts renders the EBS products of a region as the price list
// files them under AmazonEC2: the size of every volume type ("Storage",
// per GB-Mo), provisioned IOPS ("System Operation", group "EBS IOPS", per
// IOPS-Mo) and gp3's provisioned throughput ("Provisioned Throughput", per
// GiBps-mo).
func volumeProducts(cat *catalog.Catalog, region string) []product {
	prices := cat.VolumePrices(region)
	names := make([]string, 0, len(prices))
	for n := range prices {
		names = append(names, n)
	}
	sort.Strings(names)
	usd := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	var out []product
	for _, api := range names {
		vp, kind := prices[api], volumeKinds[api]
		base := func(family, usage string) map[string]string {
			return map[string]string{
				"servicecode": "AmazonEC2", "servicename": "Amazon Elastic Compute Cloud",
				"productFamily": family, "volumeApiName": api, "volumeType": kind.name, "storageMedia": kind.media,
				"regionCode": region, "location": locations[region], "locationType": "AWS Region",
				"usagetype": usagePrefixes[region] + usage + kind.usage, "operation": "",
			}
		}
		out = append(out, newProduct(base("Storage", "EBS:VolumeUsage"), "storage/"+api, "GB-Mo",
			fmt.Sprintf("$%s per GB-month of %s provisioned storage - %s", usd(vp.GBMonth), kind.label, locations[region]), vp.GBMonth))
		if vp.IOPSMonth > 0 {
			attrs := base("System Operation", "EBS:VolumeP-IOPS")
			attrs["group"] = "EBS IOPS"
			out = append(out, newProduct(attrs, "iops/"+api, "IOPS-Mo",
				fmt.Sprintf("$%s per IOPS-month provisioned - %s (%s)", usd(vp.IOPSMonth), locations[region], api), vp.IOPSMonth))
		}
		if vp.MiBpsMonth > 0 {
			perGiBps := vp.MiBpsMonth * 1024
			out = append(out, newProduct(base("Provisioned Throughput", "EBS:VolumeP-Throughput"), "throughput/"+api, "GiBps-mo",
				fmt.Sprintf("$%s per GiBps-month of %s provisioned throughput - %s", usd(perGiBps), api, locations[region]), perGiBps))
		}
	}
	return out
}

func document(attrs map[string]string, key, unit, desc string, price float64) string {
	sum := sha256.Sum256([]byte(attrs["regionCode"] + "/" + key))
	sku := strings.ToUpper(fmt.Sprintf("%x", sum[:8]))
	const offer, rate = "JRTCKXETXF", "6YS6EN2CT7"
	doc := map[string]any{
		"product":     map[string]any{"productFamily": attrs["productFamily"], "attributes": attrs, "sku": sku},
		"serviceCode": "AmazonEC2",
		"terms": map[string]any{"OnDemand": map[string]any{sku + "." + offer: map[string]any{
			"priceDimensions": map[string]any{sku + "." + offer + "." + rate: map[string]any{
				"unit": unit, "endRange": "Inf", "beginRange": "0", "appliesTo": []string{},
				"rateCode":     sku + "." + offer + "." + rate,
				"description":  desc,
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
