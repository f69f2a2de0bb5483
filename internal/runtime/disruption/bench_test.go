package disruption

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// BenchmarkMultiNodeConsolidation100 times the multi-node search over 100
// candidates (the cap): 100 4-vCPU nodes, each a quarter full, against a
// 20-family catalog. Each iteration is a full binary search of solver
// simulations.
func BenchmarkMultiNodeConsolidation100(b *testing.B) {
	pool := mkPool("default")
	var nodes []*state.StateNode
	for i := range 100 {
		nodes = append(nodes, mkNode(fmt.Sprintf("n%03d", i), pool, i%3, 4, v1.CapacityTypeOnDemand,
			[]*corev1.Pod{mkPod("500m"), mkPod("500m")}))
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 20)
	cands, _ := Candidates(env, v1.DisruptionReasonUnderutilized)
	budget := budgetsFor(env, v1.DisruptionReasonUnderutilized)
	var out Outcome
	b.ResetTimer()
	for b.Loop() {
		out = MultiNode(context.Background(), env, cands, budget)
	}
	b.StopTimer()
	if out.Command == nil {
		b.Fatal("no consolidation found")
	}
	b.ReportMetric(float64(len(out.Command.Candidates)), "nodes-removed")
}

// BenchmarkSingleNodeNothingToMove times single-node consolidation walking
// 250 well-packed 4-vCPU nodes, none of which can go, against a catalog of
// 800 types: every candidate costs a simulation, as after a scale-in where
// most nodes stay.
func BenchmarkSingleNodeNothingToMove(b *testing.B) {
	pool := mkPool("default")
	var nodes []*state.StateNode
	for i := range 250 {
		nodes = append(nodes, mkNode(fmt.Sprintf("n%03d", i), pool, 0, 4, v1.CapacityTypeOnDemand,
			[]*corev1.Pod{mkPod("2"), mkPod("1"), mkPod("500m")}, launched))
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 160)
	cands, _ := Candidates(env, v1.DisruptionReasonUnderutilized)
	budget := budgetsFor(env, v1.DisruptionReasonUnderutilized)
	var out Outcome
	b.ResetTimer()
	for b.Loop() {
		out = SingleNode(context.Background(), env, cands, budget)
	}
	b.StopTimer()
	if out.Command != nil {
		b.Fatalf("consolidation found %s", out.Command)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(len(cands)), "ms/candidate")
}

// launched gives the node's claim the capacity a launch records.
func launched(n *state.StateNode) { n.NodeClaim.Status.Capacity = n.Node.Status.Capacity.DeepCopy() }
