package kubelet

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
)

// ResourcePodENI is the extended resource of pods with security groups of
// their own.
const ResourcePodENI corev1.ResourceName = "vpc.amazonaws.com/pod-eni"

// ResourceEFA is the extended resource of EFA devices.
const ResourceEFA corev1.ResourceName = "vpc.amazonaws.com/efa"

// KwokAnnotation marks a Node kwok keeps alive (heartbeats, Ready, pods).
const KwokAnnotation = "kwok.x-k8s.io/node"

// Node builds the Node an EKS node registers for an instance: named by its
// private DNS name, with the provider ID, the labels kubelet and the AWS
// cloud controller set plus those of the join configuration, the join
// configuration's taints, and capacity from the instance type (its memory
// as the node's kernel sees it, see catalog.NodeMemoryMiB).
func Node(in ec2types.Instance, jc *JoinConfig, region, kubeletVersion string, ephemeralGiB int32) (*corev1.Node, error) {
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
	// Windows instances run Windows Server Core; their kubelet reports the
	// OS (and, see Kubelet, the build).
	os, osImage := "linux", "Amazon Linux 2023"
	if in.Platform == ec2types.PlatformValuesWindows {
		os, osImage = "windows", "Windows Server Core"
	}
	labels := map[string]string{
		corev1.LabelHostname: name, corev1.LabelArchStable: arch, corev1.LabelOSStable: os,
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
	// The kubelet sees the memory the kernel has, less than the type's.
	memMiB, _ := cat.NodeMemoryMiB(string(in.InstanceType))
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(vcpus, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memMiB*1024*1024, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(int64(maxPods), resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
	}
	if ephemeralGiB > 0 {
		capacity[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(ephemeralGiB)<<30, resource.BinarySI)
	}
	if g := info.GpuInfo; g != nil && len(g.Gpus) > 0 && g.Gpus[0].Count != nil && strings.EqualFold(*g.Gpus[0].Manufacturer, "NVIDIA") {
		capacity["nvidia.com/gpu"] = *resource.NewQuantity(int64(*g.Gpus[0].Count), resource.DecimalSI)
	}
	// The EFA device plugin advertises the EFA devices the instance has.
	efa := int64(0)
	for _, ni := range in.NetworkInterfaces {
		if t := aws.ToString(ni.InterfaceType); t == "efa" || t == "efa-only" {
			efa++
		}
	}
	if efa > 0 {
		capacity[ResourceEFA] = *resource.NewQuantity(efa, resource.DecimalSI)
	}
	// The VPC resource controller of a cluster with security groups for
	// pods enabled advertises the branch interfaces of trunking types.
	if l, ok := cat.VPC(string(in.InstanceType)); ok && l.BranchInterfaces > 0 {
		capacity[ResourcePodENI] = *resource.NewQuantity(l.BranchInterfaces, resource.DecimalSI)
	}
	alloc, err := allocatable(capacity, vcpus, maxPods, jc)
	if err != nil {
		return nil, err
	}
	ip := *in.PrivateIpAddress
	addresses := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	if in.Ipv6Address != nil {
		// Nodes of IPv6 clusters register with their IPv6 address first.
		addresses = append([]corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: *in.Ipv6Address}}, addresses...)
	}
	addresses = append(addresses, corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: name}, corev1.NodeAddress{Type: corev1.NodeHostName, Address: name})
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
			Allocatable: alloc,
			Addresses:   addresses,
			NodeInfo: corev1.NodeSystemInfo{
				Architecture: arch, OperatingSystem: os, KubeletVersion: kubeletVersion, KubeProxyVersion: kubeletVersion,
				ContainerRuntimeVersion: "containerd://1.7.27", OSImage: osImage, SystemUUID: *in.InstanceId,
				MachineID: machineID(*in.InstanceId), BootID: *in.InstanceId,
			},
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
			}},
		},
	}, nil
}

// allocatable is capacity less the kubelet's kube and system reservations
// and its hard eviction thresholds for memory and the node filesystem.
// Where the join configuration sets none, the EKS node image's defaults
// apply: kube-reserved CPU by the core-count tiers (6% of the first core,
// 1% of the second, 0.5% of the next two, 0.25% of the rest), kube-reserved
// memory of 11 MiB per pod plus 255 MiB, and evictions at 100 MiB of memory
// and 10% of the filesystem.
func allocatable(capacity corev1.ResourceList, vcpus int64, maxPods int32, jc *JoinConfig) (corev1.ResourceList, error) {
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
	kube := mergeKeys(map[string]string{
		string(corev1.ResourceCPU):    resource.NewMilliQuantity(milli, resource.DecimalSI).String(),
		string(corev1.ResourceMemory): fmt.Sprintf("%dMi", int64(maxPods)*11+255),
	}, jc.KubeReserved)
	eviction := mergeKeys(map[string]string{"memory.available": "100Mi", "nodefs.available": "10%"}, jc.EvictionHard)
	out := capacity.DeepCopy()
	for _, reserved := range []map[string]string{kube, jc.SystemReserved} {
		for name, v := range reserved {
			q, err := resource.ParseQuantity(v)
			if err != nil {
				return nil, fmt.Errorf("kubelet reservation %s=%q: %w", name, v, err)
			}
			subtract(out, corev1.ResourceName(name), q)
		}
	}
	for signal, resourceName := range map[string]corev1.ResourceName{"memory.available": corev1.ResourceMemory, "nodefs.available": corev1.ResourceEphemeralStorage} {
		v, ok := eviction[signal]
		if !ok {
			continue
		}
		q, err := threshold(v, capacity[resourceName])
		if err != nil {
			return nil, fmt.Errorf("kubelet evictionHard %s=%q: %w", signal, v, err)
		}
		subtract(out, resourceName, q)
	}
	return out, nil
}

// subtract takes q from a resource the node has, never below zero.
func subtract(list corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	have, ok := list[name]
	if !ok {
		return
	}
	have.Sub(q)
	if have.Sign() < 0 {
		have = *resource.NewQuantity(0, have.Format)
	}
	list[name] = have
}

// threshold reads an eviction threshold: a quantity or a percentage of capacity.
func threshold(v string, capacity resource.Quantity) (resource.Quantity, error) {
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(pct, 64)
		if err != nil || f < 0 || f > 100 {
			return resource.Quantity{}, fmt.Errorf("not a percentage between 0 and 100")
		}
		return *resource.NewQuantity(int64(float64(capacity.Value())*f/100), capacity.Format), nil
	}
	return resource.ParseQuantity(v)
}

// machineID is the node's /etc/machine-id: 32 lowercase hex digits, derived
// from the instance ID so it is stable. It always holds a letter: kwok's
// node stage writes the value into YAML unquoted, so an all-digit ID (about
// one instance ID in 3,000 is all digits) reads back as a number, every
// status update of the node fails, and it never turns Ready.
func machineID(instanceID string) string {
	sum := sha256.Sum256([]byte(instanceID))
	id := []byte(hex.EncodeToString(sum[:16]))
	if !bytes.ContainsAny(id, "abcdef") {
		id[0] = 'a'
	}
	return string(id)
}
