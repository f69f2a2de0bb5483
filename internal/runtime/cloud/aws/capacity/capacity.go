// Package capacity computes what a node of a given EC2 instance type offers
// to pods: capacity, the overhead reserved for the system (VM, kubelet,
// eviction threshold) and the allocatable remainder. The formulas mirror the
// ones the AWS provider of Karpenter uses for bin-packing, so the solver and
// the cloud provider agree on how many pods fit before a node exists.
package capacity

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Family is the AMI family; it decides how the pod density is derived.
type Family string

const (
	AL2          Family = "AL2"
	AL2023       Family = "AL2023"
	Bottlerocket Family = "Bottlerocket"
	Windows      Family = "Windows"
	Custom       Family = "Custom"
)

// DefaultVMMemoryOverheadPercent is the share of memory the hypervisor and
// firmware keep (VM_MEMORY_OVERHEAD_PERCENT).
const DefaultVMMemoryOverheadPercent = 0.075

// Instance holds the facts about an instance type that overhead depends on.
type Instance struct {
	VCPUs     int64
	MemoryMiB int64
	// Arch is "amd64" or "arm64".
	Arch string
	// MaxENIs and IPv4PerENI are for the default network card.
	MaxENIs     int
	IPv4PerENI  int
	EFAOnlyENIs int
	// EphemeralStorage is the root (or data, or RAID0 instance-store) volume.
	EphemeralStorage resource.Quantity
	// Extended resources (GPUs, neuron, efa, pod-eni) are passed through.
	Extended corev1.ResourceList
}

// Kubelet is the subset of the EC2NodeClass kubelet settings that changes
// capacity or overhead. Map keys are resource names (cpu, memory,
// ephemeral-storage) or eviction signals (memory.available,
// nodefs.available); values are quantities or, for eviction, percentages.
type Kubelet struct {
	MaxPods        *int32
	PodsPerCore    *int32
	KubeReserved   map[string]string
	SystemReserved map[string]string
	EvictionHard   map[string]string
}

// Options are provider-wide settings.
type Options struct {
	Family Family
	// VMMemoryOverheadPercent defaults to DefaultVMMemoryOverheadPercent when 0.
	VMMemoryOverheadPercent float64
	// ReservedENIs are ENIs kept back from pod networking (RESERVED_ENIS).
	ReservedENIs int
}

// Resources is the result of Compute.
type Resources struct {
	Capacity     corev1.ResourceList
	KubeReserved corev1.ResourceList
	// SystemReserved and EvictionThreshold are what the kubelet withholds
	// besides KubeReserved.
	SystemReserved    corev1.ResourceList
	EvictionThreshold corev1.ResourceList
	Allocatable       corev1.ResourceList
}

// Compute returns capacity, overhead and allocatable for one instance type.
func Compute(in Instance, kubelet Kubelet, opts Options) (Resources, error) {
	pct := opts.VMMemoryOverheadPercent
	if pct == 0 {
		pct = DefaultVMMemoryOverheadPercent
	}
	pods := Pods(in, kubelet, opts)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(in.VCPUs*1000, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(MemoryCapacityMiB(in.MemoryMiB, in.Arch, pct)*mib, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: in.EphemeralStorage.DeepCopy(),
	}
	for name, q := range in.Extended {
		capacity[name] = q.DeepCopy()
	}
	// AL2/AL2023/Custom size kube-reserved memory from the ENI-limited density
	// with no ENIs reserved, even when maxPods is set; others use the
	// resolved pod count.
	reservedPods := pods
	switch opts.Family {
	case AL2, AL2023, Custom, "":
		reservedPods = ENILimitedPods(in.MaxENIs, in.IPv4PerENI, 0, in.EFAOnlyENIs)
	}
	kubeReserved := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(KubeReservedCPUMillis(in.VCPUs), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(KubeReservedMemoryMiB(reservedPods)*mib, resource.BinarySI),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
	}
	if err := override(kubeReserved, kubelet.KubeReserved, "kubeReserved"); err != nil {
		return Resources{}, err
	}
	systemReserved := corev1.ResourceList{}
	if err := override(systemReserved, kubelet.SystemReserved, "systemReserved"); err != nil {
		return Resources{}, err
	}
	eviction, err := evictionThreshold(capacity, kubelet.EvictionHard)
	if err != nil {
		return Resources{}, err
	}
	alloc := capacity.DeepCopy()
	for _, sub := range []corev1.ResourceList{kubeReserved, systemReserved, eviction} {
		for name, q := range sub {
			if name == corev1.ResourcePods {
				continue
			}
			if c, ok := alloc[name]; ok {
				c.Sub(q)
				if c.Sign() < 0 {
					c = *resource.NewQuantity(0, c.Format)
				}
				alloc[name] = c
			}
		}
	}
	return Resources{Capacity: capacity, KubeReserved: kubeReserved, SystemReserved: systemReserved, EvictionThreshold: eviction, Allocatable: alloc}, nil
}

const mib = 1 << 20

// MemoryCapacityMiB is the memory a node reports: the instance memory minus
// the VM overhead share (rounded up), and 64 MiB less on arm64.
func MemoryCapacityMiB(memoryMiB int64, arch string, vmOverheadPercent float64) int64 {
	out := memoryMiB - int64(math.Ceil(float64(memoryMiB)*vmOverheadPercent))
	if arch == "arm64" {
		out -= 64
	}
	return out
}

// ENILimitedPods is the EKS max-pods formula: every ENI but the reserved
// and EFA-only ones contributes its secondary IPv4 addresses, plus two
// host-network pods.
func ENILimitedPods(maxENIs, ipv4PerENI, reservedENIs, efaOnlyENIs int) int64 {
	enis := maxENIs - reservedENIs - efaOnlyENIs
	if enis < 0 || ipv4PerENI < 1 {
		return 2
	}
	return int64(enis)*int64(ipv4PerENI-1) + 2
}

// Pods is the node's pod capacity: maxPods if set, else the ENI-limited
// density (110 for Windows), then capped by podsPerCore × vCPU except on
// Bottlerocket, which ignores podsPerCore.
func Pods(in Instance, kubelet Kubelet, opts Options) int64 {
	var pods int64
	switch {
	case kubelet.MaxPods != nil:
		pods = int64(*kubelet.MaxPods)
	case opts.Family == Windows:
		pods = 110
	default:
		pods = ENILimitedPods(in.MaxENIs, in.IPv4PerENI, opts.ReservedENIs, in.EFAOnlyENIs)
	}
	if kubelet.PodsPerCore != nil && *kubelet.PodsPerCore > 0 && opts.Family != Bottlerocket {
		pods = min(pods, int64(*kubelet.PodsPerCore)*in.VCPUs)
	}
	return pods
}

// KubeReservedCPUMillis is 6 % of the first core, 1 % of the second, 0.5 %
// of the third and fourth and 0.25 % of every further core.
func KubeReservedCPUMillis(vcpus int64) int64 {
	// Work in hundredths of a millicore so 0.25 % of a core stays exact.
	var hundredths int64
	for core := int64(1); core <= vcpus; core++ {
		switch {
		case core == 1:
			hundredths += 6000
		case core == 2:
			hundredths += 1000
		case core <= 4:
			hundredths += 500
		default:
			hundredths += 250
		}
	}
	return (hundredths + 99) / 100
}

// KubeReservedMemoryMiB is 11 MiB per pod plus 255 MiB.
func KubeReservedMemoryMiB(pods int64) int64 { return 11*pods + 255 }

func override(dst corev1.ResourceList, src map[string]string, field string) error {
	for k, v := range src {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return fmt.Errorf("kubelet.%s[%s]: %q is not a quantity: %w", field, k, v, err)
		}
		if q.Sign() < 0 {
			return fmt.Errorf("kubelet.%s[%s]: %q must not be negative", field, k, v)
		}
		if k == "pid" {
			continue
		}
		dst[corev1.ResourceName(k)] = q
	}
	return nil
}

// evictionThreshold defaults to memory 100Mi and 10 % of ephemeral storage;
// evictionHard memory.available / nodefs.available override them and may be
// percentages of capacity.
func evictionThreshold(capacity corev1.ResourceList, hard map[string]string) (corev1.ResourceList, error) {
	eph := capacity[corev1.ResourceEphemeralStorage]
	out := corev1.ResourceList{
		corev1.ResourceMemory:           resource.MustParse("100Mi"),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(int64(math.Ceil(float64(eph.Value())*0.10)), resource.BinarySI),
	}
	for signal, name := range map[string]corev1.ResourceName{"memory.available": corev1.ResourceMemory, "nodefs.available": corev1.ResourceEphemeralStorage} {
		v, ok := hard[signal]
		if !ok {
			continue
		}
		if p, isPct := strings.CutSuffix(v, "%"); isPct {
			f, err := strconv.ParseFloat(p, 64)
			if err != nil || f < 0 || f > 100 {
				return nil, fmt.Errorf("kubelet.evictionHard[%s]: %q is not a percentage between 0%% and 100%%", signal, v)
			}
			c := capacity[name]
			out[name] = *resource.NewQuantity(int64(math.Ceil(float64(c.Value())*f/100)), resource.BinarySI)
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("kubelet.evictionHard[%s]: %q is neither a quantity nor a percentage: %w", signal, v, err)
		}
		out[name] = q
	}
	return out, nil
}
