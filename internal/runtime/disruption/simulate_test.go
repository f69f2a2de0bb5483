package disruption

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// uninitialized makes a node one that registered and has not initialized.
func uninitialized(n *state.StateNode) {
	delete(n.Node.Labels, v1.NodeInitializedLabelKey)
	notConsolidatable(n)
	var keep []metav1.Condition
	for _, c := range n.NodeClaim.Status.Conditions {
		if c.Type != v1.ConditionTypeInitialized {
			keep = append(keep, c)
		}
	}
	n.NodeClaim.Status.Conditions = keep
}

// inFlight is a launched claim of pool with no Node yet, with room for a
// 3-vCPU pod.
func inFlight(name string, pool *v1.NodePool, opts ...nodeOpt) *state.StateNode {
	n := mkNode(name, pool, 0, 4, v1.CapacityTypeOnDemand, nil, append(opts, uninitialized)...)
	n.NodeClaim.Status.Allocatable = n.Node.Status.Allocatable
	return &state.StateNode{NodeClaim: n.NodeClaim}
}

// TestSimulationDoesNotCountOnUninitializedNodes: the only room for a
// drifted node's pod is on a node or claim that has not initialized. The
// solver may place the pod there, but no method may disrupt the node on
// that ground: drift and consolidation pass it over, naming the node. Pods
// of a node already being deleted may still go there.
func TestSimulationDoesNotCountOnUninitializedNodes(t *testing.T) {
	pool := mkPool("default")
	// Only nodes labelled slot=x take the pods, and no new claim can have
	// that label: the pod goes to room or nowhere.
	slot := func(n *state.StateNode) { n.Labels()["slot"] = "x" }
	pod := func() *corev1.Pod {
		return mkPod("3", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"slot": "x"} })
	}
	for _, tc := range []struct {
		name, want string
		room       *state.StateNode
	}{
		{"registered node", "uninitialized node/room", mkNode("room", pool, 0, 4, v1.CapacityTypeOnDemand, nil, uninitialized, slot)},
		{"in-flight claim", "uninitialized nodeclaim/room", inFlight("room", pool, slot)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cand := mkNode("drifted", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{pod()}, drifted(now.Add(-time.Hour)), slot)
			env := mkEnv([]*v1.NodePool{pool}, []*state.StateNode{cand, tc.room}, 1)

			sim, err := Simulate(env, candidates(t, env, v1.DisruptionReasonDrifted))
			if err != nil {
				t.Fatal(err)
			}
			if len(sim.Plan.NewClaims) != 0 || len(sim.Plan.Placements) != 1 || sim.Plan.Placements[0].Node != "room" {
				t.Fatalf("plan %+v, want the pod placed on room", sim.Plan)
			}
			if len(sim.Unplaced) != 1 || !strings.Contains(sim.Unplaced[0].Err.Error(), tc.want) {
				t.Fatalf("unplaced %v, want the pod counted unplaced: %s", sim.Unplaced, tc.want)
			}

			out := Drift(env, candidates(t, env, v1.DisruptionReasonDrifted), budgetsFor(env, v1.DisruptionReasonDrifted))
			if out.Command != nil {
				t.Fatalf("drift decided %v, want the drifted node kept", out.Command)
			}
			for _, why := range out.Rejected {
				if !strings.Contains(why, tc.want) {
					t.Errorf("drift passed the node over with %q, want it to name %s", why, tc.want)
				}
			}

			cand.NodeClaim.Status.Conditions = append(cand.NodeClaim.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeConsolidatable, Status: metav1.ConditionTrue})
			single := SingleNode(context.Background(), env, candidates(t, env, v1.DisruptionReasonUnderutilized), budgetsFor(env, v1.DisruptionReasonUnderutilized))
			if single.Command != nil {
				t.Errorf("single-node consolidation decided %v, want the node kept", single.Command)
			}
		})
	}

	t.Run("initialized node", func(t *testing.T) {
		cand := mkNode("drifted", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{pod()}, drifted(now.Add(-time.Hour)), slot)
		env := mkEnv([]*v1.NodePool{pool}, []*state.StateNode{cand, mkNode("room", pool, 0, 4, v1.CapacityTypeOnDemand, nil, notConsolidatable, slot)}, 1)
		out := Drift(env, candidates(t, env, v1.DisruptionReasonDrifted), budgetsFor(env, v1.DisruptionReasonDrifted))
		if out.Command == nil || out.Command.Decision() != "delete" {
			t.Fatalf("drift decided %v (passed over: %v), want the drifted node deleted, its pod going to room", out.Command, out.Rejected)
		}
	})

	t.Run("pods of a deleting node", func(t *testing.T) {
		going := mkNode("going", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{pod()}, slot, func(n *state.StateNode) { v1.ApplyDisruptedTaint(n.Node) })
		empty := mkNode("empty", pool, 0, 4, v1.CapacityTypeOnDemand, nil)
		env := mkEnv([]*v1.NodePool{pool}, []*state.StateNode{going, empty, inFlight("room", pool, slot)}, 1)
		sim, err := Simulate(env, candidates(t, env, v1.DisruptionReasonEmpty))
		if err != nil {
			t.Fatal(err)
		}
		if len(sim.Plan.Placements) != 1 || sim.Plan.Placements[0].Node != "room" {
			t.Fatalf("plan %+v, want the deleting node's pod placed on room", sim.Plan)
		}
		if len(sim.Unplaced) != 0 {
			t.Errorf("unplaced %v: the deleting node's pod, placed on the in-flight claim, is not the candidate's", sim.Unplaced)
		}
	})
}

// TestConsolidationMovesPodsOntoNodesInsideConsolidateAfter: as in
// Karpenter, consolidateAfter decides which nodes may be disrupted, not where
// their pods may go. A node still inside its consolidateAfter is a
// destination like any other: the consolidated node's pod moves onto it.
func TestConsolidationMovesPodsOntoNodesInsideConsolidateAfter(t *testing.T) {
	pool := mkPool("default")
	slot := func(n *state.StateNode) { n.Labels()["slot"] = "x" }
	pod := mkPod("3", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"slot": "x"} })
	quiet := mkNode("quiet", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{pod}, slot)
	fresh := mkNode("fresh", pool, 0, 4, v1.CapacityTypeOnDemand, nil, notConsolidatable, slot)
	env := mkEnv([]*v1.NodePool{pool}, []*state.StateNode{quiet, fresh}, 1)
	out := SingleNode(context.Background(), env, candidates(t, env, v1.DisruptionReasonUnderutilized), budgetsFor(env, v1.DisruptionReasonUnderutilized))
	if out.Command == nil || out.Command.Decision() != "delete" {
		t.Fatalf("single-node consolidation decided %v (passed over: %v), want quiet deleted, its pod going to fresh", out.Command, out.Rejected)
	}
	if got := out.Command.Candidates[0].Name(); got != "quiet" {
		t.Errorf("consolidated %s, want quiet (fresh is inside consolidateAfter)", got)
	}
}

// TestDriftReplacesANodeWithOneNode: a drifted 16-vCPU node runs twelve
// 1-vCPU pods. An 8- and a 4-vCPU node would hold them for less, but the
// node drains while kube-scheduler binds its pods wherever room opens
// first, so drift replaces it with one node holding them all, as Karpenter
// does; new pods are still sized by price.
func TestDriftReplacesANodeWithOneNode(t *testing.T) {
	pool := mkPool("default")
	var pods []*corev1.Pod
	for range 12 {
		pods = append(pods, mkPod("1"))
	}
	cand := mkNode("drifted", pool, 0, 16, v1.CapacityTypeOnDemand, pods, drifted(now.Add(-time.Hour)))
	env := mkEnv([]*v1.NodePool{pool}, []*state.StateNode{cand}, 1)
	out := Drift(env, candidates(t, env, v1.DisruptionReasonDrifted), budgetsFor(env, v1.DisruptionReasonDrifted))
	if out.Command == nil {
		t.Fatalf("drift decided nothing (passed over: %v)", out.Rejected)
	}
	if n := len(out.Command.Replacements); n != 1 || len(out.Command.Replacements[0].Pods) != 12 {
		t.Fatalf("%d replacements, want one holding the 12 pods", n)
	}

	sim, err := Simulate(env, candidates(t, env, v1.DisruptionReasonDrifted))
	if err != nil {
		t.Fatal(err)
	}
	if len(sim.Plan.NewClaims) < 2 {
		t.Errorf("pods sized by price alone went on %d claims, want the cheaper split", len(sim.Plan.NewClaims))
	}
}
