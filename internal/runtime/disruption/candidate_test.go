package disruption

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

func TestCandidatesFilter(t *testing.T) {
	pool := mkPool("default")
	guarded := mkPod("100m", func(p *corev1.Pod) { p.Labels["app"] = "guarded" })
	nodes := []*state.StateNode{
		mkNode("ok", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
		mkNode("uninitialized", pool, 0, 4, v1.CapacityTypeOnDemand, nil, func(n *state.StateNode) {
			delete(n.Node.Labels, v1.NodeInitializedLabelKey)
		}),
		mkNode("deleting", pool, 0, 4, v1.CapacityTypeOnDemand, nil, func(n *state.StateNode) {
			n.NodeClaim.DeletionTimestamp = &metav1.Time{Time: now}
		}),
		mkNode("tainted", pool, 0, 4, v1.CapacityTypeOnDemand, nil, func(n *state.StateNode) {
			n.Node.Spec.Taints = []corev1.Taint{v1.DisruptedNoScheduleTaint}
		}),
		mkNode("queued", pool, 0, 4, v1.CapacityTypeOnDemand, nil),
		mkNode("node-dnd", pool, 0, 4, v1.CapacityTypeOnDemand, nil, func(n *state.StateNode) {
			n.Node.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}),
		mkNode("pod-dnd", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1", func(p *corev1.Pod) {
			p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		})}),
		mkNode("pdb", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{guarded}),
		mkNode("nominated", pool, 0, 4, v1.CapacityTypeOnDemand, nil, func(n *state.StateNode) { n.Nominated = []*corev1.Pod{mkPod("1")} }),
		mkNode("unknown-type", pool, 0, 4, v1.CapacityTypeOnDemand, nil, func(n *state.StateNode) {
			n.Node.Labels[corev1.LabelInstanceTypeStable] = "x9.huge"
		}),
		{NodeClaim: &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "in-flight"}}},
		{Node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "unmanaged"}}},
	}
	env := mkEnv([]*v1.NodePool{pool}, nodes, 1)
	env.Queued["queued"] = true
	env.PDBs = NewPDBLimits([]policyv1.PodDisruptionBudget{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "guarded"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0},
	}})
	cands, blocked := Candidates(env, v1.DisruptionReasonUnderutilized)
	if got := candidateNames(cands); !slices.Equal(got, []string{"ok"}) {
		t.Fatalf("candidates %v, want only ok", got)
	}
	why := map[string]string{}
	for _, b := range blocked {
		why[b.Name()] = b.Reason
	}
	for name, want := range map[string]string{
		"node-dnd":     "node has the karpenter.sh/do-not-disrupt annotation",
		"pod-dnd":      "has the karpenter.sh/do-not-disrupt annotation",
		"pdb":          "pdb default/guarded prevents pod evictions",
		"nominated":    "nominated",
		"unknown-type": "x9.huge",
	} {
		if !strings.Contains(why[name], want) {
			t.Errorf("node %s blocked for %q, want it to mention %q", name, why[name], want)
		}
	}
	if len(blocked) != 5 {
		t.Errorf("blocked %v, want exactly the five nodes with a user-visible reason", why)
	}
}

// Emptiness needs no price: an empty node whose type left the catalog is
// deleted like any other, while consolidation, which compares prices,
// passes it over.
func TestEmptyNodeOfATypeGoneFromTheCatalogIsAnEmptinessCandidate(t *testing.T) {
	pool := mkPool("default")
	gone := mkNode("gone-type", pool, 0, 4, v1.CapacityTypeOnDemand, nil, func(n *state.StateNode) {
		n.Node.Labels[corev1.LabelInstanceTypeStable] = "x9.huge"
	})
	env := mkEnv([]*v1.NodePool{pool}, []*state.StateNode{gone}, 1)
	if got, _ := Candidates(env, v1.DisruptionReasonEmpty); !slices.Equal(candidateNames(got), []string{"gone-type"}) {
		t.Fatalf("emptiness candidates %v, want the empty node of an unknown type", candidateNames(got))
	}
	if got, _ := Candidates(env, v1.DisruptionReasonUnderutilized); len(got) != 0 {
		t.Fatalf("consolidation candidates %v, want none without a price", candidateNames(got))
	}
}

func TestDriftWithTerminationGracePeriodIgnoresBlockingPods(t *testing.T) {
	pool := mkPool("default")
	dnd := func(p *corev1.Pod) { p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"} }
	withTGP := mkNode("tgp", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1", dnd)}, func(n *state.StateNode) {
		n.NodeClaim.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
	})
	without := mkNode("no-tgp", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1", dnd)})
	env := mkEnv([]*v1.NodePool{pool}, []*state.StateNode{withTGP, without}, 1)
	if got, _ := Candidates(env, v1.DisruptionReasonDrifted); !slices.Equal(candidateNames(got), []string{"tgp"}) {
		t.Fatalf("drift candidates %v, want only the node with a terminationGracePeriod", candidateNames(got))
	}
	if got, _ := Candidates(env, v1.DisruptionReasonUnderutilized); len(got) != 0 {
		t.Fatalf("consolidation candidates %v, want none: do-not-disrupt blocks consolidation regardless", candidateNames(got))
	}
}

func TestCandidatesOrderedByDisruptionCost(t *testing.T) {
	pool := mkPool("default")
	prio := int32(1 << 25) // doubles a pod's eviction cost
	nodes := []*state.StateNode{
		mkNode("three-pods", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1"), mkPod("1"), mkPod("1")}),
		mkNode("empty", pool, 0, 4, v1.CapacityTypeOnDemand, nil),
		mkNode("one-pod", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
		mkNode("one-important-pod", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1", func(p *corev1.Pod) { p.Spec.Priority = &prio })}),
		// Close to expiry, three pods cost less than one on a fresh node.
		mkNode("expiring", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1"), mkPod("1"), mkPod("1")}, func(n *state.StateNode) {
			d := 10 * time.Hour
			n.NodeClaim.Spec.ExpireAfter = v1.NillableDuration{Duration: &d}
			n.NodeClaim.CreationTimestamp = metav1.NewTime(now.Add(-9 * time.Hour))
		}),
	}
	cands, _ := Candidates(mkEnv([]*v1.NodePool{pool}, nodes, 1), v1.DisruptionReasonUnderutilized)
	want := []string{"empty", "expiring", "one-pod", "one-important-pod", "three-pods"}
	if got := candidateNames(cands); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestEmptyMeansNothingCostlyToReschedule(t *testing.T) {
	pool := mkPool("default")
	cheap := func(p *corev1.Pod) { p.Spec.Priority = new(int32(-1 << 25)) } // eviction cost 0
	expendable := func(p *corev1.Pod) {
		p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": "-2147483648"}
	}
	daemon := func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", Controller: new(true)}}
	}
	nodes := []*state.StateNode{
		mkNode("no-pods", pool, 0, 4, v1.CapacityTypeOnDemand, nil),
		mkNode("daemonset-only", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("100m", daemon)}),
		mkNode("non-positive-cost-pods", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1", cheap), mkPod("1", expendable)}),
		mkNode("normal-pod", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1")}),
		mkNode("cheap-and-normal", pool, 0, 4, v1.CapacityTypeOnDemand, []*corev1.Pod{mkPod("1", expendable), mkPod("1")}),
	}
	cands, _ := Candidates(mkEnv([]*v1.NodePool{pool}, nodes, 1), v1.DisruptionReasonEmpty)
	empty := map[string]bool{}
	for _, c := range cands {
		empty[c.Name()] = c.Empty()
	}
	for name, want := range map[string]bool{
		"no-pods": true, "daemonset-only": true, "non-positive-cost-pods": true,
		"normal-pod": false, "cheap-and-normal": false,
	} {
		got, ok := empty[name]
		if !ok {
			t.Fatalf("node %s is not a candidate", name)
		}
		if got != want {
			t.Errorf("node %s: empty %v, want %v", name, got, want)
		}
	}
	// The non-positive-cost pods still need a new home: they are what the
	// node's deletion evicts.
	for _, c := range cands {
		if c.Name() == "non-positive-cost-pods" && len(c.Reschedulable) != 2 {
			t.Errorf("node %s has %d reschedulable pods, want 2", c.Name(), len(c.Reschedulable))
		}
	}
}

func TestPDBLimits(t *testing.T) {
	always := policyv1.AlwaysAllow
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	pdb := func(name string, allowed int32, policy *policyv1.UnhealthyPodEvictionPolicyType) policyv1.PodDisruptionBudget {
		return policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: sel, UnhealthyPodEvictionPolicy: policy},
			Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
		}
	}
	ready := mkPod("1")
	unready := mkPod("1", func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse })
	other := mkPod("1", func(p *corev1.Pod) { p.Namespace = "other" })
	for _, tc := range []struct {
		name    string
		pdbs    []policyv1.PodDisruptionBudget
		pod     *corev1.Pod
		blocked bool
	}{
		{"allows", []policyv1.PodDisruptionBudget{pdb("a", 1, nil)}, ready, false},
		{"exhausted", []policyv1.PodDisruptionBudget{pdb("a", 0, nil)}, ready, true},
		{"two pdbs", []policyv1.PodDisruptionBudget{pdb("a", 1, nil), pdb("b", 1, nil)}, ready, true},
		{"unready with AlwaysAllow", []policyv1.PodDisruptionBudget{pdb("a", 0, &always)}, unready, false},
		{"ready with AlwaysAllow", []policyv1.PodDisruptionBudget{pdb("a", 0, &always)}, ready, true},
		{"other namespace", []policyv1.PodDisruptionBudget{pdb("a", 0, nil)}, other, false},
	} {
		if got := NewPDBLimits(tc.pdbs).Blocking(tc.pod) != ""; got != tc.blocked {
			t.Errorf("%s: blocked %v, want %v", tc.name, got, tc.blocked)
		}
	}
}
