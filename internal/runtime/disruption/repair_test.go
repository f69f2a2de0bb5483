package disruption

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/repair"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// repairPolicies: Ready=False tolerated 30m with a 10m drain bound, and
// the required fallback.
func repairPolicies(t *testing.T) *repair.Matcher {
	t.Helper()
	drain := 10 * time.Minute
	m, err := repair.NewMatcher([]cloud.RepairPolicy{
		{ConditionType: corev1.NodeReady, ConditionStatus: corev1.ConditionFalse, ReasonRegex: ".*", TolerationDuration: 30 * time.Minute, TerminationGracePeriod: &drain, Action: cloud.ReplaceNode},
		{ConditionType: "KernelReady", ConditionStatus: corev1.ConditionFalse, TolerationDuration: 30 * time.Minute, TerminationGracePeriod: &drain, Action: cloud.ReplaceNode},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// notReadySince makes the node's Ready condition False from since on.
func notReadySince(since time.Time) nodeOpt {
	return func(n *state.StateNode) {
		n.Node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", LastTransitionTime: metav1.NewTime(since)}}
	}
}

func annotated(key string) nodeOpt {
	return func(n *state.StateNode) { n.Node.Annotations = map[string]string{key: "true"} }
}

func repairEnv(t *testing.T, pool *v1.NodePool, nodes ...*state.StateNode) *Env {
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	env.Repair = repairPolicies(t)
	return env
}

func runRepair(t *testing.T, env *Env) Outcome {
	t.Helper()
	return Repair(env, candidates(t, env, v1.DisruptionReasonUnhealthy), budgetsFor(env, v1.DisruptionReasonUnhealthy))
}

func healthyNodes(pool *v1.NodePool, n int) []*state.StateNode {
	var out []*state.StateNode
	for i := range n {
		out = append(out, mkNode("ok"+string(rune('a'+i)), pool, 0, 4, v1.CapacityTypeOnDemand, nil))
	}
	return out
}

func TestRepairReplacesAfterToleration(t *testing.T) {
	pool := mkPool("default")
	pods := []*corev1.Pod{mkPod("1"), mkPod("1")}
	// Not Ready for 29 minutes: within the toleration.
	early := repairEnv(t, pool, append(healthyNodes(pool, 4), mkNode("sick", pool, 0, 4, v1.CapacityTypeOnDemand, pods, notReadySince(now.Add(-29*time.Minute))))...)
	if out := runRepair(t, early); out.Command != nil || out.Eligible != 0 {
		t.Fatalf("repair within the toleration: %+v", out)
	}
	env := repairEnv(t, pool, append(healthyNodes(pool, 4), mkNode("sick", pool, 0, 4, v1.CapacityTypeOnDemand, pods, notReadySince(now.Add(-31*time.Minute))))...)
	out := runRepair(t, env)
	if out.Command == nil {
		t.Fatalf("no repair after the toleration: blocked %v %v", out.Blocked, out.RepairBlocked)
	}
	cmd := out.Command
	if cmd.Method != MethodRepair || cmd.Reason != v1.DisruptionReasonUnhealthy || len(cmd.Candidates) != 1 || cmd.Candidates[0].Name() != "sick" {
		t.Fatalf("command %s", cmd)
	}
	// The pods fit on the healthy nodes (3 free vCPUs each): no launch.
	if cmd.Decision() != "delete" || cmd.NeedsValidation() {
		t.Errorf("command %s: want a delete without delayed validation", cmd)
	}
	c := cmd.Candidates[0]
	if c.DrainBound == nil || *c.DrainBound != 10*time.Minute || c.Repair.Condition != corev1.NodeReady {
		t.Errorf("candidate repair %+v bound %v", c.Repair, c.DrainBound)
	}
	// Alone, its pods need a replacement, launched first.
	alone := repairEnv(t, pool, mkNode("sick", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1"), mkPod("1")}, notReadySince(now.Add(-31*time.Minute))))
	if out := runRepair(t, alone); out.Command == nil || out.Command.Decision() != "replace" || len(out.Command.Replacements) != 1 {
		t.Fatalf("a lone unhealthy node with pods: %+v", out)
	}
}

func TestRepairVetoesAndOverrides(t *testing.T) {
	pool := mkPool("default")
	sick := notReadySince(now.Add(-time.Hour))
	// do-not-disrupt does not keep a broken node; do-not-repair does.
	env := repairEnv(t, pool, append(healthyNodes(pool, 4), mkNode("sick", pool, 0, 4, v1.CapacityTypeOnDemand, nil, sick, annotated(v1.DoNotDisruptAnnotationKey)))...)
	if out := runRepair(t, env); out.Command == nil {
		t.Errorf("do-not-disrupt blocked repair: %v", out.Blocked)
	}
	env = repairEnv(t, pool, append(healthyNodes(pool, 4), mkNode("sick", pool, 0, 4, v1.CapacityTypeOnDemand, nil, sick, annotated(v1.DoNotRepairAnnotationKey)))...)
	out := runRepair(t, env)
	if out.Command != nil || len(out.Blocked) != 1 {
		t.Fatalf("do-not-repair: %+v", out)
	}
	for _, why := range out.Blocked {
		if !strings.Contains(why, v1.DoNotRepairAnnotationKey) {
			t.Errorf("blocked because %q", why)
		}
	}
	// A pod with do-not-disrupt is drained within the policy's bound.
	pinned := mkPod("1", func(p *corev1.Pod) { p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"} })
	env = repairEnv(t, pool, append(healthyNodes(pool, 4), mkNode("sick", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{pinned}, sick))...)
	if out := runRepair(t, env); out.Command == nil || *out.Command.Candidates[0].DrainBound != 10*time.Minute {
		t.Errorf("a do-not-disrupt pod blocked repair: %+v", out)
	}
	// A node that never initialized is repaired too (no budget needed).
	uninit := func(n *state.StateNode) {
		n.NodeClaim.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionFalse}}
		delete(n.Node.Labels, v1.NodeInitializedLabelKey)
	}
	zero := mkPool("default", budgets(v1.Budget{Nodes: "0"}))
	env = repairEnv(t, zero, append(healthyNodes(zero, 4), mkNode("sick", zero, 0, 4, v1.CapacityTypeOnDemand, nil, sick, uninit))...)
	if out := runRepair(t, env); out.Command == nil {
		t.Errorf("an uninitialized unhealthy node was not repaired: %+v", out)
	}
	// Gate off: nothing.
	env = repairEnv(t, pool, append(healthyNodes(pool, 4), mkNode("sick", pool, 0, 4, v1.CapacityTypeOnDemand, nil, sick))...)
	env.Repair = nil
	if out := runRepair(t, env); out.Command != nil {
		t.Error("repair ran with the NodeRepair gate off")
	}
}

func TestRepairBudgets(t *testing.T) {
	sick := notReadySince(now.Add(-time.Hour))
	// An Unhealthy budget of 0 stops repair of initialized nodes...
	zero := mkPool("default", budgets(v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonUnhealthy}}))
	env := repairEnv(t, zero, append(healthyNodes(zero, 4), mkNode("sick", zero, 0, 4, v1.CapacityTypeOnDemand, nil, sick))...)
	if out := runRepair(t, env); out.Command != nil {
		t.Errorf("repair despite an Unhealthy budget of 0: %s", out.Command)
	}
	// ...a budget for other reasons does not.
	other := mkPool("default", budgets(v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}}))
	env = repairEnv(t, other, append(healthyNodes(other, 4), mkNode("sick", other, 0, 4, v1.CapacityTypeOnDemand, nil, sick))...)
	if out := runRepair(t, env); out.Command == nil {
		t.Error("a Drifted budget of 0 stopped repair")
	}
	// Not-Ready nodes do not use up repair's budget (they are what it is
	// for), while they do count against the other reasons'.
	one := mkPool("default", budgets(v1.Budget{Nodes: "1"}))
	env = repairEnv(t, one, append(healthyNodes(one, 4), mkNode("sick", one, 0, 4, v1.CapacityTypeOnDemand, nil, sick))...)
	if b := budgetsFor(env, v1.DisruptionReasonUnhealthy)["default"]; b != 1 {
		t.Errorf("Unhealthy budget %d, want 1", b)
	}
	if b := budgetsFor(env, v1.DisruptionReasonDrifted)["default"]; b != 0 {
		t.Errorf("Drifted budget %d, want 0 (the NotReady node counts as disrupting)", b)
	}
}

func TestRepairSafetyLimit(t *testing.T) {
	pool := mkPool("default")
	sick := notReadySince(now.Add(-time.Hour))
	// 2 of 5 unhealthy: more than 20 % (1 node), so repair stops.
	nodes := append(healthyNodes(pool, 3),
		mkNode("sick1", pool, 0, 4, v1.CapacityTypeOnDemand, nil, sick),
		mkNode("sick2", pool, 0, 4, v1.CapacityTypeOnDemand, nil, notReadySince(now.Add(-time.Minute))))
	out := runRepair(t, repairEnv(t, pool, nodes...))
	if out.Command != nil || len(out.RepairBlocked) != 1 {
		t.Fatalf("2 of 5 unhealthy: %+v", out)
	}
	for c, why := range out.RepairBlocked {
		if c.Name() != "sick1" || !strings.Contains(why, `more than 20% of nodes in nodepool "default" are unhealthy`) {
			t.Errorf("NodeRepairBlocked %s: %q", c.Name(), why)
		}
	}
	// 1 of 5: repaired.
	nodes = append(healthyNodes(pool, 4), mkNode("sick1", pool, 0, 4, v1.CapacityTypeOnDemand, nil, sick))
	if out := runRepair(t, repairEnv(t, pool, nodes...)); out.Command == nil {
		t.Fatalf("1 of 5 unhealthy not repaired: %+v", out)
	}
	// The oldest fault goes first.
	nodes = append(healthyNodes(pool, 8),
		mkNode("newer", pool, 0, 4, v1.CapacityTypeOnDemand, nil, notReadySince(now.Add(-40*time.Minute))),
		mkNode("older", pool, 0, 4, v1.CapacityTypeOnDemand, nil, notReadySince(now.Add(-2*time.Hour))))
	if out := runRepair(t, repairEnv(t, pool, nodes...)); out.Command == nil || out.Command.Candidates[0].Name() != "older" {
		t.Fatalf("order: %+v", out)
	}
}

// A repair resumed by a new leader keeps the drain bound its policy gives.
func TestResumedRepairKeepsItsDrainBound(t *testing.T) {
	pool := mkPool("default")
	sick := mkNode("sick", pool, 0, 4, v1.CapacityTypeOnDemand, nil, notReadySince(now.Add(-time.Hour)), func(n *state.StateNode) {
		n.NodeClaim.Status.Conditions = append(n.NodeClaim.Status.Conditions, metav1.Condition{
			Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue, Reason: string(v1.DisruptionReasonUnhealthy)})
	})
	replacement := mkNode("replacement", pool, 0, 4, v1.CapacityTypeOnDemand, nil, func(n *state.StateNode) {
		n.NodeClaim.Annotations = map[string]string{v1.ReplacementForAnnotationKey: "sick"}
	})
	env := repairEnv(t, pool, sick, replacement)
	got := resumable(env, map[string]*state.StateNode{"sick": sick})
	if len(got) != 1 || got[0].cmd.Reason != v1.DisruptionReasonUnhealthy || len(got[0].cmd.Candidates) != 1 {
		t.Fatalf("resumed %+v", got)
	}
	if b := got[0].cmd.Candidates[0].DrainBound; b == nil || *b != 10*time.Minute {
		t.Errorf("resumed repair drain bound %v, want 10m", b)
	}
}
