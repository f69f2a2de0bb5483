package scheduling_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/hack/benchfixture"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling/oracle"
)

func TestLowerBoundCostTwoShapes(t *testing.T) {
	opts := []oracle.BoundOption{
		{Price: 1, CPUMillis: 4000, MemoryBytes: 8},  // CPU-heavy
		{Price: 1, CPUMillis: 1000, MemoryBytes: 32}, // memory-heavy
	}
	// Demand 5000m / 40: x1 = x2 = 1 meets both exactly; no single shape is
	// as cheap (CPU-heavy alone needs 5 units for the memory).
	if got := oracle.LowerBoundCost(opts, 5000, 40); math.Abs(got-2) > 1e-9 {
		t.Fatalf("LowerBoundCost = %v, want 2", got)
	}
	if got := oracle.LowerBoundCost(opts, 0, 0); got != 0 {
		t.Fatalf("zero demand: %v, want 0", got)
	}
	if got := oracle.LowerBoundCost(nil, 1, 1); !math.IsInf(got, 1) {
		t.Fatalf("no options: %v, want +Inf", got)
	}
}

// TestLowerBoundCostParallelShapes: when every option is (nearly) parallel
// to the demand, the two-shape system is degenerate; the bound must come
// from the best single shape, not from rounding noise.
func TestLowerBoundCostParallelShapes(t *testing.T) {
	opts := []oracle.BoundOption{
		{Price: 0.76032, CPUMillis: 31869.62890625, MemoryBytes: 6.8439506944e+10},
		{Price: 1.24848, CPUMillis: 63770, MemoryBytes: 1.3694503223295999e+11},
	}
	cpu, mem := 93750.0, 2.01326592e+11
	want := math.Min(
		opts[0].Price*math.Max(cpu/opts[0].CPUMillis, mem/opts[0].MemoryBytes),
		opts[1].Price*math.Max(cpu/opts[1].CPUMillis, mem/opts[1].MemoryBytes))
	got := oracle.LowerBoundCost(opts, cpu, mem)
	if got <= 0 || math.Abs(got-want) > 1e-9*want {
		t.Fatalf("LowerBoundCost = %v, want the best single shape %v", got, want)
	}
}

// TestLPLowerBoundForPodsSameRatio: pods that all ask 2Gi per CPU make
// every type's usable capacity parallel to the demand.
func TestLPLowerBoundForPodsSameRatio(t *testing.T) {
	types := catalogFixture(t)
	var pods []*corev1.Pod
	for i, sz := range [][2]string{{"250m", "512Mi"}, {"500m", "1Gi"}, {"1", "2Gi"}, {"2", "4Gi"}} {
		for j := 0; j < 25; j++ {
			pods = append(pods, &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: fmt.Sprint("c", i, j),
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse(sz[0]), corev1.ResourceMemory: resource.MustParse(sz[1]),
				}},
			}}}})
		}
	}
	plain := oracle.LPLowerBound(types, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("93750m"), corev1.ResourceMemory: resource.MustParse("187.5Gi")})
	got := oracle.LPLowerBoundForPods(types, pods)
	if !(got > 0) || got < plain-1e-9 {
		t.Fatalf("LPLowerBoundForPods = %v; want positive and at least the plain LP bound %v", got, plain)
	}
}

// TestLowerBoundCostOnNodes: a small shape cheaper per unit than a large
// one, and a cap on the node count that forces large ones in.
func TestLowerBoundCostOnNodes(t *testing.T) {
	opts := []oracle.BoundOption{
		{Price: 1, CPUMillis: 2000, MemoryBytes: 2}, // $0.50 a unit
		{Price: 3, CPUMillis: 4000, MemoryBytes: 4}, // $0.75 a unit
	}
	for _, tc := range []struct {
		nodes, want float64
	}{
		{10, 4},          // four small ones; the cap does not bind
		{3, 5},           // two small and one large
		{2, 6},           // two large
		{1, math.Inf(1)}, // one node holds at most half the demand
	} {
		got := oracle.LowerBoundCostOnNodes(opts, 8000, 8, tc.nodes)
		if !(math.IsInf(tc.want, 1) && math.IsInf(got, 1)) && math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("at most %v nodes: %v, want %v", tc.nodes, got, tc.want)
		}
	}
}

// TestGenericKarpenterOnAThirdOfTheNodes: Karpenter's generic mix of 5,000
// pods on the fixture catalog (GenericKarpenter: 1,916 nodes, $69.29/h)
// cannot go on a third of the nodes for anywhere near the price: with
// burstable types at full CPU, two vCPU for a few cents make many small
// nodes the cheap plan, and even the linear relaxation on 643 nodes costs
// over $80/h.
func TestGenericKarpenterOnAThirdOfTheNodes(t *testing.T) {
	its := withOnDemandOnly(catalogFixture(t))
	pods := benchfixture.GenericPods(5000, rand.New(rand.NewSource(42)))
	free := oracle.LPLowerBoundForPods(its, pods)
	third := oracle.LPLowerBoundForPodsOnNodes(its, pods, 643)
	t.Logf("LP bound: any node count $%.2f/h, at most 643 nodes $%.2f/h", free, third)
	if !(third > 80) || !(third > free) {
		t.Fatalf("bound on 643 nodes $%.2f/h (any count $%.2f/h), want over $80/h", third, free)
	}
}
