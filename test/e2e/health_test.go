package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// healthClass is the EC2NodeClass of the shared world's instance health
// scenarios.
const healthClass = "health"

func testHealth(t *testing.T) {
	nodeClass(t, healthClass)
	t.Run("failed-status-check", testFailedStatusCheck)
}

// testFailedStatusCheck: EC2 reports one instance's status check failed
// for three minutes (past the two-minute threshold). The controller's
// status polling, with no interruption queue in this world, deletes its
// NodeClaim with a termination deadline of now (the broken kubelet is not
// drained through), the node goes, and its pod runs on a replacement; no
// other node is touched.
func testFailedStatusCheck(t *testing.T) {
	t.Parallel()
	const pool, replicas = "status-check", 3
	ns := scenarioNamespace(t, "e2e-status-check")
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = healthClass })
	// One pod per node; losing the node makes one replica unavailable,
	// which the budget allows.
	_, inv := spreadWorkload(t, ns, pool, replicas, 1, pool)
	waitRunning(t, ns, replicas)
	victim := claimsOf(t, pool)[0]
	claims := watchClaims(t, pool)
	id := instanceID(t, victim.Status.ProviderID)
	if err := worldOf(t).sim.EC2.SetImpairedSince(id, true, false, time.Now().Add(-3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	impaired := time.Now()
	var deadline string
	eventually(t, "the impaired instance's NodeClaim deleted with a termination deadline", func() (bool, string) {
		c := &v1.NodeClaim{}
		err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: victim.Name}, c)
		if client.IgnoreNotFound(err) != nil {
			return false, err.Error()
		}
		if err == nil {
			if s, ok := c.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey]; ok {
				deadline = s
			}
			return false, fmt.Sprintf("nodeclaim %s: deleting %v, deadline %q", victim.Name, c.DeletionTimestamp != nil, deadline)
		}
		return deadline != "", fmt.Sprintf("nodeclaim %s gone; deadline seen %q", victim.Name, deadline)
	})
	t.Logf("instance %s impaired: nodeclaim %s gone %s later (termination deadline %s)", id, victim.Name, time.Since(impaired).Round(time.Second), deadline)
	if at, err := time.Parse(time.RFC3339, deadline); err != nil || at.After(time.Now()) || at.Before(impaired.Add(-time.Second)) {
		t.Errorf("termination deadline %q: want the time the controller acted (%v)", deadline, err)
	}
	eventually(t, "the node gone", func() (bool, string) {
		err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: victim.Status.NodeName}, &corev1.Node{})
		return client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprintf("node %s: %v", victim.Status.NodeName, err)
	})
	waitRunning(t, ns, replicas)
	inv.check(t)
	if created, deleted := claims.names(); len(created) != 1 || len(deleted) != 1 || deleted[0] != victim.Name {
		t.Errorf("nodeclaims created %v and deleted %v after the impairment; want one replacement for %s", created, deleted, victim.Name)
	}
	if v, ok, err := worldOf(t).controller.metric(`karpenter_interruption_instance_status_unhealthy_total{category="InstanceStatus"}`); err != nil || !ok || v < 1 {
		t.Errorf("karpenter_interruption_instance_status_unhealthy_total{category=\"InstanceStatus\"} = %v (present %v, err %v), want at least 1", v, ok, err)
	}
}
