package disruption

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

func deciding() *Controller {
	return &Controller{clock: clocktesting.NewFakeClock(now), lastEvents: map[string]eventMemo{}}
}

// TestDecideBatchesDeletes: one pass decides the emptiness command and
// then a multi-node delete of other nodes, the two within the pool's
// budget of 4, so both wait out one validation delay.
func TestDecideBatchesDeletes(t *testing.T) {
	pool := mkPool("default", budgets(v1.Budget{Nodes: "4"}))
	nodes := []*state.StateNode{
		mkNode("e1", pool, 0, 4, v1.CapacityTypeOnDemand, nil),
		mkNode("e2", pool, 0, 4, v1.CapacityTypeOnDemand, nil),
		mkNode("a", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
		mkNode("b", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
		mkNode("c", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
		mkNode("big", pool, 0, 16, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("12")}),
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	batch, started, _ := deciding().decide(context.Background(), env)
	if started != nil {
		t.Fatalf("started %s at once, want a batch", started)
	}
	var methods []string
	seen := map[string]bool{}
	for _, cmd := range batch {
		methods = append(methods, cmd.Method)
		if cmd.Decision() != "delete" {
			t.Errorf("%s: want a delete", cmd)
		}
		for _, c := range cmd.Candidates {
			if seen[c.Name()] {
				t.Errorf("%s is in two commands", c.Name())
			}
			seen[c.Name()] = true
			if !c.Leaving {
				t.Errorf("%s is not marked leaving", c.Name())
			}
		}
	}
	if !slices.Equal(methods, []string{MethodEmptiness, MethodMultiNode}) {
		t.Fatalf("batch %v, want emptiness then multi-node", batch)
	}
	if !seen["e1"] || !seen["e2"] || len(seen) != 4 || seen["big"] {
		t.Errorf("batch takes %v, want e1, e2 and two of a, b, c (the budget is 4)", seen)
	}
}

// TestDecideLeavesDriftForTheNextPass: drift needs no validation and
// starts at once when it is the first decision; found after an emptiness
// command it waits for the next pass instead of joining the batch.
func TestDecideLeavesDriftForTheNextPass(t *testing.T) {
	pool := mkPool("default")
	drifting := mkNode("d", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("3")}, drifted(now.Add(-10*time.Minute)))
	env := mkEnv([]*v1.NodePool{pool}, []*state.StateNode{mkNode("e", pool, 0, 4, v1.CapacityTypeOnDemand, nil), drifting}, 1)
	batch, started, _ := deciding().decide(context.Background(), env)
	if started != nil || len(batch) != 1 || batch[0].Method != MethodEmptiness {
		t.Fatalf("decided %v and %v now, want the emptiness command alone", batch, started)
	}

	drifting = mkNode("d", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("3")}, drifted(now.Add(-10*time.Minute)))
	env = mkEnv([]*v1.NodePool{pool}, []*state.StateNode{drifting}, 1)
	if batch, started, _ = deciding().decide(context.Background(), env); started == nil || started.Method != MethodDrift || len(batch) != 0 {
		t.Fatalf("decided %v and %v now, want the drift command now", batch, started)
	}
}

// consolidationRuns lists how multi-node and single-node consolidation
// went in one decide: their took entries.
func consolidationRuns(took []string) []string {
	var out []string
	for _, t := range took {
		if strings.HasPrefix(t, MethodMultiNode+"=") || strings.HasPrefix(t, MethodSingleNode+"=") {
			out = append(out, t)
		}
	}
	return out
}

func skipped(runs []string) bool {
	return len(runs) == 2 && runs[0] == MethodMultiNode+"=unchanged" && runs[1] == MethodSingleNode+"=unchanged"
}

// TestConsolidationSkippedWhileUnchanged: once both consolidation searches
// found nothing, passes over the same cluster skip them, until a pod
// changes or ConsolidatedTimeout passes.
func TestConsolidationSkippedWhileUnchanged(t *testing.T) {
	pool := mkPool("default")
	pods := []*corev1.Pod{mkPod("2"), mkPod("1"), mkPod("4")}
	passes, annotated := 0, false
	var limitRanges map[string][]*corev1.LimitRange
	cluster := func() []*state.StateNode {
		// Two 4-vCPU nodes, 3 and 4 vCPU used: neither goes, and no cheaper
		// node holds either one's pods. The snapshot lists a node's pods
		// in no set order.
		onA := []*corev1.Pod{pods[0], pods[1]}
		if passes%2 == 1 {
			onA = []*corev1.Pod{pods[1], pods[0]}
		}
		passes++
		a := mkNode("a", pool, 0, 4, v1.CapacityTypeOnDemand, onA)
		if annotated {
			a.Node.Annotations = map[string]string{"example.com/owner": "team-a"}
		}
		return []*state.StateNode{a, mkNode("b", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{pods[2]})}
	}
	c := deciding()
	pass := func(at time.Time) []string {
		env := mkEnv([]*v1.NodePool{pool}, cluster(), 2)
		env.Now = at
		env.Snapshot.LimitRanges = limitRanges
		batch, started, took := c.decide(context.Background(), env)
		if len(batch) > 0 || started != nil {
			t.Fatalf("decided %v, %v: want nothing", batch, started)
		}
		return consolidationRuns(took)
	}
	if runs := pass(now); len(runs) != 2 || skipped(runs) {
		t.Fatalf("first pass: consolidation %v, want both searches run", runs)
	}
	if runs := pass(now.Add(time.Minute)); !skipped(runs) {
		t.Fatalf("same cluster: consolidation %v, want both searches skipped", runs)
	}
	pods[2].ResourceVersion = "2" // the pod was updated (a new annotation, say)
	if runs := pass(now.Add(2 * time.Minute)); skipped(runs) {
		t.Fatalf("a pod changed: consolidation %v, want both searches run", runs)
	}
	if runs := pass(now.Add(3 * time.Minute)); !skipped(runs) {
		t.Fatalf("unchanged since: consolidation %v, want both searches skipped", runs)
	}
	// A LimitRange appeared: DaemonSet pods may ask for more.
	limitRanges = map[string][]*corev1.LimitRange{"monitoring": {{ObjectMeta: metav1.ObjectMeta{Namespace: "monitoring", Name: "defaults", ResourceVersion: "1"}}}}
	if runs := pass(now.Add(3 * time.Minute)); skipped(runs) {
		t.Fatalf("a LimitRange appeared: consolidation %v, want both searches run", runs)
	}
	annotated = true // a Node annotation changed (karpenter.sh/do-not-disrupt, say)
	if runs := pass(now.Add(3 * time.Minute)); skipped(runs) {
		t.Fatalf("a Node's annotations changed: consolidation %v, want both searches run", runs)
	}
	if runs := pass(now.Add(3*time.Minute + ConsolidatedTimeout)); skipped(runs) {
		t.Fatalf("%s after the searches last ran: consolidation %v, want both searches run", ConsolidatedTimeout, runs)
	}
}

// TestConsolidationRunsAgainAfterADecision: a pass that decided a command
// records nothing, so the next pass over the same cluster searches again.
func TestConsolidationRunsAgainAfterADecision(t *testing.T) {
	pool := mkPool("default")
	c := deciding()
	for i := range 2 {
		nodes := []*state.StateNode{
			mkNode("a", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
			mkNode("b", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
		}
		batch, _, took := c.decide(context.Background(), mkEnv([]*v1.NodePool{pool}, nodes, 1))
		if len(batch) == 0 {
			t.Fatalf("pass %d decided nothing, want a to go with b's pod moved, or the reverse (took %v)", i+1, took)
		}
		if skipped(consolidationRuns(took)) {
			t.Fatalf("pass %d skipped consolidation", i+1)
		}
	}
}
