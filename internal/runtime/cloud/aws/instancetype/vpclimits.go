package instancetype

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"strconv"
	"strings"
	"sync"
)

// vpcLimits is the VPC resource controller's view of the instance types:
// for each, the branch interfaces it can trunk (security groups for pods;
// 0 when the type cannot trunk) and the IPv4 addresses per interface.
// Compiled from the VPC limits table of aws/karpenter-provider-aws
// (pkg/providers/instancetype/zz_generated.vpclimits.go, generated
// 2026-08-06, Apache-2.0), restricted to the catalog's types.
//
//go:embed vpc_limits.tsv.gz
var vpcLimitsTSV []byte

type vpcLimit struct {
	branchInterfaces int64
	ipv4PerInterface int64
}

var vpcLimits = sync.OnceValue(func() map[string]vpcLimit {
	out := map[string]vpcLimit{}
	zr, err := gzip.NewReader(bytes.NewReader(vpcLimitsTSV))
	if err != nil {
		panic("instancetype: embedded vpc_limits.tsv.gz: " + err.Error())
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		panic("instancetype: embedded vpc_limits.tsv.gz: " + err.Error())
	}
	for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			panic("instancetype: embedded vpc_limits.tsv.gz: malformed line " + strconv.Quote(line))
		}
		branch, err1 := strconv.ParseInt(f[1], 10, 64)
		ips, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			panic("instancetype: embedded vpc_limits.tsv.gz: malformed line " + strconv.Quote(line))
		}
		out[f[0]] = vpcLimit{branchInterfaces: branch, ipv4PerInterface: ips}
	}
	return out
})

// PodENIs is the vpc.amazonaws.com/pod-eni capacity of a type: the branch
// interfaces the VPC resource controller advertises on trunking-compatible
// types, 0 on others and on types the table does not know.
func PodENIs(instanceType string) int64 { return vpcLimits()[instanceType].branchInterfaces }

// WindowsPrivateIPv4s is the vpc.amazonaws.com/PrivateIPv4Address capacity
// of a Windows node of a type: the primary interface's secondary IPv4
// addresses, 0 on types the table does not know.
func WindowsPrivateIPv4s(instanceType string) int64 {
	if l, ok := vpcLimits()[instanceType]; ok && l.ipv4PerInterface > 0 {
		return l.ipv4PerInterface - 1
	}
	return 0
}
