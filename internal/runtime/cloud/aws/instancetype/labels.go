package instancetype

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// nameScheme splits an instance type name into category, the optional
// high-memory size of u- types, and generation: "m5.large" -> m, 5;
// "u-6tb1.metal" -> u, 1.
var nameScheme = regexp.MustCompile(`^([a-z]+)(-[0-9]+tb)?([0-9]+).*\.`)

// Arch is the Kubernetes architecture of an instance type, empty when the
// type runs neither amd64 nor arm64 Linux (mac, i386-only).
func Arch(info ec2types.InstanceTypeInfo) string {
	if info.ProcessorInfo == nil {
		return ""
	}
	for _, a := range info.ProcessorInfo.SupportedArchitectures {
		switch a {
		case ec2types.ArchitectureTypeX8664:
			return v1.ArchitectureAmd64
		case ec2types.ArchitectureTypeArm64:
			return v1.ArchitectureArm64
		}
	}
	return ""
}

// Tenancies are the tenancies every instance type launches with, as in
// Karpenter: a label choice (karpenter.k8s.aws/instance-tenancy), picked
// per launch from the claim's requirements. Dedicated instances are priced
// as shared ones, as Karpenter prices them.
var Tenancies = []string{string(ec2types.TenancyDefault), string(ec2types.TenancyDedicated)}

// Labels are the well-known labels of an instance type that do not depend
// on where or how it is bought (zone and capacity type come from offerings).
func Labels(info ec2types.InstanceTypeInfo, region, os string) map[string]string {
	name := string(info.InstanceType)
	family, size, _ := strings.Cut(name, ".")
	l := map[string]string{
		corev1.LabelInstanceTypeStable: name,
		corev1.LabelArchStable:         Arch(info),
		corev1.LabelOSStable:           os,
		corev1.LabelTopologyRegion:     region,
		v1.LabelInstanceFamily:         family,
		v1.LabelInstanceSize:           size,
		v1.LabelInstanceHypervisor:     string(info.Hypervisor),
		v1.LabelInstanceCapabilityFlex: strconv.FormatBool(strings.Contains(family, "-flex")),
	}
	if m := nameScheme.FindStringSubmatch(name); m != nil {
		l[v1.LabelInstanceCategory] = m[1]
		l[v1.LabelInstanceGeneration] = m[3]
	}
	if info.VCpuInfo != nil && info.VCpuInfo.DefaultVCpus != nil {
		l[v1.LabelInstanceCPU] = strconv.Itoa(int(*info.VCpuInfo.DefaultVCpus))
	}
	if p := info.ProcessorInfo; p != nil {
		if m := kebab(aws.ToString(p.Manufacturer)); m != "" {
			l[v1.LabelInstanceCPUManufacturer] = m
		}
		if ghz := aws.ToFloat64(p.SustainedClockSpeedInGhz); ghz > 0 {
			l[v1.LabelInstanceCPUSustainedClockSpeedMhz] = strconv.Itoa(int(ghz*1000 + 0.5))
		}
	}
	if info.MemoryInfo != nil && info.MemoryInfo.SizeInMiB != nil {
		l[v1.LabelInstanceMemory] = strconv.FormatInt(*info.MemoryInfo.SizeInMiB, 10)
	}
	if e := info.EbsInfo; e != nil && e.EbsOptimizedInfo != nil && e.EbsOptimizedInfo.MaximumBandwidthInMbps != nil {
		l[v1.LabelInstanceEBSBandwidth] = strconv.Itoa(int(*e.EbsOptimizedInfo.MaximumBandwidthInMbps))
	}
	if n := info.NetworkInfo; n != nil {
		var gbps float64
		for _, card := range n.NetworkCards {
			gbps += aws.ToFloat64(card.BaselineBandwidthInGbps)
		}
		if gbps > 0 {
			l[v1.LabelInstanceNetworkBandwidth] = strconv.Itoa(int(gbps*1000 + 0.5))
		}
		l[v1.LabelInstanceEncryptionInTransitSupported] = strconv.FormatBool(aws.ToBool(n.EncryptionInTransitSupported))
	}
	if g := info.GpuInfo; g != nil && len(g.Gpus) == 1 {
		gpu := g.Gpus[0]
		l[v1.LabelInstanceGPUName] = kebab(aws.ToString(gpu.Name))
		l[v1.LabelInstanceGPUManufacturer] = kebab(aws.ToString(gpu.Manufacturer))
		l[v1.LabelInstanceGPUCount] = strconv.Itoa(int(aws.ToInt32(gpu.Count)))
		if gpu.MemoryInfo != nil {
			l[v1.LabelInstanceGPUMemory] = strconv.Itoa(int(aws.ToInt32(gpu.MemoryInfo.SizeInMiB)))
		}
	}
	if nr := info.NeuronInfo; nr != nil && len(nr.NeuronDevices) == 1 {
		d := nr.NeuronDevices[0]
		l[v1.LabelInstanceAcceleratorName] = kebab(aws.ToString(d.Name))
		l[v1.LabelInstanceAcceleratorManufacturer] = "aws"
		l[v1.LabelInstanceAcceleratorCount] = strconv.Itoa(int(aws.ToInt32(d.Count)))
	} else if ia := info.InferenceAcceleratorInfo; ia != nil && len(ia.Accelerators) == 1 {
		a := ia.Accelerators[0]
		l[v1.LabelInstanceAcceleratorName] = kebab(aws.ToString(a.Name))
		l[v1.LabelInstanceAcceleratorManufacturer] = kebab(aws.ToString(a.Manufacturer))
		l[v1.LabelInstanceAcceleratorCount] = strconv.Itoa(int(aws.ToInt32(a.Count)))
	}
	if s := info.InstanceStorageInfo; s != nil && s.NvmeSupport != ec2types.EphemeralNvmeSupportUnsupported && aws.ToInt64(s.TotalSizeInGB) > 0 {
		l[v1.LabelInstanceLocalNVME] = strconv.FormatInt(*s.TotalSizeInGB, 10)
	}
	for k, v := range l {
		if v == "" && k != v1.LabelInstanceHypervisor {
			delete(l, k)
		}
	}
	return l
}

// kebab makes a label value of a product name: "Radeon Pro V520" ->
// "radeon-pro-v520" (label values may not contain spaces).
func kebab(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "-")) }
