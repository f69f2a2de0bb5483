package pods

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// One DaemonSet rule serves the drain tiers, provisioning and
// rescheduling: any apps/v1 DaemonSet owner reference counts.
func TestIsOwnedByDaemonSet(t *testing.T) {
	owned := func(refs ...metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: refs}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"controller", owned(metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Controller: new(true)}), true},
		{"owner without controller flag", owned(metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet"}), true},
		{"another group's DaemonSet kind", owned(metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "DaemonSet", Controller: new(true)}), false},
		{"ReplicaSet", owned(metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Controller: new(true)}), false},
		{"no owner", owned(), false},
	} {
		if got := IsOwnedByDaemonSet(tc.pod); got != tc.want {
			t.Errorf("%s: IsOwnedByDaemonSet = %v, want %v", tc.name, got, tc.want)
		}
		pending := tc.pod.DeepCopy()
		pending.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
		if IsProvisionable(pending) == tc.want || IsReschedulable(tc.pod) == tc.want {
			t.Errorf("%s: provisionable %v, reschedulable %v; a DaemonSet pod is neither, any other pod both", tc.name, IsProvisionable(pending), IsReschedulable(tc.pod))
		}
	}
}
