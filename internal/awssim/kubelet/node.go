package kubelet

import (
	"fmt"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
)

// KwokAnnotation marks a Node kwok keeps alive (heartbeats, Ready, pods).
const KwokAnnotation = "kwok.x-k8s.io/node"

// Node builds the Node an EKS node registers for an instance: named by its
// private DNS name, with the provider ID, the labels kubelet and the AWS
// cloud controller set plus those of the join configuration, the join
// configuration's taints, and capacity from the instance type.
func Node(in ec2types.Instance, jc *JoinConfig, region, kubeletVersion string) (*corev1.Node, error) {
	cat, err := catalog.Load()
	if err != nil {
		return nil, err
	}
	info, ok := cat.InstanceType(string(in.InstanceType))
	if !ok {
		return nil, fmt.Errorf("instance %s has unknown type %s", *in.InstanceId, in.InstanceType)
	}
	name := *in.PrivateDnsName
	zone := *in.Placement.AvailabilityZone
	arch := "amd64"
	if in.Architecture == ec2types.ArchitectureValuesArm64 {
		arch = "arm64"
	}
	labels := map[string]string{
		corev1.LabelHostname: name, corev1.LabelArchStable: arch, corev1.LabelOSStable: "linux",
		corev1.LabelInstanceTypeStable: string(in.InstanceType), corev1.LabelTopologyZone: zone, corev1.LabelTopologyRegion: region,
		"topology.k8s.aws/zone-id":  *in.Placement.AvailabilityZoneId,
		"k8s.io/cloud-provider-aws": "", // the AWS cloud controller's mark
	}
	for k, v := range jc.Labels {
		labels[k] = v
	}
	maxPods := jc.MaxPods
	if maxPods == 0 {
		maxPods = catalog.ENILimitedMaxPods(info)
	}
	vcpus := int64(*info.VCpuInfo.DefaultVCpus)
	memMiB := *info.MemoryInfo.SizeInMiB
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(vcpus, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memMiB*1024*1024, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(int64(maxPods), resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
	}
	if g := info.GpuInfo; g != nil && len(g.Gpus) > 0 && g.Gpus[0].Count != nil && strings.EqualFold(*g.Gpus[0].Manufacturer, "NVIDIA") {
		capacity["nvidia.com/gpu"] = *resource.NewQuantity(int64(*g.Gpus[0].Count), resource.DecimalSI)
	}
	ip := *in.PrivateIpAddress
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{KwokAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
		},
		Spec: corev1.NodeSpec{
			ProviderID: fmt.Sprintf("aws:///%s/%s", zone, *in.InstanceId),
			Taints:     jc.Taints,
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable(capacity, vcpus, maxPods),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeInternalDNS, Address: name}, {Type: corev1.NodeHostName, Address: name},
			},
			NodeInfo: corev1.NodeSystemInfo{
				Architecture: arch, OperatingSystem: "linux", KubeletVersion: kubeletVersion, KubeProxyVersion: kubeletVersion,
				ContainerRuntimeVersion: "containerd://1.7.27", OSImage: "Amazon Linux 2023", SystemUUID: *in.InstanceId,
				MachineID: strings.TrimPrefix(*in.InstanceId, "i-"), BootID: *in.InstanceId,
			},
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
			}},
		},
	}, nil
}

// allocatable subtracts what EKS node images reserve: kube-reserved CPU by
// the core-count tiers (6% of the first core, 1% of the second, 0.5% of the
// next two, 0.25% of the rest), kube-reserved memory of 11 MiB per pod plus
// 255 MiB, and a 100 MiB hard eviction threshold; ephemeral storage keeps 10%.
func allocatable(capacity corev1.ResourceList, vcpus int64, maxPods int32) corev1.ResourceList {
	milli := int64(0)
	for core := int64(1); core <= vcpus; core++ {
		switch {
		case core == 1:
			milli += 60
		case core == 2:
			milli += 10
		case core <= 4:
			milli += 5
		default:
			milli += 2 // 0.25% rounded down, as the reservation is whole millicores
		}
	}
	out := capacity.DeepCopy()
	cpu := out[corev1.ResourceCPU]
	cpu.Sub(*resource.NewMilliQuantity(milli, resource.DecimalSI))
	out[corev1.ResourceCPU] = cpu
	mem := out[corev1.ResourceMemory]
	mem.Sub(*resource.NewQuantity((int64(maxPods)*11+255+100)*1024*1024, resource.BinarySI))
	out[corev1.ResourceMemory] = mem
	storage := out[corev1.ResourceEphemeralStorage]
	out[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(storage.Value()*9/10, resource.BinarySI)
	return out
}
