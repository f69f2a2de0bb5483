package lifecycle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func claimWith(taints, startup []corev1.Taint) *v1.NodeClaim {
	return &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: "pool-abc", UID: "uid-1",
			Labels: map[string]string{
				v1.NodePoolLabelKey: "pool", "team": "a", corev1.LabelInstanceTypeStable: "m5.large",
				corev1.LabelHostname: "must-not-copy", "karpenter.sh/custom": "restricted",
			},
			Annotations: map[string]string{v1.NodePoolHashAnnotationKey: "123"},
		},
		Spec: v1.NodeClaimSpec{Taints: taints, StartupTaints: startup},
	}
}

func TestSyncNode(t *testing.T) {
	dedicated := corev1.Taint{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}
	agent := corev1.Taint{Key: "agent-not-ready", Effect: corev1.TaintEffectNoSchedule}
	claim := claimWith([]corev1.Taint{dedicated}, []corev1.Taint{agent})
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-1", Labels: map[string]string{corev1.LabelHostname: "ip-10-0-0-1"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{v1.UnregisteredNoExecuteTaint, dedicated}},
	}
	SyncNode(claim, node)
	SyncNode(claim, node) // idempotent
	if len(node.Finalizers) != 1 || node.Finalizers[0] != v1.TerminationFinalizer {
		t.Errorf("finalizers %v", node.Finalizers)
	}
	if len(node.OwnerReferences) != 1 || node.OwnerReferences[0].UID != "uid-1" || node.OwnerReferences[0].Kind != "NodeClaim" {
		t.Errorf("owner references %v", node.OwnerReferences)
	}
	want := map[string]string{
		v1.NodePoolLabelKey: "pool", "team": "a", corev1.LabelInstanceTypeStable: "m5.large",
		corev1.LabelHostname: "ip-10-0-0-1", v1.NodeRegisteredLabelKey: "true",
	}
	for k, v := range want {
		if node.Labels[k] != v {
			t.Errorf("label %s=%q, want %q", k, node.Labels[k], v)
		}
	}
	if _, ok := node.Labels["karpenter.sh/custom"]; ok {
		t.Error("a restricted label was copied onto the node")
	}
	if node.Annotations[v1.NodePoolHashAnnotationKey] != "123" {
		t.Errorf("annotations %v", node.Annotations)
	}
	if len(node.Spec.Taints) != 2 || !hasTaint(node, dedicated) || !hasTaint(node, agent) || hasTaint(node, v1.UnregisteredNoExecuteTaint) {
		t.Errorf("taints %v: want dedicated and the startup taint, without the unregistered taint", node.Spec.Taints)
	}
}

func TestSyncNodeRespectsDoNotSyncTaints(t *testing.T) {
	claim := claimWith([]corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}, nil)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1.NodeDoNotSyncTaintsLabelKey: "true"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{v1.UnregisteredNoExecuteTaint}},
	}
	SyncNode(claim, node)
	if len(node.Spec.Taints) != 0 {
		t.Errorf("taints %v: the node opted out of taint sync and only loses the unregistered taint", node.Spec.Taints)
	}
}
