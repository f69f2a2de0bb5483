package scheduling_test

import (
	"fmt"
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

// reservedCPU returns it with kubelet and system reservations taken out of
// its allocatable CPU, as on a real node (a 2-vCPU node holds one 1-CPU pod,
// a 4-vCPU node three).
func reservedCPU(it *InstanceType, milli int64) *InstanceType {
	it.Allocatable[corev1.ResourceCPU] = *resource.NewMilliQuantity(it.Capacity.Cpu().MilliValue()-milli, resource.DecimalSI)
	return it
}

// linearTypes are one family priced per vCPU, as EC2 prices a family's
// sizes, with real allocatable CPU.
func linearTypes() []*InstanceType {
	return []*InstanceType{
		reservedCPU(mkType("m.large", "amd64", 2, 8, 0.077), 70),
		reservedCPU(mkType("m.xlarge", "amd64", 4, 16, 0.154), 80),
		reservedCPU(mkType("m.2xlarge", "amd64", 8, 32, 0.308), 90),
		reservedCPU(mkType("m.4xlarge", "amd64", 16, 64, 0.616), 110),
	}
}

// spotSplitTypes are two sizes whose spot prices differ per vCPU, as
// c6a.xlarge's and c5.4xlarge's do in awssim: the small one 10% cheaper.
func spotSplitTypes() []*InstanceType {
	return []*InstanceType{
		reservedCPU(mkType("c.xlarge", "amd64", 4, 8, 0.0482), 80),
		reservedCPU(mkType("c.4xlarge", "amd64", 16, 32, 0.2155), 110),
	}
}

// e2ePool is Karpenter's e2e NodePool over the fixture catalog: on-demand
// c, m and r types of generation 5 and later, 1,000 CPU and 1,000Gi.
func e2ePool(its []*InstanceType) *NodePool {
	p := mkPool("default", its, expr(labelCapacityType, corev1.NodeSelectorOpIn, CapacityTypeOnDemand),
		expr("karpenter.k8s.aws/instance-category", corev1.NodeSelectorOpIn, "c", "m", "r"),
		expr("karpenter.k8s.aws/instance-generation", corev1.NodeSelectorOpGt, "4"))
	p.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000"), corev1.ResourceMemory: resource.MustParse("1000Gi")}
	return p
}

// TestFewerNodesCases: every sizing path (the pattern LP for large batches,
// chooseTarget for small ones and for replacements) charges a node its
// price plus Options.NodeCost, and a batch's last claim takes all its pods
// on one node when that costs no more than splitting them.
func TestFewerNodesCases(t *testing.T) {
	its := catalogFixture(t)
	atMost := func(n int) func(t *testing.T, r *result) {
		return func(t *testing.T, r *result) {
			t.Helper()
			if len(r.plan.Errors) > 0 || len(r.plan.NewClaims) > n {
				t.Errorf("%d claims %v, %d unplaced: want at most %d", len(r.plan.NewClaims), claimSummary(r.plan), len(r.plan.Errors), n)
			}
		}
	}
	runCases(t, []tcase{
		{"five request-less pods on one node", func() Input {
			return Input{NodePools: []*NodePool{benchPool(its)}, Pods: pods(5, "p", "0", "0")}
		}, atMost(1)},
		{"fifty request-less pods on at most two nodes", func() Input {
			// Was 3: 40 on one node, then 8 and 2 on small types.
			return Input{NodePools: []*NodePool{benchPool(its)}, Pods: pods(50, "p", "0", "0")}
		}, atMost(2)},
		{"fifty request-less pods on Karpenter's e2e pool", func() Input {
			return Input{NodePools: []*NodePool{e2ePool(its)}, Pods: pods(50, "p", "0", "0")}
		}, atMost(2)},
		{"five 1-vCPU pods on one claim", func() Input {
			// Two xlarge (3 and 2 pods) cost what one 2xlarge does.
			return Input{NodePools: []*NodePool{mkPool("default", linearTypes())}, Pods: pods(5, "p", "1", "1536Mi")}
		}, func(t *testing.T, r *result) { expectPlan(t, r, "m.2xlarge", 1, 0.308) }},
		{"a mixed batch takes the shape 1% dearer per pod", func() Input {
			// 16 CPU of pods: eight small.a (0.72) or two large.a (0.728).
			types := []*InstanceType{mkType("small.a", "amd64", 2, 4, 0.09), mkType("large.a", "amd64", 8, 16, 0.364)}
			return Input{NodePools: []*NodePool{mkPool("default", types)},
				Pods: append(pods(12, "big", "1", "1Gi"), pods(8, "half", "500m", "512Mi")...)}
		}, func(t *testing.T, r *result) { expectPlan(t, r, "large.a", 2, 0.728) }},
		{"a drifted large node is replaced by one large node", func() Input {
			// The pods of a 4xlarge being replaced, beside a full node:
			// one 4xlarge (0.616) rather than a 2xlarge of 7 pods and
			// another of 5 (0.616).
			full := mkNode("full", 4, 16, map[string]string{labelZone: "z1", labelArch: "amd64", labelOS: "linux"}, pods(4, "running", "1", "1Gi")...)
			return Input{NodePools: []*NodePool{mkPool("default", linearTypes())}, Nodes: []*Node{full}, Pods: pods(12, "moved", "1", "2Gi")}
		}, func(t *testing.T, r *result) { expectPlan(t, r, "m.4xlarge", 1, 0.616) }},
		{"a drifted node's mixed pods are replaced by one large node", func() Input {
			// 13.2 CPU of pods of 19 sizes: one 4xlarge (0.616) rather
			// than six nodes for the same price.
			sizes := [][2]string{{"250m", "100Mi"}, {"1", "1Gi"}, {"500m", "512Mi"}, {"500m", "2Gi"}, {"500m", "100Mi"}, {"1", "256Mi"},
				{"100m", "512Mi"}, {"250m", "512Mi"}, {"500m", "100Mi"}, {"1500m", "512Mi"}, {"1500m", "100Mi"}, {"1", "4Gi"}, {"100m", "1Gi"},
				{"250m", "4Gi"}, {"1", "256Mi"}, {"1", "4Gi"}, {"1500m", "256Mi"}, {"250m", "4Gi"}, {"500m", "1Gi"}}
			var moved []*corev1.Pod
			for i, sz := range sizes {
				moved = append(moved, mkPod(fmt.Sprintf("moved-%d", i), sz[0], sz[1]))
			}
			return Input{NodePools: []*NodePool{mkPool("default", linearTypes())}, Pods: moved}
		}, func(t *testing.T, r *result) { expectPlan(t, r, "m.4xlarge", 1, 0.616) }},
		{"a replaced node's pods go on one node where a split prices 8% lower", func() Input {
			// Spot prices as awssim's: four c.xlarge hold the 12 pods for
			// 0.1928 (0.2008 with node costs), one c.4xlarge for 0.2155.
			return Input{NodePools: []*NodePool{mkPool("default", spotSplitTypes())}, Pods: pods(12, "moved", "1", "2Gi"), Options: Options{Replacing: true}}
		}, func(t *testing.T, r *result) { expectPlan(t, r, "c.4xlarge", 1, 0.2155) }},
		{"new pods take the split that prices 8% lower", func() Input {
			return Input{NodePools: []*NodePool{mkPool("default", spotSplitTypes())}, Pods: pods(12, "p", "1", "2Gi")}
		}, func(t *testing.T, r *result) { expectPlan(t, r, "c.xlarge", 4, 0.1928) }},
		{"no node cost: the small shape at 1% less per pod", func() Input {
			types := []*InstanceType{mkType("small.a", "amd64", 2, 4, 0.09), mkType("large.a", "amd64", 8, 16, 0.364)}
			zero := 0.0
			return Input{NodePools: []*NodePool{mkPool("default", types)}, Pods: pods(16, "p", "1", "1Gi"), Options: Options{NodeCost: &zero}}
		}, func(t *testing.T, r *result) { expectPlan(t, r, "small.a", 8, 0.72) }},
		{"a higher node cost: the larger shape at 11% more per pod", func() Input {
			types := []*InstanceType{mkType("small.a", "amd64", 2, 4, 0.09), mkType("large.a", "amd64", 8, 16, 0.40)}
			cost := 0.02
			return Input{NodePools: []*NodePool{mkPool("default", types)}, Pods: pods(16, "p", "1", "1Gi"), Options: Options{NodeCost: &cost}}
		}, func(t *testing.T, r *result) { expectPlan(t, r, "large.a", 2, 0.80) }},
	})
}

func claimSummary(p *Plan) []string {
	var out []string
	for _, c := range p.NewClaims {
		out = append(out, fmt.Sprintf("%s(%d)", cheapest(c), len(c.Pods)))
	}
	return out
}
