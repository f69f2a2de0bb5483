package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// testDisruption runs the disruption scenarios that do not disturb each
// other in parallel, then the AMI release, which drifts every node of the
// shared node class, on its own.
func testDisruption(t *testing.T) {
	nodeClass(t, "default")
	t.Run("independent", func(t *testing.T) {
		t.Run("consolidation", testConsolidationScaleDown)
		t.Run("do-not-disrupt", testDoNotDisrupt)
		t.Run("budgets", testBudgets)
		t.Run("expiration", testExpiration)
		t.Run("delete-nodeclaim-and-node", testDeleteNodeClaimAndNode)
		t.Run("delete-nodepool", testDeleteNodePool)
	})
	t.Run("ami-drift", testAMIDrift)
}

// testConsolidationScaleDown: 60 pods scale to 6; consolidation brings the
// pool's cost within 10% of a fresh provisioning of 6 pods while a PDB
// with maxUnavailable 1 is never exceeded, and every removed instance is
// terminated.
func testConsolidationScaleDown(t *testing.T) {
	t.Parallel()
	const after = 20 * time.Second
	// The reference: the same 6 pods provisioned from scratch.
	freshNS := scenarioNamespace(t, "e2e-consolidate-fresh")
	consolidatingPool(t, "consolidate-fresh", "Never", nil)
	create(t, deployment(freshNS, "pause", 6, podSpec("consolidate-fresh", requests("1", "1.5Gi"))))
	waitRunning(t, freshNS, 6)
	fresh, freshNodes := poolCost(t, "consolidate-fresh")
	t.Logf("fresh provisioning of 6 pods: %d nodes, $%.4f/h", freshNodes, fresh)

	ns := scenarioNamespace(t, "e2e-consolidate")
	consolidatingPool(t, "consolidate", after.String(), nil)
	d := deployment(ns, "pause", 60, podSpec("consolidate", requests("1", "1.5Gi")))
	create(t, d)
	create(t, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pause"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: new(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pause"}},
		},
	})
	waitRunning(t, ns, 60)
	before := instanceIDs(t, "consolidate")
	full, fullNodes := poolCost(t, "consolidate")
	t.Logf("60 pods: %d nodes, $%.4f/h", fullNodes, full)

	scale(t, d, 6)
	eventually(t, "6 pods left", func() (bool, string) {
		ps := pods(t, ns, map[string]string{"app": "pause"})
		n, waiting := running(ps)
		return n == 6 && len(ps) == 6, fmt.Sprintf("%d pods, %d running; %s", len(ps), n, waiting)
	})
	inv := watchInvariants(t, ns, "pause", 6, 1, "consolidate")
	scaledDown := time.Now()
	eventually(t, "cost within 10% of a fresh provisioning", func() (bool, string) {
		cost, nodes := poolCost(t, "consolidate")
		return cost <= 1.1*fresh && disrupting(t, "consolidate") == 0, fmt.Sprintf("%d nodes at $%.4f/h, target $%.4f/h", nodes, cost, 1.1*fresh)
	})
	cost, nodes := poolCost(t, "consolidate")
	t.Logf("consolidated to %d nodes at $%.4f/h (fresh $%.4f/h, ratio %.2f) %s after the scale-down (consolidateAfter %s)",
		nodes, cost, fresh, cost/fresh, time.Since(scaledDown).Round(time.Second), after)
	inv.check(t)
	after2 := instanceIDs(t, "consolidate")
	var removed []string
	for id := range before {
		if !after2[id] {
			removed = append(removed, id)
		}
	}
	t.Logf("%d instances removed", len(removed))
	expectTerminatedInstances(t, removed)
}

// testDoNotDisrupt: a pod or a node with karpenter.sh/do-not-disrupt keeps
// an underutilized node from being consolidated, with DisruptionBlocked.
func testDoNotDisrupt(t *testing.T) {
	t.Parallel()
	for _, level := range []string{"pod", "node"} {
		pool := "dnd-" + level
		ns := scenarioNamespace(t, "e2e-"+pool)
		consolidatingPool(t, pool, "5s", nil)
		spec := podSpec(pool, requests("1", "1Gi"))
		d := deployment(ns, "pause", 3, spec)
		if level == "pod" {
			d.Spec.Template.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}
		create(t, d)
		waitRunning(t, ns, 3)
		if level == "node" {
			for _, n := range nodesOf(t, pool) {
				patch := client.MergeFrom(n.DeepCopy())
				metav1.SetMetaDataAnnotation(&n.ObjectMeta, v1.DoNotDisruptAnnotationKey, "true")
				if err := w.kube.Patch(context.Background(), &n, patch); err != nil {
					t.Fatal(err)
				}
			}
		}
		if level == "node" {
			// Underutilized now, and one node may even be empty.
			scale(t, d, 1)
			waitRunning(t, ns, 1)
		}
		claims := claimNames(t, pool)
		for _, n := range nodesOf(t, pool) {
			eventually(t, "DisruptionBlocked on node "+n.Name, func() (bool, string) {
				return len(runtimeEvents(t, "default", n.Name, "DisruptionBlocked")) > 0, "no event yet"
			})
			e := runtimeEvents(t, "default", n.Name, "DisruptionBlocked")[0]
			t.Logf("%s-level: node %s: %s", level, n.Name, e.Note)
			if !strings.Contains(e.Note, v1.DoNotDisruptAnnotationKey) {
				t.Errorf("DisruptionBlocked says %q, want it to name %s", e.Note, v1.DoNotDisruptAnnotationKey)
			}
		}
		// Three more disruption passes go by: still nothing consolidated.
		time.Sleep(30 * time.Second)
		if got := claimNames(t, pool); strings.Join(got, ",") != strings.Join(claims, ",") {
			t.Errorf("%s-level do-not-disrupt: nodeclaims changed from %v to %v", level, claims, got)
		}
	}
}

func claimNames(t *testing.T, pool string) []string {
	t.Helper()
	var out []string
	for _, c := range claimsOf(t, pool) {
		if c.DeletionTimestamp == nil {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out
}

// testBudgets: with budgets {0 for Drifted} and {20%}, drifted nodes stay
// while emptiness removes 6 of 10 nodes, never more than 2 at once.
func testBudgets(t *testing.T) {
	t.Parallel()
	const pool = "budget"
	ns := scenarioNamespace(t, "e2e-budget")
	consolidatingPool(t, pool, "10s", func(np *v1.NodePool) {
		np.Spec.Disruption.Budgets = []v1.Budget{
			{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}},
			{Nodes: "20%"},
		}
	})
	spec := podSpec(pool, requests("500m", "512Mi"))
	hostnameAntiAffinity(&spec, "pause")
	d := deployment(ns, "pause", 10, spec)
	create(t, d)
	waitRunning(t, ns, 10)
	if n := len(nodesOf(t, pool)); n != 10 {
		t.Fatalf("%d nodes for 10 pods with hostname anti-affinity", n)
	}
	var mu sync.Mutex
	worst := 0
	stop := observe(200*time.Millisecond, func() {
		n := disrupting(t, pool)
		mu.Lock()
		worst = max(worst, n)
		mu.Unlock()
	})
	defer stop()
	// Drift every node: a template label changes the NodePool hash.
	np := &v1.NodePool{}
	if err := w.kube.Get(context.Background(), client.ObjectKey{Name: pool}, np); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(np.DeepCopy())
	np.Spec.Template.Labels = map[string]string{"e2e.joist.dev/revision": "2"}
	if err := w.kube.Patch(context.Background(), np, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "all 10 nodeclaims Drifted", func() (bool, string) {
		n := 0
		for _, c := range claimsOf(t, pool) {
			if meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeDrifted) {
				n++
			}
		}
		return n == 10, fmt.Sprintf("%d drifted", n)
	})
	scale(t, d, 4)
	eventually(t, "6 empty nodes removed", func() (bool, string) {
		n := len(nodesOf(t, pool))
		return n == 4, fmt.Sprintf("%d nodes", n)
	})
	kept := claimNames(t, pool)
	// Several more passes: the drifted nodes stay, their budget is 0.
	time.Sleep(30 * time.Second)
	stop()
	if got := claimNames(t, pool); strings.Join(got, ",") != strings.Join(kept, ",") {
		t.Errorf("drifted nodeclaims changed from %v to %v under a zero drift budget", kept, got)
	}
	if worst > 2 {
		t.Errorf("%d nodes disrupting at once; the 20%% budget of 10 nodes allows 2", worst)
	}
	t.Logf("at most %d nodes disrupting at once; %d drifted nodes kept", worst, len(kept))
}

// testExpiration: expireAfter 2m replaces the node; the pod moves to a new one.
func testExpiration(t *testing.T) {
	t.Parallel()
	const pool = "expire"
	ns := scenarioNamespace(t, "e2e-expire")
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) {
		np.Spec.Template.Spec.ExpireAfter = v1.MustParseNillableDuration("2m")
	})
	create(t, deployment(ns, "pause", 1, podSpec(pool, requests("1", "1Gi"))))
	waitRunning(t, ns, 1)
	first := claimNames(t, pool)
	ids := instanceIDs(t, pool)
	start := time.Now()
	eventually(t, "the expired nodeclaim replaced and gone", func() (bool, string) {
		now := claimNames(t, pool)
		for _, c := range claimsOf(t, pool) {
			for _, f := range first {
				if c.Name == f {
					return false, "original still present"
				}
			}
		}
		n, _ := running(pods(t, ns, map[string]string{"app": "pause"}))
		return len(now) == 1 && n == 1, fmt.Sprintf("claims %v, %d running", now, n)
	})
	t.Logf("nodeclaim %v expired and was replaced by %v %s after the pod ran", first, claimNames(t, pool), time.Since(start).Round(time.Second))
	var old []string
	for id := range ids {
		old = append(old, id)
	}
	expectTerminatedInstances(t, old)
}

// testDeleteNodeClaimAndNode: deleting a NodeClaim, or a Node, drains it
// and terminates its instance; the pods land elsewhere.
func testDeleteNodeClaimAndNode(t *testing.T) {
	t.Parallel()
	const pool = "delete"
	ns := scenarioNamespace(t, "e2e-delete")
	consolidatingPool(t, pool, "Never", nil)
	spec := podSpec(pool, requests("1", "1Gi"))
	hostnameAntiAffinity(&spec, "pause")
	create(t, deployment(ns, "pause", 2, spec))
	waitRunning(t, ns, 2)
	// The pods run once the Nodes exist; the claims name their Nodes a
	// moment later, at registration.
	var claims []v1.NodeClaim
	eventually(t, "both nodeclaims registered", func() (bool, string) {
		claims = claimsOf(t, pool)
		named := 0
		for _, c := range claims {
			if c.Status.NodeName != "" {
				named++
			}
		}
		return len(claims) == 2 && named == 2, fmt.Sprintf("%d nodeclaims, %d with a node name", len(claims), named)
	})
	for i, byNode := range []bool{false, true} {
		claim := claims[i]
		ids := instanceIDs(t, pool)
		var target client.Object = &claim
		if byNode {
			target = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: claim.Status.NodeName}}
		}
		if err := w.kube.Delete(context.Background(), target); err != nil {
			t.Fatal(err)
		}
		eventually(t, "nodeclaim and node gone", func() (bool, string) {
			c, n := &v1.NodeClaim{}, &corev1.Node{}
			cErr := w.kube.Get(context.Background(), client.ObjectKeyFromObject(&claim), c)
			nErr := w.kube.Get(context.Background(), client.ObjectKey{Name: claim.Status.NodeName}, n)
			return client.IgnoreNotFound(cErr) == nil && cErr != nil && client.IgnoreNotFound(nErr) == nil && nErr != nil, "still present"
		})
		waitRunning(t, ns, 2)
		var gone []string
		now := instanceIDs(t, pool)
		for id := range ids {
			if !now[id] {
				gone = append(gone, id)
			}
		}
		if len(gone) != 1 {
			t.Errorf("deleting by node=%v: %d instances went away, want 1", byNode, len(gone))
		}
		expectTerminatedInstances(t, gone)
	}
}

// testDeleteNodePool: deleting a NodePool removes its nodes and instances.
func testDeleteNodePool(t *testing.T) {
	t.Parallel()
	const pool = "doomed"
	ns := scenarioNamespace(t, "e2e-doomed")
	consolidatingPool(t, pool, "Never", nil)
	spec := podSpec(pool, requests("1", "1Gi"))
	hostnameAntiAffinity(&spec, "pause")
	create(t, deployment(ns, "pause", 2, spec))
	waitRunning(t, ns, 2)
	var ids []string
	for id := range instanceIDs(t, pool) {
		ids = append(ids, id)
	}
	if err := w.kube.Delete(context.Background(), &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: pool}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the NodePool's nodes and nodeclaims gone", func() (bool, string) {
		c, n := len(claimsOf(t, pool)), len(nodesOf(t, pool))
		return c == 0 && n == 0, fmt.Sprintf("%d nodeclaims, %d nodes", c, n)
	})
	expectTerminatedInstances(t, ids)
}

// testAMIDrift: weight and limits changes drift nothing; a new AMI release
// drifts the nodes, which are replaced within the 10% default budget.
func testAMIDrift(t *testing.T) {
	const pool = "ami"
	ns := scenarioNamespace(t, "e2e-ami")
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) { np.Spec.Disruption.Budgets = nil })
	spec := podSpec(pool, requests("1", "1Gi"))
	hostnameAntiAffinity(&spec, "pause")
	create(t, deployment(ns, "pause", 3, spec))
	waitRunning(t, ns, 3)

	np := &v1.NodePool{}
	if err := w.kube.Get(context.Background(), client.ObjectKey{Name: pool}, np); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(np.DeepCopy())
	np.Spec.Weight = new(int32(42))
	np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("1000")}
	if err := w.kube.Patch(context.Background(), np, patch); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Second)
	for _, c := range claimsOf(t, pool) {
		if cond := meta.FindStatusCondition(c.Status.Conditions, v1.ConditionTypeDrifted); cond != nil {
			t.Errorf("nodeclaim %s drifted (%s) after a weight/limits change", c.Name, cond.Reason)
		}
	}

	old := map[string]bool{}
	var oldIDs []string
	for _, c := range claimsOf(t, pool) {
		old[c.Status.ImageID] = true
	}
	for id := range instanceIDs(t, pool) {
		oldIDs = append(oldIDs, id)
	}
	rel, err := w.sim.PublishAMI("al2023", "x86_64", "standard")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("published %s (nodes run %v)", rel.ImageID, old)
	var mu sync.Mutex
	worst := 0
	stop := observe(200*time.Millisecond, func() {
		n := disrupting(t, pool)
		mu.Lock()
		worst = max(worst, n)
		mu.Unlock()
	})
	eventually(t, "every node on the new AMI", func() (bool, string) {
		claims := claimsOf(t, pool)
		on := 0
		for _, c := range claims {
			if c.Status.ImageID == rel.ImageID && meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeInitialized) {
				on++
			}
		}
		return on == 3 && len(claims) == 3, fmt.Sprintf("%d/%d nodeclaims on %s", on, len(claims), rel.ImageID)
	})
	stop()
	waitRunning(t, ns, 3)
	expectTerminatedInstances(t, oldIDs)
	if worst > 1 {
		t.Errorf("%d nodes disrupting at once; the default 10%% budget of 3 nodes allows 1", worst)
	}
}
