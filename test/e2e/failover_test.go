package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// TestLeaderFailover: two controller replicas, as joist_controller deploys
// them by default. The leader is killed (SIGKILL) during a scale-out and
// again during a consolidation; each time another replica takes the Lease
// once it expires, no NodeClaim is created twice for the same pods, and no
// node is disrupted twice.
func TestLeaderFailover(t *testing.T) {
	t.Parallel()
	ownWorld(t, worldOptions{name: "failover", replicas: 2})
	nodeClass(t, "failover")
	t.Run("scale-out", testFailoverScaleOut)
	t.Run("consolidation", testFailoverConsolidation)
}

// testFailoverScaleOut: one pod per node, so the scale-out needs exactly
// one NodeClaim per pod; the leader dies as soon as the first exists.
func testFailoverScaleOut(t *testing.T) {
	const pool, replicas = "failover", 6
	ns := scenarioNamespace(t, "e2e-failover")
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = "failover" })
	claims := watchClaims(t, pool)
	_, inv := spreadWorkload(t, ns, pool, replicas, 1, pool)
	claims.waitCreated(t, 0, "the scale-out")
	failover(t, "the scale-out")
	waitRunning(t, ns, replicas)
	created, deleted := claims.names()
	if len(created) != replicas || len(deleted) != 0 {
		t.Errorf("scale-out across a failover: nodeclaims created %v, deleted %v; want %d, each created once", created, deleted, replicas)
	}
	inv.check(t)
	t.Logf("scale-out: %d nodeclaims for %d pods; %d instances launched in all (a launch the dead leader had in flight and the new one retried shows as one more, its first instance collected)",
		len(created), replicas, len(everInPool(t, pool)))
}

// testFailoverConsolidation: four pods that must share a node run on one
// big enough for them; scaled to one, the node is replaced by a smaller
// one. The leader dies as soon as the node is tainted for that, with the
// replacement launching. The new leader finishes the job: one
// replacement, the node drained once.
func testFailoverConsolidation(t *testing.T) {
	const pool = "failover-packed"
	ctx := context.Background()
	ns := scenarioNamespace(t, "e2e-failover-packed")
	np := consolidatingPool(t, pool, "Never", func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = "failover"
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements[:1], onDemand, amd64,
			req(v1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "c6a"))
	})
	spec := podSpec(pool, requests("1", "1Gi"))
	spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey:   corev1.LabelHostname,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "packed"}},
		}},
	}}
	inv := watchInvariants(t, ns, "packed", 4, 1, pool)
	d := deployment(ns, "packed", 4, spec)
	create(t, d)
	pdb(t, ns, "packed", 1)
	waitAllRunning(t, ns, 4)
	big := nodesOf(t, pool)
	if len(big) != 1 {
		t.Fatalf("%d nodes for 4 pods that must share one", len(big))
	}
	claims := watchClaims(t, pool)
	taints := watchDisruptedTaints(t, pool)
	if err := worldOf(t).kube.Get(ctx, client.ObjectKeyFromObject(np), np); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(np.DeepCopy())
	np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("10s")
	if err := worldOf(t).kube.Patch(ctx, np, patch); err != nil {
		t.Fatal(err)
	}
	inv.expect(1)
	scale(t, d, 1)
	// The leader dies while the command waits for its replacement: after the
	// taint and the replacement's creation. (A leader that dies between the
	// two leaves no replacement; the next one untaints and decides again.)
	eventually(t, "node "+big[0].Name+" tainted and its replacement created", func() (bool, string) {
		created, _ := claims.names()
		return taints.counts()[big[0].Name] > 0 && len(created) > 0, fmt.Sprintf("taints %v, replacements %v", taints.counts(), created)
	})
	failover(t, "the consolidation")
	eventually(t, "node "+big[0].Name+" replaced", func() (bool, string) {
		nodes := nodesOf(t, pool)
		return len(nodes) == 1 && nodes[0].Name != big[0].Name, fmt.Sprintf("%d nodes", len(nodes))
	})
	inv.check(t)
	created, deleted := claims.names()
	if len(created) != 1 || len(deleted) != 1 {
		t.Errorf("consolidating one node across a failover: nodeclaims created %v, deleted %v; want one replacement for one node", created, deleted)
	}
	for node, n := range taints.counts() {
		if n > 1 {
			t.Errorf("node %s was tainted for disruption %d times: disrupted again after the failover", node, n)
		}
	}
	t.Logf("node %s (%s) replaced by %v across a failover", big[0].Name, big[0].Labels[corev1.LabelInstanceTypeStable], created)
}

// failover kills the leader and waits for another replica to lead. It
// checks the Lease changed hands only after it expired (never two leaders)
// and reports how long the cluster had none.
func failover(t *testing.T, during string) {
	t.Helper()
	ctx := context.Background()
	wd := worldOf(t)
	before := leaderLease(t)
	procs := wd.sandbox.Controllers()
	killed, err := wd.controller.kill()
	if err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	next, err := wd.controller.waitLeader(ctx, killed.PID)
	if err != nil {
		t.Fatal(err)
	}
	after := leaderLease(t)
	if after.Spec.HolderIdentity == nil || *after.Spec.HolderIdentity == *before.Spec.HolderIdentity {
		t.Fatalf("the Lease still names %s after its holder was killed", *before.Spec.HolderIdentity)
	}
	lease := time.Duration(*before.Spec.LeaseDurationSeconds) * time.Second
	expiry := before.Spec.RenewTime.Add(lease)
	if acquired := after.Spec.AcquireTime.Time; acquired.Before(expiry.Add(-time.Second)) {
		t.Errorf("%s took the Lease at %s, before %s's expired at %s: two leaders", *after.Spec.HolderIdentity,
			acquired.Format(time.StampMilli), *before.Spec.HolderIdentity, expiry.Format(time.StampMilli))
	}
	by := "the replica the sandbox restarted"
	for _, p := range procs {
		if p.Pod == next.Pod && p.PID == next.PID {
			by = "the standby"
		}
	}
	t.Logf("during %s: leader %s (pod %s) killed; %s (pod %s) took the Lease %s after the kill, %s after the last renewal (lease %s)",
		during, *before.Spec.HolderIdentity, killed.Pod, by, next.Pod, after.Spec.AcquireTime.Sub(killedAt).Round(100*time.Millisecond),
		after.Spec.AcquireTime.Sub(before.Spec.RenewTime.Time).Round(100*time.Millisecond), lease)
}

func leaderLease(t *testing.T) *coordinationv1.Lease {
	t.Helper()
	l := &coordinationv1.Lease{}
	if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Namespace: "kube-system", Name: "karpenter-leader-election"}, l); err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil || l.Spec.RenewTime == nil || l.Spec.AcquireTime == nil || l.Spec.LeaseDurationSeconds == nil {
		t.Fatalf("the leader-election Lease is incomplete: %+v", l.Spec)
	}
	return l
}

// taintLog counts, per node of a pool, how often the disruption taint was
// put on it.
type taintLog struct {
	mu      sync.Mutex
	tainted map[string]bool
	times   map[string]int
}

func watchDisruptedTaints(t *testing.T, pool string) *taintLog {
	t.Helper()
	l := &taintLog{tainted: map[string]bool{}, times: map[string]int{}}
	kube := worldOf(t).kube
	stop := observe(100*time.Millisecond, func() {
		nodes := &corev1.NodeList{}
		if err := kube.List(context.Background(), nodes, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, n := range nodes.Items {
			now := v1.HasDisruptedTaint(&n)
			if now && !l.tainted[n.Name] {
				l.times[n.Name]++
			}
			l.tainted[n.Name] = now
		}
	})
	t.Cleanup(stop)
	return l
}

func (l *taintLog) counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for k, v := range l.times {
		out[k] = v
	}
	return out
}
