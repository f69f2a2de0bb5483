package disruption

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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
