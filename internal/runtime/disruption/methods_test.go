package disruption

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

func candidates(t *testing.T, env *Env, reason v1.DisruptionReason) []*Candidate {
	t.Helper()
	c, _ := Candidates(env, reason)
	return c
}

func budgetsFor(env *Env, reason v1.DisruptionReason) Budgets {
	b, _ := BuildBudgets(env.Snapshot.Nodes, env.Snapshot.NodePools, reason, env.Now)
	return b
}

func TestEmptinessWithinBudget(t *testing.T) {
	pool := mkPool("default", budgets(v1.Budget{Nodes: "2"}))
	nodes := []*state.StateNode{
		mkNode("e1", pool, 0, 4, v1.CapacityTypeOnDemand, nil),
		mkNode("busy", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
		mkNode("e2", pool, 0, 4, v1.CapacityTypeOnDemand, nil),
		mkNode("e3", pool, 0, 4, v1.CapacityTypeOnDemand, nil),
		mkNode("recent", pool, 0, 4, v1.CapacityTypeOnDemand, nil, notConsolidatable),
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	out := Emptiness(env, candidates(t, env, v1.DisruptionReasonEmpty), budgetsFor(env, v1.DisruptionReasonEmpty))
	if out.Command == nil || len(out.Command.Candidates) != 2 || out.Command.Decision() != "delete" || out.Eligible != 3 {
		t.Fatalf("emptiness %+v, want a delete of 2 of the 3 eligible empty nodes", out)
	}
	for _, c := range out.Command.Candidates {
		if !c.Empty() || c.Name() == "recent" {
			t.Errorf("emptiness took %s", c.Name())
		}
	}
	never := mkPool("default", func(p *v1.NodePool) { p.Spec.Disruption.ConsolidateAfter.Duration = nil })
	env = mkEnv([]*v1.NodePool{never}, []*state.StateNode{mkNode("e1", never, 0, 4, v1.CapacityTypeOnDemand, nil)}, 1)
	if out := Emptiness(env, candidates(t, env, v1.DisruptionReasonEmpty), budgetsFor(env, v1.DisruptionReasonEmpty)); out.Command != nil {
		t.Fatal("consolidateAfter: Never still removes empty nodes")
	}
}

func TestEmptinessTakesNodesWithOnlyNonPositiveCostPods(t *testing.T) {
	pool := mkPool("default")
	expendable := func(p *corev1.Pod) { p.Spec.Priority = new(int32(-2 << 25)) } // eviction cost -1
	nodes := []*state.StateNode{
		mkNode("expendable", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1", expendable)}),
		mkNode("busy", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	out := Emptiness(env, candidates(t, env, v1.DisruptionReasonEmpty), budgetsFor(env, v1.DisruptionReasonEmpty))
	if out.Command == nil || !slices.Equal(candidateNames(out.Command.Candidates), []string{"expendable"}) || out.Command.Decision() != "delete" {
		t.Fatalf("emptiness %+v, want a delete of only the node whose pods cost nothing to move", out.Command)
	}
}

func TestSingleNodeDeletesWhenPodsFitElsewhere(t *testing.T) {
	pool := mkPool("default")
	nodes := []*state.StateNode{
		mkNode("a", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
		mkNode("b", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1"), mkPod("1")}),
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	out := SingleNode(context.Background(), env, candidates(t, env, v1.DisruptionReasonUnderutilized), budgetsFor(env, v1.DisruptionReasonUnderutilized))
	if out.Command == nil || out.Command.Decision() != "delete" || !slices.Equal(candidateNames(out.Command.Candidates), []string{"a"}) {
		t.Fatalf("single-node %+v, want delete of the cheaper-to-disrupt node a", out.Command)
	}
}

func TestSingleNodeReplacesWithCheaperNode(t *testing.T) {
	pool := mkPool("default")
	big := mkNode("big", pool, 0, 16, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1"), mkPod("1")})
	env := mkEnv([]*v1.NodePool{pool}, []*state.StateNode{big}, 3)
	out := SingleNode(context.Background(), env, candidates(t, env, v1.DisruptionReasonUnderutilized), budgetsFor(env, v1.DisruptionReasonUnderutilized))
	if out.Command == nil || out.Command.Decision() != "replace" {
		t.Fatalf("single-node %+v (rejected %v), want a replacement", out.Command, out.Rejected)
	}
	r := out.Command.Replacements[0]
	bigPrice := odPrice(0, 16)
	if r.InstanceTypes[0].Type.Name != "f0.2x" {
		t.Errorf("cheapest replacement %s, want f0.2x", r.InstanceTypes[0].Type.Name)
	}
	for _, o := range r.InstanceTypes {
		if o.Price >= bigPrice {
			t.Errorf("replacement option %s at $%.3f is not cheaper than the node's $%.3f", o.Type.Name, o.Price, bigPrice)
		}
	}
	if !r.Requirements.Get(corev1.LabelInstanceTypeStable).Has("f0.2x") || r.Requirements.Get(corev1.LabelInstanceTypeStable).Has("f0.16x") {
		t.Errorf("replacement requirements %s do not match its options", r.Requirements)
	}
	// Already the cheapest fit: nothing to do, and users are told why.
	small := mkNode("small", pool, 0, 2, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1"), mkPod("1")})
	env = mkEnv([]*v1.NodePool{pool}, []*state.StateNode{small}, 3)
	out = SingleNode(context.Background(), env, candidates(t, env, v1.DisruptionReasonUnderutilized), budgetsFor(env, v1.DisruptionReasonUnderutilized))
	if out.Command != nil || len(out.Rejected) != 1 {
		t.Fatalf("single-node on the cheapest fit: %+v", out)
	}
	for _, why := range out.Rejected {
		if !strings.Contains(why, "cheaper") {
			t.Errorf("rejected because %q, want the cheaper-node reason", why)
		}
	}
}

func TestSpotToSpotConsolidation(t *testing.T) {
	pool := mkPool("default", capacityTypes(v1.CapacityTypeSpot, v1.CapacityTypeOnDemand))
	spot := func() *state.StateNode {
		return mkNode("spot", pool, 0, 16, v1.CapacityTypeSpot, []*corev1.Pod{mkPod("1"), mkPod("1")})
	}
	run := func(families int, gate bool) Outcome {
		env := mkEnv([]*v1.NodePool{pool}, []*state.StateNode{spot()}, families)
		env.SpotToSpot = gate
		return SingleNode(context.Background(), env, candidates(t, env, v1.DisruptionReasonUnderutilized), budgetsFor(env, v1.DisruptionReasonUnderutilized))
	}
	reason := func(out Outcome) string {
		for _, why := range out.Rejected {
			return why
		}
		return ""
	}
	if out := run(20, false); out.Command != nil || !strings.Contains(reason(out), "SpotToSpotConsolidation is disabled") {
		t.Fatalf("gate off: command %v, rejected %q", out.Command, reason(out))
	}
	// 2 families: f0/f1 sizes 2, 4, 8 are cheaper than f0.16x spot: 6 < 15.
	if out := run(2, true); out.Command != nil || !strings.Contains(reason(out), "requires 15 cheaper instance type options") {
		t.Fatalf("few cheaper spot types: command %v, rejected %q", out.Command, reason(out))
	}
	out := run(20, true)
	if out.Command == nil || out.Command.Decision() != "replace" {
		t.Fatalf("gate on with many cheaper types: %+v", out)
	}
	r := out.Command.Replacements[0]
	if len(r.InstanceTypes) != MinSpotToSpotTypes {
		t.Errorf("replacement has %d instance types, want the %d cheapest", len(r.InstanceTypes), MinSpotToSpotTypes)
	}
	if ct := r.Requirements.Get(v1.CapacityTypeLabelKey); ct.Len() != 1 || !ct.Has(v1.CapacityTypeSpot) {
		t.Errorf("replacement capacity types %s, want spot only", ct)
	}
}

func TestOnDemandReplacementIsPinnedToSpot(t *testing.T) {
	pool := mkPool("default", capacityTypes(v1.CapacityTypeSpot, v1.CapacityTypeOnDemand))
	od := mkNode("od", pool, 0, 16, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1"), mkPod("1")})
	env := mkEnv([]*v1.NodePool{pool}, []*state.StateNode{od}, 2)
	out := SingleNode(context.Background(), env, candidates(t, env, v1.DisruptionReasonUnderutilized), budgetsFor(env, v1.DisruptionReasonUnderutilized))
	if out.Command == nil || out.Command.Decision() != "replace" {
		t.Fatalf("%+v", out)
	}
	if ct := out.Command.Replacements[0].Requirements.Get(v1.CapacityTypeLabelKey); ct.Len() != 1 || !ct.Has(v1.CapacityTypeSpot) {
		t.Errorf("replacement capacity types %s, want spot only", ct)
	}
}

func TestMultiNodeConsolidatesThePrefixThatFits(t *testing.T) {
	pool := mkPool("default")
	var nodes []*state.StateNode
	for _, name := range []string{"a", "b", "c"} {
		nodes = append(nodes, mkNode(name, pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}))
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	out := MultiNode(context.Background(), env, candidates(t, env, v1.DisruptionReasonUnderutilized), budgetsFor(env, v1.DisruptionReasonUnderutilized))
	// Removing two moves their pods onto the third. Removing all three would
	// need an f0.4x replacement: the same type as the candidates, no saving.
	if out.Command == nil || out.Command.Decision() != "delete" || len(out.Command.Candidates) != 2 {
		t.Fatalf("multi-node %+v, want delete of two nodes", out.Command)
	}

	// Eight f1.8x nodes each running one 1-vCPU pod: all eight go for one
	// replacement that the pods fill exactly, and since f1.8x is itself an
	// option, only options cheaper than one f1.8x remain: f0.8x.
	nodes = nil
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		nodes = append(nodes, mkNode(name, pool, 1, 8, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}))
	}
	env = mkEnv([]*v1.NodePool{pool}, nodes, 2)
	out = MultiNode(context.Background(), env, candidates(t, env, v1.DisruptionReasonUnderutilized), budgetsFor(env, v1.DisruptionReasonUnderutilized))
	if out.Command == nil || out.Command.Decision() != "replace" || len(out.Command.Candidates) != 8 {
		t.Fatalf("multi-node %v, want all eight replaced by one node", out.Command)
	}
	if got := out.Command.Replacements[0].InstanceTypes[0].Type.Name; got != "f0.8x" {
		t.Errorf("replacement %s, want f0.8x", got)
	}
}

// TestMultiNodeExtendsPastACandidateThatCannotGo: the nodes most worth
// moving (the priciest) run one 15-vCPU pod each that fits on no other
// node and needs a node of the same type, which ends every prefix; two of
// the nodes behind them can still go together.
func TestMultiNodeExtendsPastACandidateThatCannotGo(t *testing.T) {
	pool := mkPool("default")
	var nodes []*state.StateNode
	for _, name := range []string{"a", "b"} {
		nodes = append(nodes, mkNode(name, pool, 0, 16, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("15")}))
	}
	for _, name := range []string{"c", "d", "e", "f"} {
		nodes = append(nodes, mkNode(name, pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1500m")}))
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	cands := candidates(t, env, v1.DisruptionReasonUnderutilized)
	if got := candidateNames(underutilized(cands)); !slices.Equal(got[:2], []string{"a", "b"}) {
		t.Fatalf("candidate order %v, want a and b first", got)
	}
	out := MultiNode(context.Background(), env, cands, budgetsFor(env, v1.DisruptionReasonUnderutilized))
	// c's and d's pods go to e and f (2.5 vCPU free each); a third node's
	// pod would need a new 4-vCPU node, the type it replaces.
	if out.Command == nil || out.Command.Decision() != "delete" || !slices.Equal(candidateNames(out.Command.Candidates), []string{"c", "d"}) {
		t.Fatalf("multi-node %v, want c and d deleted", out.Command)
	}
	if len(out.Moves) != 1 || len(out.Moves[0].Candidates) != 2 {
		t.Errorf("moves %+v, want the one move taken", out.Moves)
	}
}

// TestMultiNodeLooksPastTheBudgetsWorth: the budget allows three nodes and
// the three most worth moving cannot go; two nodes behind them can.
func TestMultiNodeLooksPastTheBudgetsWorth(t *testing.T) {
	pool := mkPool("default", budgets(v1.Budget{Nodes: "3"}))
	var nodes []*state.StateNode
	for _, name := range []string{"a", "b", "c"} {
		nodes = append(nodes, mkNode(name, pool, 0, 16, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("15")}))
	}
	for _, name := range []string{"d", "e", "f", "g"} {
		nodes = append(nodes, mkNode(name, pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1500m")}))
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	out := MultiNode(context.Background(), env, candidates(t, env, v1.DisruptionReasonUnderutilized), budgetsFor(env, v1.DisruptionReasonUnderutilized))
	if out.Command == nil || out.Command.Decision() != "delete" || !slices.Equal(candidateNames(out.Command.Candidates), []string{"d", "e"}) {
		t.Fatalf("multi-node %v, want d and e deleted", out.Command)
	}
}

// TestMultiNodeTriesSmallPodsFirst: more nodes that cannot go than the
// extension tries come first in the prefix order; the nodes of small pods
// behind them are tried first and go.
func TestMultiNodeTriesSmallPodsFirst(t *testing.T) {
	pool := mkPool("default", budgets(v1.Budget{Nodes: "100%"}))
	var nodes []*state.StateNode
	for i := range MultiNodeMaxCandidates + 1 {
		nodes = append(nodes, mkNode(fmt.Sprintf("a%03d", i), pool, 0, 16, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("15")}))
	}
	for _, name := range []string{"d", "e", "f", "g"} {
		nodes = append(nodes, mkNode(name, pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1500m")}))
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	cands := candidates(t, env, v1.DisruptionReasonUnderutilized)
	if got := candidateNames(underutilized(cands)); got[0] != "a000" {
		t.Fatalf("candidate order starts %v, want the nodes that cannot go first", got[:3])
	}
	out := MultiNode(context.Background(), env, cands, budgetsFor(env, v1.DisruptionReasonUnderutilized))
	if out.Command == nil || out.Command.Decision() != "delete" || !slices.Equal(candidateNames(out.Command.Candidates), []string{"d", "e"}) {
		t.Fatalf("multi-node %v, want d and e deleted", out.Command)
	}
}

func TestMultiNodeRespectsBudget(t *testing.T) {
	pool := mkPool("default", budgets(v1.Budget{Nodes: "20%"}))
	var nodes []*state.StateNode
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		nodes = append(nodes, mkNode(name, pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("100m")}))
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	out := MultiNode(context.Background(), env, candidates(t, env, v1.DisruptionReasonUnderutilized), budgetsFor(env, v1.DisruptionReasonUnderutilized))
	if out.Command == nil || len(out.Command.Candidates) != 2 {
		t.Fatalf("multi-node took %v, want the 20%% budget of 10 nodes: 2", out.Command)
	}
}

func TestDriftBudgetHoldsDriftWhileConsolidationProceeds(t *testing.T) {
	pool := mkPool("default", budgets(v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}}, v1.Budget{Nodes: "100%"}))
	nodes := []*state.StateNode{
		mkNode("a", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}, drifted(now)),
		mkNode("b", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}, drifted(now)),
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	if out := Drift(env, candidates(t, env, v1.DisruptionReasonDrifted), budgetsFor(env, v1.DisruptionReasonDrifted)); out.Command != nil {
		t.Fatalf("drift ran with a zero drift budget: %v", out.Command)
	}
	if out := SingleNode(context.Background(), env, candidates(t, env, v1.DisruptionReasonUnderutilized), budgetsFor(env, v1.DisruptionReasonUnderutilized)); out.Command == nil {
		t.Fatal("consolidation blocked by a drift-only budget")
	}
}

func TestDriftOrderAndReplacement(t *testing.T) {
	pool := mkPool("default")
	nodes := []*state.StateNode{
		mkNode("old-drift", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("3")}, drifted(now.Add(-time.Hour))),
		mkNode("new-drift", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("3")}, drifted(now)),
		mkNode("empty-drift", pool, 0, 4, v1.CapacityTypeOnDemand, nil, drifted(now)),
		mkNode("fine", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("3")}),
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	out := Drift(env, candidates(t, env, v1.DisruptionReasonDrifted), budgetsFor(env, v1.DisruptionReasonDrifted))
	if out.Command == nil || out.Command.Candidates[0].Name() != "empty-drift" || out.Command.Decision() != "delete" {
		t.Fatalf("drift %v, want the empty drifted node first, deleted", out.Command)
	}
	env = mkEnv([]*v1.NodePool{pool}, nodes[:2], 1)
	out = Drift(env, candidates(t, env, v1.DisruptionReasonDrifted), budgetsFor(env, v1.DisruptionReasonDrifted))
	if out.Command == nil || out.Command.Candidates[0].Name() != "old-drift" || len(out.Command.Replacements) != 1 {
		t.Fatalf("drift %v, want the longest-drifted node replaced (its 3-vCPU pod fits nowhere else)", out.Command)
	}
}

func TestDriftReplacesNodesWhoseTypeLeftTheCatalog(t *testing.T) {
	pool := mkPool("default")
	gone := func(n *state.StateNode) {
		n.Node.Labels[corev1.LabelInstanceTypeStable] = "x9.retired"
		n.NodeClaim.Labels[corev1.LabelInstanceTypeStable] = "x9.retired"
	}
	noOffering := func(n *state.StateNode) {
		n.Node.Labels[corev1.LabelTopologyZone] = "z9"
		n.NodeClaim.Labels[corev1.LabelTopologyZone] = "z9"
	}
	nodes := []*state.StateNode{
		mkNode("type-gone", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("3")}, gone, drifted(now.Add(-time.Hour))),
		mkNode("offering-gone", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("3")}, noOffering, drifted(now)),
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	if got, blocked := Candidates(env, v1.DisruptionReasonUnderutilized); len(got) != 0 || len(blocked) != 2 {
		t.Fatalf("consolidation candidates %v, want both nodes blocked: they cannot be priced", candidateNames(got))
	}
	cands := candidates(t, env, v1.DisruptionReasonDrifted)
	if !slices.Equal(candidateNames(cands), []string{"type-gone", "offering-gone"}) {
		t.Fatalf("drift candidates %v, want both nodes", candidateNames(cands))
	}
	out := Drift(env, cands, budgetsFor(env, v1.DisruptionReasonDrifted))
	if out.Command == nil || out.Command.Candidates[0].Name() != "type-gone" || len(out.Command.Replacements) != 1 {
		t.Fatalf("drift %v (rejected %v), want the node whose type is gone replaced", out.Command, out.Rejected)
	}
	if s := out.Command.String(); !strings.Contains(s, "type-gone/x9.retired/on-demand") {
		t.Errorf("command %q does not name the candidate's instance type", s)
	}
	// Without a catalog for the pool nothing is known, so nothing drifts.
	delete(env.InstanceTypes, pool.Name)
	if got, _ := Candidates(env, v1.DisruptionReasonDrifted); len(got) != 0 {
		t.Errorf("drift candidates %v without the pool's instance types, want none", candidateNames(got))
	}
}
