package aws

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

func testType(name, family string, cpu string, gpu bool, offerings ...scheduling.Offering) *scheduling.InstanceType {
	labels := map[string]string{corev1.LabelInstanceTypeStable: name, v1.LabelInstanceFamily: family, corev1.LabelArchStable: "amd64"}
	if gpu {
		labels[v1.LabelInstanceGPUCount] = "1"
	}
	return &scheduling.InstanceType{Name: name, Labels: labels, Offerings: offerings,
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
}

func od(zone string, price float64) scheduling.Offering {
	return scheduling.Offering{Zone: zone, CapacityType: v1.CapacityTypeOnDemand, Price: price, Available: true}
}

func spot(zone string, price float64) scheduling.Offering {
	return scheduling.Offering{Zone: zone, CapacityType: v1.CapacityTypeSpot, Price: price, Available: true}
}

func names(cands []candidate) []string {
	var out []string
	for _, c := range cands {
		out = append(out, c.it.Name)
	}
	return out
}

func TestCompatibleChecksLabelsResourcesZonesAndAvailability(t *testing.T) {
	unavailable := spot("a", 0.01)
	unavailable.Available = false
	its := []*scheduling.InstanceType{
		testType("small", "m5", "1", false, od("a", 0.1)),
		testType("big", "m5", "4", false, od("a", 0.4), unavailable, spot("c", 0.1)),
		testType("other", "c5", "4", false, od("a", 0.3)),
	}
	reqs := requirements.NewRequirements(
		requirements.New(v1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "m5"),
		requirements.New("team", corev1.NodeSelectorOpIn, "a"), // not the provider's to satisfy
	)
	got := compatible(its, reqs, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}, map[string]string{"a": "az1", "b": "az2"})
	if len(got) != 1 || got[0].it.Name != "big" || len(got[0].offerings) != 1 || got[0].offerings[0] != od("a", 0.4) {
		t.Fatalf("compatible = %+v, want big with only its available on-demand offering in a subnet zone", got)
	}
	// A GPU requirement excludes types without a GPU.
	gpuReqs := requirements.NewRequirements(requirements.New(v1.LabelInstanceGPUCount, corev1.NodeSelectorOpExists))
	its = append(its, testType("gpu", "g4dn", "4", true, od("a", 0.5)))
	if got := names(compatible(its, gpuReqs, nil, map[string]string{"a": ""})); len(got) != 1 || got[0] != "gpu" {
		t.Errorf("GPU claim got %v", got)
	}
}

func TestExoticTypesOnlyWhenAskedFor(t *testing.T) {
	cands := []candidate{
		{it: testType("gpu", "g4dn", "4", true), offerings: []scheduling.Offering{od("a", 0.1)}},
		{it: testType("plain", "m5", "4", false), offerings: []scheduling.Offering{od("a", 0.2)}},
	}
	if got := names(withoutExotic(cands, requirements.Requirements{})); len(got) != 1 || got[0] != "plain" {
		t.Errorf("generic claim got %v, want only plain", got)
	}
	asked := requirements.NewRequirements(requirements.New(v1.LabelInstanceGPUCount, corev1.NodeSelectorOpExists))
	if got := withoutExotic(cands, asked); len(got) != 2 {
		t.Errorf("GPU-aware claim lost types: %v", names(got))
	}
	if got := withoutExotic(cands[:1], requirements.Requirements{}); len(got) != 1 {
		t.Errorf("only exotic types left: they must stay, got %v", names(got))
	}
}

func TestSpotDearerThanOnDemandIsDropped(t *testing.T) {
	cands := []candidate{
		{it: testType("a", "m5", "4", false), offerings: []scheduling.Offering{od("a", 0.10), spot("a", 0.12)}},
		{it: testType("b", "m5", "4", false), offerings: []scheduling.Offering{spot("a", 0.05)}},
	}
	got := withoutDearSpot(cands)
	if len(got) != 2 || len(got[0].offerings) != 1 || got[0].offerings[0].CapacityType != v1.CapacityTypeOnDemand {
		t.Fatalf("got %+v, want a's spot offering (0.12 > cheapest on-demand 0.10) dropped", got)
	}
	if capacityType(got) != v1.CapacityTypeSpot {
		t.Errorf("capacity type = %s, want spot while a cheap spot offering remains", capacityType(got))
	}
	if capacityType(got[:1]) != v1.CapacityTypeOnDemand {
		t.Errorf("without spot offerings the capacity type must be on-demand")
	}
}

func TestCheapestTruncatesButKeepsMinValues(t *testing.T) {
	var cands []candidate
	for i, fam := range []string{"m5", "m5", "m5", "c5", "r5"} {
		cands = append(cands, candidate{it: testType(fam+string(rune('a'+i)), fam, "4", false), offerings: []scheduling.Offering{od("a", float64(i+1))}})
	}
	got := cheapest(cands, v1.CapacityTypeOnDemand, requirements.Requirements{}, 2)
	if n := names(got); len(n) != 2 || n[0] != "m5a" || n[1] != "m5b" {
		t.Errorf("cheapest 2 = %v", n)
	}
	three := 3
	reqs := requirements.NewRequirements(requirements.New(v1.LabelInstanceFamily, corev1.NodeSelectorOpExists))
	reqs[v1.LabelInstanceFamily].MinValues = &three
	got = cheapest(cands, v1.CapacityTypeOnDemand, reqs, 2)
	if n := names(got); len(n) != 5 {
		t.Errorf("with minValues 3 on family got %v, want the list extended to r5e", n)
	}
}

func TestKubeletMaySet(t *testing.T) {
	for key, want := range map[string]bool{
		"team": true, v1.NodePoolLabelKey: true, corev1.LabelTopologyZone: true, corev1.LabelInstanceTypeStable: true,
		"node-role.kubernetes.io/worker": false, "example.k8s.io/x": false, "kubernetes.io/foo": false,
		"foo.node.kubernetes.io/bar": true, "node-restriction.kubernetes.io/x": true,
	} {
		if got := kubeletMaySet(key); got != want {
			t.Errorf("kubeletMaySet(%s) = %v, want %v", key, got, want)
		}
	}
}
