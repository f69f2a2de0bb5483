package instancetype

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/capacity"
)

// Extended resource names of accelerators, EFA and the VPC resource
// controller's pod ENIs and Windows IPv4 addresses.
const (
	ResourceNVIDIAGPU  corev1.ResourceName = "nvidia.com/gpu"
	ResourceAMDGPU     corev1.ResourceName = "amd.com/gpu"
	ResourceHabanaGaud corev1.ResourceName = "habana.ai/gaudi"
	ResourceNeuron     corev1.ResourceName = "aws.amazon.com/neuron"
	ResourceNeuronCore corev1.ResourceName = "aws.amazon.com/neuroncore"
	ResourceEFA        corev1.ResourceName = "vpc.amazonaws.com/efa"
	ResourcePodENI     corev1.ResourceName = "vpc.amazonaws.com/pod-eni"
	// ResourcePrivateIPv4Address is what Windows pods request for their IP.
	ResourcePrivateIPv4Address corev1.ResourceName = "vpc.amazonaws.com/PrivateIPv4Address"
)

// CapacityFamily maps a node class's AMI family to the overhead model's.
func CapacityFamily(amiFamily string) capacity.Family {
	switch amiFamily {
	case awsv1.AMIFamilyAL2:
		return capacity.AL2
	case awsv1.AMIFamilyAL2023:
		return capacity.AL2023
	case awsv1.AMIFamilyBottlerocket:
		return capacity.Bottlerocket
	case awsv1.AMIFamilyWindows2019, awsv1.AMIFamilyWindows2022, awsv1.AMIFamilyWindows2025:
		return capacity.Windows
	default:
		return capacity.Custom
	}
}

// OS is the kubernetes.io/os of nodes of an AMI family.
func OS(amiFamily string) string {
	if CapacityFamily(amiFamily) == capacity.Windows {
		return "windows"
	}
	return "linux"
}

// WindowsBuild is the node.kubernetes.io/windows-build of nodes of a
// Windows AMI family (the Windows Server Core release's build), "" for
// other families.
func WindowsBuild(amiFamily string) string {
	switch amiFamily {
	case awsv1.AMIFamilyWindows2019:
		return "10.0.17763"
	case awsv1.AMIFamilyWindows2022:
		return "10.0.20348"
	case awsv1.AMIFamilyWindows2025:
		return "10.0.26100"
	}
	return ""
}

// LabelsFor are the type's Labels for nodes of an AMI family: its OS and,
// for Windows, its build.
func LabelsFor(info ec2types.InstanceTypeInfo, region, amiFamily string) map[string]string {
	l := Labels(info, region, OS(amiFamily))
	if build := WindowsBuild(amiFamily); build != "" {
		l[corev1.LabelWindowsBuild] = build
	}
	return l
}

// KubeletOf extracts the settings the overhead model uses.
func KubeletOf(kc awsv1.KubeletConfiguration) capacity.Kubelet {
	k := kc.MustSettings()
	return capacity.Kubelet{
		MaxPods: k.MaxPods, PodsPerCore: k.PodsPerCore,
		KubeReserved: k.KubeReserved, SystemReserved: k.SystemReserved, EvictionHard: k.EvictionHard,
	}
}

// Instance gathers what the overhead model needs to know about a type.
func Instance(info ec2types.InstanceTypeInfo, nc *awsv1.EC2NodeClass) capacity.Instance {
	in := capacity.Instance{
		Arch:             Arch(info),
		EphemeralStorage: EphemeralStorage(info, nc),
		Extended:         extended(info),
	}
	if nis := nc.Spec.NetworkInterfaces; len(nis) > 0 {
		// The node class's interfaces decide the EFA devices a node has
		// (one per efa-only interface), and the efa-only ones on the
		// default card carry no pod IPs.
		delete(in.Extended, ResourceEFA)
		if n := EFAOnly(nis, -1); n > 0 {
			in.Extended[ResourceEFA] = *resource.NewQuantity(int64(n), resource.DecimalSI)
		}
		in.EFAOnlyENIs = EFAOnly(nis, 0)
	}
	if OS(nc.AMIFamily()) == "windows" {
		// Only Windows nodes hand out pod IPs as a resource.
		if n := WindowsPrivateIPv4s(string(info.InstanceType)); n > 0 {
			in.Extended[ResourcePrivateIPv4Address] = *resource.NewQuantity(n, resource.DecimalSI)
		}
	}
	if info.VCpuInfo != nil {
		in.VCPUs = int64(aws.ToInt32(info.VCpuInfo.DefaultVCpus))
	}
	if info.MemoryInfo != nil {
		in.MemoryMiB = aws.ToInt64(info.MemoryInfo.SizeInMiB)
	}
	if n := info.NetworkInfo; n != nil {
		in.IPv4PerENI = int(aws.ToInt32(n.Ipv4AddressesPerInterface))
		in.MaxENIs = int(aws.ToInt32(n.MaximumNetworkInterfaces))
		def := aws.ToInt32(n.DefaultNetworkCardIndex)
		for _, card := range n.NetworkCards {
			if aws.ToInt32(card.NetworkCardIndex) == def && card.MaximumNetworkInterfaces != nil {
				in.MaxENIs = int(*card.MaximumNetworkInterfaces)
			}
		}
	}
	return in
}

// Resources computes capacity, overhead and allocatable of a type for a node class.
func Resources(info ec2types.InstanceTypeInfo, nc *awsv1.EC2NodeClass, vmOverhead float64, reservedENIs int) (capacity.Resources, error) {
	res, err := capacity.Compute(Instance(info, nc), KubeletOf(nc.Spec.Kubelet), capacity.Options{
		Family: CapacityFamily(nc.AMIFamily()), VMMemoryOverheadPercent: vmOverhead, ReservedENIs: reservedENIs,
	})
	if err != nil {
		return res, fmt.Errorf("EC2NodeClass %s: %w", nc.Name, err)
	}
	return res, nil
}

func extended(info ec2types.InstanceTypeInfo) corev1.ResourceList {
	out := corev1.ResourceList{}
	add := func(name corev1.ResourceName, n int64) {
		if n <= 0 {
			return
		}
		q := out[name]
		q.Add(*resource.NewQuantity(n, resource.DecimalSI))
		out[name] = q
	}
	if g := info.GpuInfo; g != nil {
		for _, gpu := range g.Gpus {
			switch aws.ToString(gpu.Manufacturer) {
			case "NVIDIA":
				add(ResourceNVIDIAGPU, int64(aws.ToInt32(gpu.Count)))
			case "AMD":
				add(ResourceAMDGPU, int64(aws.ToInt32(gpu.Count)))
			case "Habana":
				add(ResourceHabanaGaud, int64(aws.ToInt32(gpu.Count)))
			}
		}
	}
	if nr := info.NeuronInfo; nr != nil {
		for _, d := range nr.NeuronDevices {
			add(ResourceNeuron, int64(aws.ToInt32(d.Count)))
			if d.CoreInfo != nil {
				add(ResourceNeuronCore, int64(aws.ToInt32(d.Count))*int64(aws.ToInt32(d.CoreInfo.Count)))
			}
		}
	}
	if n := info.NetworkInfo; n != nil && aws.ToBool(n.EfaSupported) && n.EfaInfo != nil {
		add(ResourceEFA, int64(aws.ToInt32(n.EfaInfo.MaximumEfaInterfaces)))
	}
	add(ResourcePodENI, PodENIs(string(info.InstanceType)))
	return out
}

// Ephemeral storage defaults per AMI family: the volume kubelet and the
// container runtime write to.
var (
	defaultEphemeral        = resource.MustParse("20Gi")
	defaultWindowsEphemeral = resource.MustParse("50Gi")
)

// EphemeralDevice is the block device holding a family's ephemeral storage.
func EphemeralDevice(amiFamily string) string {
	switch CapacityFamily(amiFamily) {
	case capacity.Bottlerocket:
		return "/dev/xvdb"
	case capacity.Windows:
		return "/dev/sda1"
	default:
		return "/dev/xvda"
	}
}

// EphemeralStorage is the node's ephemeral-storage capacity: all local NVMe
// under RAID0, else the root volume the node class maps, else the family's
// data or root device, else the family default size.
func EphemeralStorage(info ec2types.InstanceTypeInfo, nc *awsv1.EC2NodeClass) resource.Quantity {
	if p := nc.Spec.InstanceStorePolicy; p != nil && *p == awsv1.InstanceStorePolicyRAID0 {
		if s := info.InstanceStorageInfo; s != nil && aws.ToInt64(s.TotalSizeInGB) > 0 {
			return resource.MustParse(fmt.Sprintf("%dG", *s.TotalSizeInGB))
		}
	}
	family := nc.AMIFamily()
	for _, bdm := range nc.Spec.BlockDeviceMappings {
		if bdm != nil && bdm.RootVolume && bdm.EBS != nil && bdm.EBS.VolumeSize != nil {
			return bdm.EBS.VolumeSize.DeepCopy()
		}
	}
	for _, bdm := range nc.Spec.BlockDeviceMappings {
		if bdm != nil && aws.ToString(bdm.DeviceName) == EphemeralDevice(family) && bdm.EBS != nil && bdm.EBS.VolumeSize != nil {
			return bdm.EBS.VolumeSize.DeepCopy()
		}
	}
	if CapacityFamily(family) == capacity.Windows {
		return defaultWindowsEphemeral.DeepCopy()
	}
	return defaultEphemeral.DeepCopy()
}
