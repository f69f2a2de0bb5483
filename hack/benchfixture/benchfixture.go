// Package benchfixture is the solver's benchmark input, shared by the
// scheduling package's benchmarks and tests and by the side-by-side harness
// against Karpenter (hack/karpbench): 400 real EC2 instance types and the pod
// mixes of Karpenter's scheduling benchmark, so both solvers see the same
// input.
package benchfixture

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/capacity"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

//go:embed catalog.json.gz
var catalogGz []byte

// fixtureType is one entry of catalog.json.gz (see README.md).
type fixtureType struct {
	Name            string   `json:"name"`
	Arch            string   `json:"arch"`
	Family          string   `json:"family"`
	Category        string   `json:"category"`
	Generation      int      `json:"generation"`
	Size            string   `json:"size"`
	VCPUs           int64    `json:"vcpus"`
	MemoryMiB       int64    `json:"memoryMiB"`
	MaxENIs         int      `json:"maxENIs"`
	IPv4PerENI      int      `json:"ipv4PerENI"`
	Zones           []string `json:"zones"`
	OnDemand        float64  `json:"onDemand"`
	Spot            float64  `json:"spot"`
	Hypervisor      string   `json:"hypervisor"`
	CPUManufacturer string   `json:"cpuManufacturer"`
	GPU             *struct {
		Count        int64  `json:"count"`
		Name         string `json:"name"`
		Manufacturer string `json:"manufacturer"`
		MemoryMiB    int64  `json:"memoryMiB"`
	} `json:"gpu"`
	Neuron      int64 `json:"neuron"`
	EFA         int64 `json:"efa"`
	PodENI      int64 `json:"podENI"`
	LocalNVMeGB int64 `json:"localNVMeGB"`
}

var (
	catalogOnce  sync.Once
	catalogTypes []*scheduling.InstanceType
	catalogErr   error
)

// InstanceTypes returns the 400 fixture instance types with allocatable
// computed by the capacity package (AL2023 defaults, 20Gi root volume),
// on-demand and spot offerings in each us-west-2 zone the type has. Callers
// share the slice: copy a type before changing it.
func InstanceTypes() ([]*scheduling.InstanceType, error) {
	catalogOnce.Do(func() { catalogTypes, catalogErr = load() })
	return catalogTypes, catalogErr
}

func load() ([]*scheduling.InstanceType, error) {
	zr, err := gzip.NewReader(bytes.NewReader(catalogGz))
	if err != nil {
		return nil, err
	}
	var raw []fixtureType
	if err := json.NewDecoder(zr).Decode(&raw); err != nil {
		return nil, fmt.Errorf("catalog.json.gz: %w", err)
	}
	out := make([]*scheduling.InstanceType, 0, len(raw))
	for _, r := range raw {
		it, err := r.instanceType()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Name, err)
		}
		out = append(out, it)
	}
	return out, nil
}

func (r fixtureType) instanceType() (*scheduling.InstanceType, error) {
	ext := corev1.ResourceList{}
	labels := map[string]string{
		corev1.LabelArchStable: r.Arch, corev1.LabelOSStable: "linux", corev1.LabelInstanceTypeStable: r.Name,
		"karpenter.k8s.aws/instance-family":           r.Family,
		"karpenter.k8s.aws/instance-category":         r.Category,
		"karpenter.k8s.aws/instance-generation":       strconv.Itoa(r.Generation),
		"karpenter.k8s.aws/instance-size":             r.Size,
		"karpenter.k8s.aws/instance-cpu":              strconv.FormatInt(r.VCPUs, 10),
		"karpenter.k8s.aws/instance-memory":           strconv.FormatInt(r.MemoryMiB, 10),
		"karpenter.k8s.aws/instance-hypervisor":       r.Hypervisor,
		"karpenter.k8s.aws/instance-cpu-manufacturer": r.CPUManufacturer,
	}
	if r.GPU != nil {
		labels["karpenter.k8s.aws/instance-gpu-name"] = r.GPU.Name
		labels["karpenter.k8s.aws/instance-gpu-manufacturer"] = r.GPU.Manufacturer
		labels["karpenter.k8s.aws/instance-gpu-count"] = strconv.FormatInt(r.GPU.Count, 10)
		name := corev1.ResourceName("nvidia.com/gpu")
		if r.GPU.Manufacturer == "amd" {
			name = "amd.com/gpu"
		}
		ext[name] = *resource.NewQuantity(r.GPU.Count, resource.DecimalSI)
	}
	if r.Neuron > 0 {
		ext["aws.amazon.com/neuron"] = *resource.NewQuantity(r.Neuron, resource.DecimalSI)
	}
	if r.EFA > 0 {
		ext["vpc.amazonaws.com/efa"] = *resource.NewQuantity(r.EFA, resource.DecimalSI)
	}
	if r.PodENI > 0 {
		ext["vpc.amazonaws.com/pod-eni"] = *resource.NewQuantity(r.PodENI, resource.DecimalSI)
	}
	if r.LocalNVMeGB > 0 {
		labels["karpenter.k8s.aws/instance-local-nvme"] = strconv.FormatInt(r.LocalNVMeGB, 10)
	}
	res, err := capacity.Compute(capacity.Instance{
		VCPUs: r.VCPUs, MemoryMiB: r.MemoryMiB, Arch: r.Arch, MaxENIs: r.MaxENIs, IPv4PerENI: r.IPv4PerENI,
		EphemeralStorage: resource.MustParse("20Gi"), Extended: ext,
	}, capacity.Kubelet{}, capacity.Options{Family: capacity.AL2023})
	if err != nil {
		return nil, err
	}
	it := &scheduling.InstanceType{Name: r.Name, Labels: labels, Capacity: res.Capacity, Allocatable: res.Allocatable}
	for _, z := range r.Zones {
		it.Offerings = append(it.Offerings, scheduling.Offering{Zone: z, CapacityType: scheduling.CapacityTypeOnDemand, Price: r.OnDemand, Available: true})
		if r.Spot > 0 {
			it.Offerings = append(it.Offerings, scheduling.Offering{Zone: z, CapacityType: scheduling.CapacityTypeSpot, Price: r.Spot, Available: true})
		}
	}
	return it, nil
}

// NodePool is the benchmarks' pool, like Karpenter's benchmark's: named
// default, on-demand only, with limits no run reaches.
func NodePool(its []*scheduling.InstanceType) *scheduling.NodePool {
	return &scheduling.NodePool{
		Name: "default", InstanceTypes: its,
		Requirements: []scheduling.Requirement{{NodeSelectorRequirement: corev1.NodeSelectorRequirement{
			Key: "karpenter.sh/capacity-type", Operator: corev1.NodeSelectorOpIn, Values: []string{scheduling.CapacityTypeOnDemand}}}},
		Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10000000"), corev1.ResourceMemory: resource.MustParse("10000000Gi")},
	}
}
