package scheduling_test

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/capacity"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// The solver's tests are an external package, so that they can check
// plans with the oracle, which imports the solver.

// Well-known label keys the tests use.
const (
	labelZone         = corev1.LabelTopologyZone
	labelHostname     = corev1.LabelHostname
	labelArch         = corev1.LabelArchStable
	labelOS           = corev1.LabelOSStable
	labelInstanceType = corev1.LabelInstanceTypeStable
	labelCapacityType = "karpenter.sh/capacity-type"
	labelNodePool     = "karpenter.sh/nodepool"
	labelPartition    = "karpenter.k8s.aws/placement-group-partition"
)

// fixtureType is one entry of testdata/catalog.json.gz: 400 real EC2
// instance types with us-west-2 zones and prices (see testdata/README.md).
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
	fixtureOnce  sync.Once
	fixtureTypes []*InstanceType
	fixtureErr   error
)

// catalogFixture returns the 400 fixture instance types with allocatable
// computed by the capacity package (AL2023 defaults, 20Gi root volume).
func catalogFixture(tb testing.TB) []*InstanceType {
	tb.Helper()
	fixtureOnce.Do(func() { fixtureTypes, fixtureErr = loadFixture("testdata/catalog.json.gz") })
	if fixtureErr != nil {
		tb.Fatal(fixtureErr)
	}
	return fixtureTypes
}

// withBaselineCPU returns copies of its whose burstable types (category t)
// carry the baseline CPU the AWS provider gives them, so the solver counts
// only that share of their CPU, as it does for a NodePool that does not opt
// in to burstable types' full CPU. The fixture itself leaves it out.
func withBaselineCPU(its []*InstanceType) []*InstanceType {
	out := make([]*InstanceType, 0, len(its))
	for _, it := range its {
		cp := *it
		if it.Labels["karpenter.k8s.aws/instance-category"] == "t" {
			cp.BaselineCPU = instancetype.BaselineCPU(ec2types.InstanceTypeInfo{
				InstanceType: ec2types.InstanceType(it.Name), BurstablePerformanceSupported: aws.Bool(true)})
		}
		out = append(out, &cp)
	}
	return out
}

func loadFixture(path string) ([]*InstanceType, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var raw []fixtureType
	if err := json.NewDecoder(zr).Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]*InstanceType, 0, len(raw))
	for _, r := range raw {
		ext := corev1.ResourceList{}
		labels := map[string]string{
			labelArch: r.Arch, labelOS: "linux", labelInstanceType: r.Name,
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
			return nil, fmt.Errorf("%s: %w", r.Name, err)
		}
		it := &InstanceType{Name: r.Name, Labels: labels, Capacity: res.Capacity, Allocatable: res.Allocatable}
		for _, z := range r.Zones {
			it.Offerings = append(it.Offerings, Offering{Zone: z, CapacityType: CapacityTypeOnDemand, Price: r.OnDemand, Available: true})
			if r.Spot > 0 {
				it.Offerings = append(it.Offerings, Offering{Zone: z, CapacityType: CapacityTypeSpot, Price: r.Spot, Available: true})
			}
		}
		out = append(out, it)
	}
	return out, nil
}
