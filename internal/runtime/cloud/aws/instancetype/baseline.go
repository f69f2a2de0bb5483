package instancetype

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// Baseline CPU per vCPU of the burstable families, from EC2's published
// credit tables. DescribeInstanceTypes says whether a type bursts but not
// its baseline. t3, t3a and t4g share one table by size; t2's larger sizes
// sustain less.
var (
	baselineBySize = map[string]float64{
		"nano": 0.05, "micro": 0.10, "small": 0.20, "medium": 0.20,
		"large": 0.30, "xlarge": 0.40, "2xlarge": 0.40,
	}
	baselineT2 = map[string]float64{
		"nano": 0.05, "micro": 0.10, "small": 0.20, "medium": 0.20,
		"large": 0.30, "xlarge": 0.225, "2xlarge": 0.16875,
	}
)

// BaselineCPU is the share of each vCPU a burstable type sustains without
// spending credits, 0 for a type that does not burst. A burstable type of
// a size the tables do not list gets the smallest listed share, so it is
// never counted above what it may sustain.
func BaselineCPU(info ec2types.InstanceTypeInfo) float64 {
	if !aws.ToBool(info.BurstablePerformanceSupported) {
		return 0
	}
	family, size, _ := strings.Cut(string(info.InstanceType), ".")
	table := baselineBySize
	if family == "t2" {
		table = baselineT2
	}
	if share, ok := table[size]; ok {
		return share
	}
	return 0.05
}
