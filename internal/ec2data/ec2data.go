// Package ec2data is the EC2 data the product ships: Linux on-demand
// prices by region and type, EBS volume prices, and the VPC resource
// controller's per-type limits. The controller falls back on it where the
// Pricing API is out of reach and sizes pod ENIs and Windows addresses
// with it; the local AWS of the tests reads the same tables, so the two
// cannot disagree. README.md says where each table comes from.
package ec2data

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

//go:embed on_demand_prices.tsv.gz
var onDemandTSV []byte

//go:embed vpc_limits.tsv.gz
var vpcLimitsTSV []byte

// EBSPricesJSON is the EBS price table: {"region": {"volume type":
// {"gbMonth", "iopsMonth", "includedIOPS", "mibpsMonth", "includedMiBps"}}}
// in USD, list prices.
//
//go:embed ebs_prices.json
var EBSPricesJSON []byte

// OnDemand is the Linux on-demand USD/hour of every type by region. The
// maps are shared: callers must not modify them.
var OnDemand = sync.OnceValue(func() map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, f := range mustRows(onDemandTSV, "on_demand_prices.tsv.gz", 3) {
		p, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			panic(fmt.Sprintf("ec2data: on_demand_prices.tsv.gz: price %q: %v", f[2], err))
		}
		if out[f[0]] == nil {
			out[f[0]] = map[string]float64{}
		}
		out[f[0]][f[1]] = p
	}
	return out
})

// VPCLimit is what the VPC resource controller knows of a type.
type VPCLimit struct {
	// BranchInterfaces are the pod ENIs a trunking-compatible type
	// advertises (vpc.amazonaws.com/pod-eni); 0 when it cannot trunk.
	BranchInterfaces int64
	// IPv4PerInterface is the IPv4 addresses one interface takes.
	IPv4PerInterface int64
}

// VPCLimits is the VPC limits of every type in the table, by type. The map
// is shared: callers must not modify it.
var VPCLimits = sync.OnceValue(func() map[string]VPCLimit {
	out := map[string]VPCLimit{}
	for _, f := range mustRows(vpcLimitsTSV, "vpc_limits.tsv.gz", 3) {
		branch, err1 := strconv.ParseInt(f[1], 10, 64)
		ipv4, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			panic(fmt.Sprintf("ec2data: vpc_limits.tsv.gz: malformed line %q", strings.Join(f, "\t")))
		}
		out[f[0]] = VPCLimit{BranchInterfaces: branch, IPv4PerInterface: ipv4}
	}
	return out
})

// mustRows reads a gzipped table of tab-separated lines with n fields each,
// skipping "#" comments. The tables are embedded: a malformed one is a
// build defect, so it panics.
func mustRows(gz []byte, name string, n int) [][]string {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		panic(fmt.Sprintf("ec2data: %s: %v", name, err))
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		panic(fmt.Sprintf("ec2data: %s: %v", name, err))
	}
	var out [][]string
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != n {
			panic(fmt.Sprintf("ec2data: %s: malformed line %q", name, line))
		}
		out = append(out, f)
	}
	return out
}
