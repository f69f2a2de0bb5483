package scheduling_test

import (
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// expectPlan checks the claims' count, cheapest types and summed price.
func expectPlan(t *testing.T, r *result, typ string, n int, cost float64) {
	t.Helper()
	r.claims(t, n)
	for _, c := range r.plan.NewClaims {
		expectType(t, c, typ)
	}
	if got := r.plan.Cost(); math.Abs(got-cost) > 1e-9 {
		t.Errorf("plan costs %.3f $/h, want %.3f", got, cost)
	}
}

// burstable is a 2-vCPU type that sustains 20% of each vCPU: 400m of
// its 2000m, at less than half the price of small.a.
func burstable() *InstanceType {
	it := mkType("burst.t", "amd64", 2, 4, 0.04)
	it.BaselineCPU = 0.2
	return it
}

// TestCostModelCases: what a node really provides for its price decides
// its size. Per-node daemonset overhead makes small nodes dearer per pod,
// and a burstable type buys only its baseline CPU unless the pool opts in.
func TestCostModelCases(t *testing.T) {
	// small.a holds 2 pods of 1 CPU for 0.09 (0.045 a pod), large.a 8
	// for 0.40 (0.05 a pod).
	types := func() []*InstanceType {
		return []*InstanceType{mkType("small.a", "amd64", 2, 4, 0.09), mkType("large.a", "amd64", 8, 16, 0.40)}
	}
	runCases(t, []tcase{
		{"without daemonsets four small nodes are cheapest", func() Input {
			return Input{NodePools: []*NodePool{mkPool("default", types())}, Pods: pods(7, "p", "1", "1Gi")}
		}, func(t *testing.T, r *result) { expectPlan(t, r, "small.a", 4, 0.36) }},
		{"a daemonset on every node makes the small type lose", func() Input {
			// 500m a node leaves small.a room for 1 pod (7 nodes, 0.63) and
			// large.a for 7 (1 node, 0.40).
			in := Input{NodePools: []*NodePool{mkPool("default", types())}, Pods: pods(7, "p", "1", "1Gi")}
			in.DaemonSets = []*corev1.Pod{mkPod("ds", "500m", "100Mi")}
			return in
		}, func(t *testing.T, r *result) { expectPlan(t, r, "large.a", 1, 0.40) }},
		{"a burstable type is priced at its baseline CPU", func() Input {
			// 1 CPU is above burst.t's 400m baseline: small.a, though dearer.
			return Input{NodePools: []*NodePool{mkPool("default", []*InstanceType{burstable(), mkType("small.a", "amd64", 2, 4, 0.10)})},
				Pods: pods(1, "p", "1", "1Gi")}
		}, func(t *testing.T, r *result) { expectPlan(t, r, "small.a", 1, 0.10) }},
		{"a pod within the baseline takes the burstable type", func() Input {
			return Input{NodePools: []*NodePool{mkPool("default", []*InstanceType{burstable(), mkType("small.a", "amd64", 2, 4, 0.10)})},
				Pods: pods(2, "p", "200m", "256Mi")}
		}, func(t *testing.T, r *result) { expectPlan(t, r, "burst.t", 1, 0.04) }},
		{"a pool that opts in counts the burstable type's full CPU", func() Input {
			pool := mkPool("default", []*InstanceType{burstable(), mkType("small.a", "amd64", 2, 4, 0.10)})
			pool.BurstableCPU = true
			return Input{NodePools: []*NodePool{pool}, Pods: pods(1, "p", "1", "1Gi")}
		}, func(t *testing.T, r *result) { expectPlan(t, r, "burst.t", 1, 0.04) }},
	})
}

// TestNodeCountCases: a batch large enough for pattern packing takes the
// larger shape when it costs at most a little more per pod (fewer nodes to
// launch, register and fragment), and the cheaper small shape when the
// difference is more than a few nodes' worth.
func TestNodeCountCases(t *testing.T) {
	// small.a holds 2 pods of 1 CPU for 0.09 (0.045 a pod).
	in := func(largePrice float64, cpuLimit string) func() Input {
		return func() Input {
			types := []*InstanceType{mkType("small.a", "amd64", 2, 4, 0.09), mkType("large.a", "amd64", 8, 16, largePrice)}
			pool := mkPool("default", types)
			if cpuLimit != "" {
				pool.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLimit)}
			}
			return Input{NodePools: []*NodePool{pool}, Pods: pods(64, "p", "1", "1Gi")}
		}
	}
	runCases(t, []tcase{
		{"the larger shape at 1% more per pod", in(0.364, ""), func(t *testing.T, r *result) {
			// 0.0455 a pod: 8 nodes for 2.912 instead of 32 for 2.88.
			expectPlan(t, r, "large.a", 8, 2.912)
		}},
		{"the small shape when the larger costs 11% more per pod", in(0.40, ""), func(t *testing.T, r *result) {
			expectPlan(t, r, "small.a", 32, 2.88)
		}},
		{"the larger shape under a limit far above the demand", in(0.364, "1000"), func(t *testing.T, r *result) {
			expectPlan(t, r, "large.a", 8, 2.912)
		}},
		{"the cheaper shape where the pool's limit could bind", in(0.364, "100"), func(t *testing.T, r *result) {
			// 64 CPU of pods against 100 CPU left: idle capacity on larger
			// nodes could crowd pods out of the pool.
			expectPlan(t, r, "small.a", 32, 2.88)
		}},
	})
}
