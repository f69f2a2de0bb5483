package provisioning

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// A pod waiting for the claim or node it is nominated to does not hold
// batches open; once that node has initialized, or the nomination is gone,
// the pod triggers again so the next pass can check it still has room.
func TestPodTriggerSkipsPodsAwaitingTheirNode(t *testing.T) {
	ctx := context.Background()
	kube := testenv.KubeFor(t).Client
	cluster := state.NewCluster(kube, clock.RealClock{})
	b := NewBatcher(clock.RealClock{}, time.Second, 10*time.Second)
	trigger := NewPodTrigger(kube, b, cluster)

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}
	mustDo(t, kube.Create(ctx, pod))
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	mustDo(t, kube.Status().Update(ctx, pod))
	claim := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-abc"}, Spec: v1.NodeClaimSpec{
		NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
		Requirements: v1.Requirements{testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)}}}
	mustDo(t, kube.Create(ctx, claim))

	triggered := func() bool {
		t.Helper()
		b.reset()
		if _, err := trigger.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(pod)}); err != nil {
			t.Fatal(err)
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		_, ok := b.seen[pod.UID]
		return ok
	}
	if !triggered() {
		t.Fatal("a pending pod without a nomination did not trigger")
	}
	cluster.Nominate(pod.UID, claim.Name, true, time.Hour)
	if triggered() {
		t.Error("a pod nominated to a claim still launching triggered a batch")
	}
	claim.Status.NodeName = "ip-10-0-0-1.us-west-2.compute.internal"
	mustDo(t, kube.Status().Update(ctx, claim))
	if triggered() {
		t.Error("a pod nominated to a claim whose Node registered but is not in the cache yet triggered a batch")
	}
	// The claim's Node as registration leaves it: owned by the claim.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: claim.Status.NodeName,
		Labels:          map[string]string{v1.NodePoolLabelKey: "general"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1.SchemeGroupVersion.String(), Kind: "NodeClaim", Name: claim.Name, UID: claim.UID}}}}
	mustDo(t, kube.Create(ctx, node))
	if triggered() {
		t.Error("a pod nominated to a claim whose Node registered but is not initialized triggered a batch")
	}
	// A pass after registration nominates to the Node itself.
	cluster.Nominate(pod.UID, node.Name, false, time.Hour)
	if triggered() {
		t.Error("a pod nominated to a claim's Node that is not initialized triggered a batch")
	}
	node.Labels[v1.NodeInitializedLabelKey] = "true"
	mustDo(t, kube.Update(ctx, node))
	if !triggered() {
		t.Error("a pod still pending on an initialized node did not trigger")
	}
	cluster.Nominate(pod.UID, claim.Name, true, time.Hour)
	if !triggered() {
		t.Error("a pod still pending after its claim's Node initialized did not trigger")
	}
	node.Labels[v1.NodeInitializedLabelKey] = "false"
	node.Spec.Taints = []corev1.Taint{v1.DisruptedNoScheduleTaint}
	mustDo(t, kube.Update(ctx, node))
	if !triggered() {
		t.Error("a pod nominated to a node being disrupted did not trigger")
	}
	cluster.Nominate(pod.UID, "gone", true, time.Hour)
	if !triggered() {
		t.Error("a pod nominated to a claim that does not exist did not trigger")
	}
	cluster.Nominate(pod.UID, "ip-10-0-0-9", false, time.Hour)
	if !triggered() {
		t.Error("a pod nominated to a node that does not exist did not trigger")
	}
	// A node no claim owns never initializes, so a pod pending on it
	// triggers, whatever its labels say.
	other := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-3.us-west-2.compute.internal",
		Labels: map[string]string{v1.NodePoolLabelKey: "general"}}}
	mustDo(t, kube.Create(ctx, other))
	cluster.Nominate(pod.UID, other.Name, false, time.Hour)
	if !triggered() {
		t.Error("a pod pending on a node no claim owns did not trigger")
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
