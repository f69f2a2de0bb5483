package disruption

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// TestScoreMove checks Karpenter's formula, (savings/pool cost) over
// (disruption/pool disruption), against 1/k = 0.5, on hand-computed numbers.
func TestScoreMove(t *testing.T) {
	// Three $0.20/h nodes whose reschedule costs are 11, 2 and 2.
	pool := PoolTotals{Cost: 0.60, Disruption: 15}
	for _, c := range []struct {
		name                string
		savings, disruption float64
		totals              PoolTotals
		want                float64
		approved            bool
	}{
		{"deleting the busy node", 0.20, 11, pool, (1.0 / 3) / (11.0 / 15), false}, // 0.4545
		{"deleting a quiet node", 0.20, 2, pool, (1.0 / 3) / (2.0 / 15), true},     // 2.5
		{"a replace saving half a node", 0.10, 2, pool, (1.0 / 6) / (2.0 / 15), true},
		{"exactly at the threshold", 0.30, 15, pool, 0.5, true},
		{"just under it", 0.2999, 15, pool, 0.2999 / 0.60, false},
		{"no savings", 0, 2, pool, 0, false},
		{"a loss", -0.05, 2, pool, 0, false},
		{"nothing disrupted", 0.10, 0, pool, math.Inf(1), true},
		{"empty pool totals", 0.10, 2, PoolTotals{}, 0, false},
	} {
		s := ScoreMove(c.savings, c.disruption, c.totals)
		if math.Abs(s.Value()-c.want) > 1e-9 && !(math.IsInf(c.want, 1) && math.IsInf(s.Value(), 1)) {
			t.Errorf("%s: score %v, want %v", c.name, s.Value(), c.want)
		}
		if s.Approved() != c.approved {
			t.Errorf("%s: approved %v, want %v (score %v)", c.name, s.Approved(), c.approved, s.Value())
		}
	}
}

// TestPoolTotalsCountNonCandidates: every node of the pool adds its price
// and reschedule cost, candidate or not; other pools' nodes do not.
func TestPoolTotalsCountNonCandidates(t *testing.T) {
	pool, other := mkPool("bal", balanced), mkPool("other")
	nodes := []*state.StateNode{
		mkNode("a", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1"), mkPod("1")}),
		mkNode("b", pool, 0, 2, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1", evictionCost(3))}, notConsolidatable),
		mkNode("c", other, 0, 8, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
	}
	env := mkEnv([]*v1.NodePool{pool, other}, nodes, 1)
	cands := candidates(t, env, v1.DisruptionReasonUnderutilized)
	totals := poolTotals(env, cands)
	got := totals["bal"]
	if math.Abs(got.Cost-(odPrice(0, 4)+odPrice(0, 2))) > 1e-9 || got.Disruption != 3+4 {
		t.Errorf("bal totals %+v, want cost %v and disruption 7 (a: 1+1+1, b: 1+3)", got, odPrice(0, 4)+odPrice(0, 2))
	}
	if got := totals["other"]; math.Abs(got.Cost-odPrice(0, 8)) > 1e-9 || got.Disruption != 2 {
		t.Errorf("other totals %+v, want cost %v and disruption 2", got, odPrice(0, 8))
	}
}

// TestBalancedPicksOtherMoveThanWhenEmptyOrUnderutilized runs the two
// consolidation methods in the controller's order on one cluster under
// each policy. x (f1.4x, $0.202/h, a 3.5-CPU pod, reschedule cost 2) and
// y (f0.2x, $0.100/h, a 1-CPU pod, reschedule cost 2) are candidates; z
// (f0.4x, $0.200/h, a 2-CPU pod, cost 2) is busy but counts in the
// totals: $0.502/h and 6.
//   - WhenEmptyOrUnderutilized: multi-node replaces x and y with one
//     f0.4x (y's pod moves to z), saving $0.102/h.
//   - Balanced scores that move (0.102/0.502)/(4/6) = 0.305 < 0.5 and
//     rejects it; single-node then rejects replacing x by f0.4x
//     ((0.002/0.502)/(2/6) = 0.012) and deletes y, its pod moving to z:
//     (0.1/0.502)/(2/6) = 0.598.
func TestBalancedPicksOtherMoveThanWhenEmptyOrUnderutilized(t *testing.T) {
	var singleMoves, multiMoves []Move
	run := func(policy v1.ConsolidationPolicy) (multi, single *Command) {
		pool := mkPool("p", func(p *v1.NodePool) { p.Spec.Disruption.ConsolidationPolicy = policy })
		nodes := []*state.StateNode{
			mkNode("x", pool, 1, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("3500m")}),
			mkNode("y", pool, 0, 2, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
			mkNode("z", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("2")}, notConsolidatable),
		}
		env := mkEnv([]*v1.NodePool{pool}, nodes, 2)
		cands := candidates(t, env, v1.DisruptionReasonUnderutilized)
		b := budgetsFor(env, v1.DisruptionReasonUnderutilized)
		mo := MultiNode(context.Background(), env, cands, b)
		so := SingleNode(context.Background(), env, cands, b)
		multiMoves, singleMoves = mo.Moves, so.Moves
		return mo.Command, so.Command
	}
	multi, _ := run(v1.ConsolidationPolicyWhenEmptyOrUnderutilized)
	if multi == nil || multi.Decision() != "replace" || !slices.Equal(candidateNames(multi.Candidates), []string{"x", "y"}) ||
		math.Abs(multi.ReplacementPrice()-odPrice(0, 4)) > 1e-9 {
		t.Fatalf("WhenEmptyOrUnderutilized multi-node: %v, want x and y replaced by one f0.4x", multi)
	}
	multi, single := run(v1.ConsolidationPolicyBalanced)
	if multi != nil {
		t.Fatalf("Balanced multi-node: %v, want the move rejected (score 0.305)", multi)
	}
	if single == nil || single.Decision() != "delete" || !slices.Equal(candidateNames(single.Candidates), []string{"y"}) {
		t.Fatalf("Balanced single-node: %v, want y deleted", single)
	}
	// The moves reported (consolidation_moves_total, consolidation_score,
	// ConsolidationApproved): the multi-node move once, rejected; then x's
	// replace, rejected, and y's delete, approved.
	type verdict struct {
		nodes    string
		approved bool
		score    float64
	}
	var got []verdict
	for _, m := range append(multiMoves, singleMoves...) {
		if !m.Scored {
			t.Errorf("move of %v in a Balanced pool not scored", candidateNames(m.Candidates))
		}
		got = append(got, verdict{strings.Join(candidateNames(m.Candidates), "+"), m.Approved, math.Round(m.Score.Value()*1000) / 1000})
	}
	want := []verdict{{"x+y", false, 0.305}, {"x", false, 0.012}, {"y", true, 0.598}}
	if !slices.Equal(got, want) {
		t.Errorf("moves %v, want %v", got, want)
	}
}

// TestBalancedSkipsNodesWhoseDeleteCannotPass: a node carrying most of
// the pool's disruption for a third of its cost is not even simulated
// under Balanced, while WhenEmptyOrUnderutilized replaces it.
func TestBalancedSkipsNodesWhoseDeleteCannotPass(t *testing.T) {
	for _, c := range []struct {
		policy v1.ConsolidationPolicy
		want   []string
	}{
		{v1.ConsolidationPolicyWhenEmptyOrUnderutilized, []string{"heavy"}},
		{v1.ConsolidationPolicyBalanced, nil},
	} {
		pool := mkPool("p", func(p *v1.NodePool) { p.Spec.Disruption.ConsolidationPolicy = c.policy })
		nodes := []*state.StateNode{
			// (0.2/0.6)/(11/15) = 0.4545: rejected even as a delete.
			mkNode("heavy", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1", evictionCost(10))}),
			mkNode("full1", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("4")}),
			mkNode("full2", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("4")}),
		}
		env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
		out := SingleNode(context.Background(), env, candidates(t, env, v1.DisruptionReasonUnderutilized), budgetsFor(env, v1.DisruptionReasonUnderutilized))
		var got []string
		if out.Command != nil {
			got = candidateNames(out.Command.Candidates)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: single-node took %v, want %v", c.policy, got, c.want)
		}
	}
}

// TestStaticPoolsAreNotConsolidated: consolidation passes over the nodes
// of a static pool, however underutilized.
func TestStaticPoolsAreNotConsolidated(t *testing.T) {
	pool := mkPool("static", func(p *v1.NodePool) { p.Spec.Replicas = new(int64(2)) })
	nodes := []*state.StateNode{
		mkNode("a", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
		mkNode("b", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	cands := candidates(t, env, v1.DisruptionReasonUnderutilized)
	b := budgetsFor(env, v1.DisruptionReasonUnderutilized)
	if out := MultiNode(context.Background(), env, cands, b); out.Command != nil || out.Eligible != 0 {
		t.Errorf("multi-node on a static pool: %v (eligible %d)", out.Command, out.Eligible)
	}
	if out := SingleNode(context.Background(), env, cands, b); out.Command != nil || out.Eligible != 0 {
		t.Errorf("single-node on a static pool: %v (eligible %d)", out.Command, out.Eligible)
	}
}

func balanced(p *v1.NodePool) { p.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyBalanced }

// evictionCost gives the pod a priority that makes its eviction cost c.
func evictionCost(c float64) podOpt {
	return func(p *corev1.Pod) { p.Spec.Priority = new(int32((c - 1) * (1 << 25))) }
}

// TestStaticDriftReplacesFromTemplate: a drifted node of a static pool is
// replaced by one claim from the pool's template, whatever its pods need,
// unless limits.nodes leaves no room for the replacement.
func TestStaticDriftReplacesFromTemplate(t *testing.T) {
	for _, c := range []struct {
		limit string
		want  bool
	}{{"", true}, {"3", true}, {"2", false}} {
		pool := mkPool("static", func(p *v1.NodePool) {
			p.Spec.Replicas = new(int64(2))
			if c.limit != "" {
				p.Spec.Limits = v1.Limits{"nodes": resource.MustParse(c.limit)}
			}
		})
		nodes := []*state.StateNode{
			mkNode("a", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("3")}, drifted(now.Add(-time.Hour))),
			mkNode("b", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("3")}),
		}
		env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
		out := Drift(env, candidates(t, env, v1.DisruptionReasonDrifted), budgetsFor(env, v1.DisruptionReasonDrifted))
		if !c.want {
			if out.Command != nil {
				t.Errorf("limit %s: drift %v, want none (the replacement would be a third node)", c.limit, out.Command)
			}
			continue
		}
		if out.Command == nil || len(out.Command.Replacements) != 1 || out.Command.Replacements[0].NodePool != "static" ||
			out.Command.Replacements[0].InstanceTypes[0].Type.Name != typeName(0, 1) {
			t.Errorf("limit %q: drift %v, want a replace of a by the pool's cheapest type %s", c.limit, out.Command, typeName(0, 1))
		}
	}
}
