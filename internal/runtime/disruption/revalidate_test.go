package disruption

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// revalidationWorld is a, b and c, each running a 1-vCPU pod, and r, which
// is not a candidate and has room for rFree 1-vCPU pods; the nodes named
// in busy are no longer consolidatable.
func revalidationWorld(rFree int, busy ...string) *Env {
	pool := mkPool("default")
	var nodes []*state.StateNode
	for _, name := range []string{"a", "b", "c"} {
		var opts []nodeOpt
		if slices.Contains(busy, name) {
			opts = append(opts, notConsolidatable)
		}
		nodes = append(nodes, mkNode(name, pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}, opts...))
	}
	var rPods []*corev1.Pod
	for range 4 - rFree {
		rPods = append(rPods, mkPod("1"))
	}
	nodes = append(nodes, mkNode("r", pool, 0, 4, v1.CapacityTypeOnDemand, rPods, notConsolidatable))
	return mkEnv([]*v1.NodePool{pool}, nodes, 1)
}

func byNames(t *testing.T, env *Env, names ...string) []*Candidate {
	t.Helper()
	var out []*Candidate
	for _, c := range candidates(t, env, v1.DisruptionReasonUnderutilized) {
		if slices.Contains(names, c.Name()) {
			out = append(out, c)
		}
	}
	if len(out) != len(names) {
		t.Fatalf("candidates %v, want %v", candidateNames(out), names)
	}
	return out
}

// TestRevalidateNarrowsAMultiNodeCommand: a, b and c were to go, their
// pods onto r; during the wait r took a pod, so three no longer go without
// a new node. The command keeps a and b, which still go as decided.
func TestRevalidateNarrowsAMultiNodeCommand(t *testing.T) {
	before := revalidationWorld(3)
	cmd, err := Consolidate(before, MethodMultiNode, byNames(t, before, "a", "b", "c"))
	if err != nil || cmd.Decision() != "delete" {
		t.Fatalf("decision %v (%v), want a, b and c deleted", cmd, err)
	}
	after := revalidationWorld(2)
	got, err := Revalidate(context.Background(), after, cmd)
	if err != nil {
		t.Fatalf("revalidation: %v, want the command narrowed to a and b", err)
	}
	if got.Decision() != "delete" || !slices.Equal(candidateNames(got.Candidates), []string{"a", "b"}) {
		t.Errorf("revalidated %v, want a and b deleted", got)
	}

	// b had a pod scheduled during the wait: a and c still go.
	got, err = Revalidate(context.Background(), revalidationWorld(3, "b"), cmd)
	if err != nil || !slices.Equal(candidateNames(got.Candidates), []string{"a", "c"}) {
		t.Errorf("revalidated %v (%v), want a and c deleted", got, err)
	}

	// A single-node command is kept whole or abandoned, as before.
	single, err := Consolidate(before, MethodSingleNode, byNames(t, before, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Revalidate(context.Background(), revalidationWorld(3, "a"), single); err == nil {
		t.Errorf("revalidated %v, want the single-node command abandoned", got)
	}
}

// TestRevalidateKeepsTheNodesStillEmpty: of two empty nodes, one took a
// pod during the wait; the emptiness command goes on with the other.
func TestRevalidateKeepsTheNodesStillEmpty(t *testing.T) {
	pool := mkPool("default")
	env := func(busy bool) *Env {
		var pods []*corev1.Pod
		if busy {
			pods = []*corev1.Pod{mkPod("1")}
		}
		return mkEnv([]*v1.NodePool{pool}, []*state.StateNode{
			mkNode("e1", pool, 0, 4, v1.CapacityTypeOnDemand, nil),
			mkNode("e2", pool, 0, 4, v1.CapacityTypeOnDemand, pods),
		}, 1)
	}
	before := env(false)
	out := Emptiness(before, candidates(t, before, v1.DisruptionReasonEmpty), budgetsFor(before, v1.DisruptionReasonEmpty))
	if out.Command == nil || len(out.Command.Candidates) != 2 {
		t.Fatalf("emptiness %v, want both nodes", out.Command)
	}
	got, err := Revalidate(context.Background(), env(true), out.Command)
	if err != nil || !slices.Equal(candidateNames(got.Candidates), []string{"e1"}) {
		t.Fatalf("revalidated %v (%v), want e1 alone", got, err)
	}
	if _, err := Revalidate(context.Background(), env(true), &Command{Method: MethodEmptiness, Reason: v1.DisruptionReasonEmpty,
		Candidates: byNamesFor(t, before, v1.DisruptionReasonEmpty, "e2")}); err == nil || !strings.Contains(err.Error(), "no longer empty") {
		t.Errorf("revalidating e2 alone: %v, want it no longer empty", err)
	}
}

func byNamesFor(t *testing.T, env *Env, reason v1.DisruptionReason, names ...string) []*Candidate {
	t.Helper()
	var out []*Candidate
	for _, c := range candidates(t, env, reason) {
		if slices.Contains(names, c.Name()) {
			out = append(out, c)
		}
	}
	return out
}
