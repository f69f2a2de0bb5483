package aws_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

func pool(name, nodeClass string) *v1.NodePool {
	np := &v1.NodePool{}
	np.Name = name
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: nodeClass}
	return np
}

func find(its []*scheduling.InstanceType, name string) *scheduling.InstanceType {
	for _, it := range its {
		if it.Name == name {
			return it
		}
	}
	return nil
}

// TestInstanceTypesFromCatalog checks labels and allocatable of a few types
// against the catalog's raw facts, restating the overhead formulas.
func TestInstanceTypesFromCatalog(t *testing.T) {
	p := prov
	nc := readyNodeClass(t, p, testenv.NodeClass("types", cluster, "al2023@latest"))
	its, err := p.GetInstanceTypes(testContext(t), pool("types", nc.Name))
	if err != nil {
		t.Fatal(err)
	}
	if len(its) < 300 {
		t.Fatalf("got %d instance types, want the region's catalog (hundreds)", len(its))
	}
	cat := catalog.MustLoad()
	for _, tc := range []struct {
		name, arch, category, family, generation, size, manufacturer string
		gpu                                                          bool
	}{
		{"m5.large", "amd64", "m", "m5", "5", "large", "intel", false},
		{"c6g.xlarge", "arm64", "c", "c6g", "6", "xlarge", "aws", false},
		{"g4dn.xlarge", "amd64", "g", "g4dn", "4", "xlarge", "intel", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it := find(its, tc.name)
			if it == nil {
				t.Fatalf("%s not discovered", tc.name)
			}
			info, _ := cat.InstanceType(tc.name)
			vcpus := int64(*info.VCpuInfo.DefaultVCpus)
			mem := *info.MemoryInfo.SizeInMiB
			want := map[string]string{
				corev1.LabelInstanceTypeStable: tc.name, corev1.LabelArchStable: tc.arch, corev1.LabelOSStable: "linux",
				corev1.LabelTopologyRegion: sim.Config.Region, v1.LabelInstanceCategory: tc.category,
				v1.LabelInstanceFamily: tc.family, v1.LabelInstanceGeneration: tc.generation, v1.LabelInstanceSize: tc.size,
				v1.LabelInstanceCPU: strconv.FormatInt(vcpus, 10), v1.LabelInstanceMemory: strconv.FormatInt(mem, 10),
				v1.LabelInstanceCPUManufacturer: tc.manufacturer, v1.LabelInstanceHypervisor: "nitro",
				v1.LabelInstanceEncryptionInTransitSupported: strconv.FormatBool(*info.NetworkInfo.EncryptionInTransitSupported),
				v1.LabelInstanceNetworkBandwidth:             strconv.Itoa(int(math.Round(*info.NetworkInfo.NetworkCards[0].BaselineBandwidthInGbps * 1000))),
				v1.LabelInstanceEBSBandwidth:                 strconv.Itoa(int(*info.EbsInfo.EbsOptimizedInfo.MaximumBandwidthInMbps)),
				v1.LabelInstanceCPUSustainedClockSpeedMhz:    strconv.Itoa(int(math.Round(*info.ProcessorInfo.SustainedClockSpeedInGhz * 1000))),
				v1.LabelNodeClass:                            nc.Name,
			}
			if tc.gpu {
				g := info.GpuInfo.Gpus[0]
				want[v1.LabelInstanceGPUName] = strings.ToLower(*g.Name)
				want[v1.LabelInstanceGPUManufacturer] = "nvidia"
				want[v1.LabelInstanceGPUCount] = strconv.Itoa(int(*g.Count))
				want[v1.LabelInstanceGPUMemory] = strconv.Itoa(int(*g.MemoryInfo.SizeInMiB))
				want[v1.LabelInstanceLocalNVME] = strconv.FormatInt(*info.InstanceStorageInfo.TotalSizeInGB, 10)
			} else if _, has := it.Labels[v1.LabelInstanceGPUCount]; has {
				t.Errorf("%s has a GPU count label", tc.name)
			}
			for k, v := range want {
				if it.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, it.Labels[k], v)
				}
			}

			// ENI-limited pods and the default overhead model.
			enis := int64(*info.NetworkInfo.NetworkCards[0].MaximumNetworkInterfaces)
			pods := enis*int64(*info.NetworkInfo.Ipv4AddressesPerInterface-1) + 2
			memCap := mem - int64(math.Ceil(float64(mem)*0.075))
			if tc.arch == "arm64" {
				memCap -= 64
			}
			// 6% of the first core, 1% of the second, 0.5% of the third and fourth.
			cpuReserved := int64(60+10) + 5*max(0, min(vcpus, 4)-2)
			wantCap := corev1.ResourceList{
				corev1.ResourceCPU: *resource.NewMilliQuantity(vcpus*1000, resource.DecimalSI), corev1.ResourcePods: *resource.NewQuantity(pods, resource.DecimalSI),
				corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", memCap)), corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
			}
			for name, q := range wantCap {
				if got := it.Capacity[name]; got.Cmp(q) != 0 {
					t.Errorf("capacity %s = %s, want %s", name, got.String(), q.String())
				}
			}
			wantAlloc := corev1.ResourceList{
				corev1.ResourceMemory:           resource.MustParse(fmt.Sprintf("%dMi", memCap-(11*pods+255)-100)),
				corev1.ResourceEphemeralStorage: resource.MustParse(fmt.Sprintf("%dMi", 20*1024-1024-2048)),
			}
			wantAlloc[corev1.ResourceCPU] = *resource.NewMilliQuantity(vcpus*1000-cpuReserved, resource.DecimalSI)
			for name, q := range wantAlloc {
				if got := it.Allocatable[name]; got.Cmp(q) != 0 {
					t.Errorf("allocatable %s = %s, want %s", name, got.String(), q.String())
				}
			}
			if tc.gpu {
				if got := it.Capacity["nvidia.com/gpu"]; got.Value() != int64(*info.GpuInfo.Gpus[0].Count) {
					t.Errorf("nvidia.com/gpu capacity = %s", got.String())
				}
			}

			// One on-demand and one spot offering per zone offering the type.
			zones := 0
			for _, z := range sim.EC2.Region().Zones {
				if cat.Offered(sim.Config.Region, z.Name, tc.name) {
					zones++
				}
			}
			if len(it.Offerings) != 2*zones {
				t.Errorf("%d offerings, want on-demand and spot in each of %d zones", len(it.Offerings), zones)
			}
		})
	}
}

func TestKubeletSettingsChangeAllocatable(t *testing.T) {
	p := prov
	nc := testenv.NodeClass("kubelet", cluster, "al2023@latest")
	maxPods := int32(20)
	nc.Spec.Kubelet = awsv1.KubeletConfigurationOf(awsv1.KubeletSettings{MaxPods: &maxPods, KubeReserved: map[string]string{"memory": "1Gi"}, EvictionHard: map[string]string{"memory.available": "5%"}})
	nc = readyNodeClass(t, p, nc)
	its, err := p.GetInstanceTypes(testContext(t), pool("kubelet", nc.Name))
	if err != nil {
		t.Fatal(err)
	}
	it := find(its, "m5.large")
	if got := it.Capacity.Pods().Value(); got != 20 {
		t.Errorf("pods = %d, want maxPods 20", got)
	}
	memCap := int64(8192 - 615)
	want := resource.MustParse(fmt.Sprintf("%dMi", memCap-1024))
	want.Sub(*resource.NewQuantity(int64(math.Ceil(float64(memCap<<20)*0.05)), resource.BinarySI))
	if got := it.Allocatable[corev1.ResourceMemory]; got.Cmp(want) != 0 {
		t.Errorf("allocatable memory = %s, want capacity - 1Gi kube-reserved - 5%% eviction = %s", got.String(), want.String())
	}
}
