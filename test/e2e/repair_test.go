package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// gpuFault is the condition the EKS node monitoring agent writes for a GPU
// fault; the XID code in its reason is one of the families Karpenter's AWS
// repair policies tolerate for 10 minutes, the shortest toleration.
const (
	gpuFaultCondition = "AcceleratedHardwareReady"
	gpuFaultReason    = "NvidiaXID79Error"
	gpuFaultTolerated = 10 * time.Minute
)

// testNodeRepair: two of a pool's three nodes report a GPU fault. Past the
// toleration, repair is blocked, since more than 20% of the pool is
// unhealthy (Karpenter's safety limit), and says so on the NodePool. Once
// one node recovers, the other is replaced: its NodeClaim goes, a new one
// comes, every pod runs and the PodDisruptionBudget holds.
func testNodeRepair(t *testing.T) {
	t.Parallel()
	const pool, replicas = "repair", 3
	ns := scenarioNamespace(t, "e2e-repair")
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = capacityClass })
	_, inv := spreadWorkload(t, ns, pool, replicas, 1, pool)
	waitRunning(t, ns, replicas)
	claims := watchClaims(t, pool)
	nodes := nodesOf(t, pool)
	if len(nodes) != replicas {
		t.Fatalf("%d nodes in pool %s, want %d", len(nodes), pool, replicas)
	}
	faulty, recovers := nodes[0].Name, nodes[1].Name
	setNodeCondition(t, faulty, corev1.ConditionFalse, gpuFaultReason)
	setNodeCondition(t, recovers, corev1.ConditionFalse, gpuFaultReason)
	marked := time.Now()

	// Through the toleration and a little past it, nothing is replaced.
	for time.Since(marked) < gpuFaultTolerated+30*time.Second {
		if _, deleted := claims.names(); len(deleted) > 0 {
			t.Fatalf("nodeclaims %v deleted %s after 2 of 3 nodes became unhealthy: the safety limit allows none", deleted, time.Since(marked).Round(time.Second))
		}
		time.Sleep(5 * time.Second)
	}
	eventually(t, "a NodeRepairBlocked event on the NodePool", func() (bool, string) {
		return len(runtimeEvents(t, "default", pool, "NodeRepairBlocked")) > 0, "no event yet"
	})
	if _, deleted := claims.names(); len(deleted) > 0 {
		t.Fatalf("nodeclaims %v deleted while 2 of 3 nodes were unhealthy", deleted)
	}

	setNodeCondition(t, recovers, corev1.ConditionTrue, "AcceleratedHardwareIsReady")
	recovered := time.Now()
	var victim string
	for _, c := range claimsOf(t, pool) {
		if c.Status.NodeName == faulty {
			victim = c.Name
		}
	}
	eventually(t, "the faulty node's NodeClaim replaced", func() (bool, string) {
		created, deleted := claims.names()
		return len(deleted) == 1 && deleted[0] == victim && len(created) == 1, fmt.Sprintf("created %v, deleted %v", created, deleted)
	})
	t.Logf("node %s repaired %s after one of the two faulty nodes recovered (%s after the fault)", faulty,
		time.Since(recovered).Round(time.Second), time.Since(marked).Round(time.Second))
	waitRunning(t, ns, replicas)
	inv.check(t)
	if created, deleted := claims.names(); len(created) != 1 || len(deleted) != 1 {
		t.Errorf("nodeclaims created %v, deleted %v; want one replacement for %s", created, deleted, victim)
	}
}

// setNodeCondition writes a node condition as an agent on the node would,
// beside the kubelet's own (kwok's heartbeat merges by type and keeps it).
func setNodeCondition(t *testing.T, node string, status corev1.ConditionStatus, reason string) {
	t.Helper()
	kube := worldOf(t).kube
	n := &corev1.Node{}
	if err := kube.Get(context.Background(), client.ObjectKey{Name: node}, n); err != nil {
		t.Fatal(err)
	}
	base := n.DeepCopy()
	cond := corev1.NodeCondition{Type: gpuFaultCondition, Status: status, Reason: reason,
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}
	replaced := false
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == gpuFaultCondition {
			n.Status.Conditions[i], replaced = cond, true
		}
	}
	if !replaced {
		n.Status.Conditions = append(n.Status.Conditions, cond)
	}
	if err := kube.Status().Patch(context.Background(), n, client.StrategicMergeFrom(base)); err != nil {
		t.Fatalf("setting %s=%s on node %s: %v", gpuFaultCondition, status, node, err)
	}
}
