package pods

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func unschedulablePod(mut func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		}}},
	}
	if mut != nil {
		mut(p)
	}
	return p
}

func TestIsProvisionable(t *testing.T) {
	now := metav1.Now()
	for _, tc := range []struct {
		name string
		mut  func(*corev1.Pod)
		want bool
	}{
		{"unschedulable", nil, true},
		{"bound", func(p *corev1.Pod) { p.Spec.NodeName = "n" }, false},
		{"preempting", func(p *corev1.Pod) { p.Status.NominatedNodeName = "n" }, false},
		{"terminating", func(p *corev1.Pod) { p.DeletionTimestamp = &now }, false},
		{"succeeded", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }, false},
		{"not yet looked at", func(p *corev1.Pod) { p.Status.Conditions = nil }, false},
		{"other scheduler's reason", func(p *corev1.Pod) { p.Status.Conditions[0].Reason = "SchedulerError" }, false},
		{"scheduled", func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionTrue }, false},
		{"daemonset", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds"}}
		}, false},
		{"replicaset", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs"}}
		}, true},
		{"mirror", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"} }, false},
	} {
		if got := IsProvisionable(unschedulablePod(tc.mut)); got != tc.want {
			t.Errorf("%s: IsProvisionable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestExcludesManagedNodes(t *testing.T) {
	term := func(exprs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: exprs}
	}
	notManaged := corev1.NodeSelectorRequirement{Key: "karpenter.sh/nodepool", Operator: corev1.NodeSelectorOpDoesNotExist}
	other := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpExists}
	with := func(terms ...corev1.NodeSelectorTerm) *corev1.Pod {
		return unschedulablePod(func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		})
	}
	if !ExcludesManagedNodes(with(term(notManaged, other))) {
		t.Error("a single DoesNotExist term should exclude managed nodes")
	}
	if ExcludesManagedNodes(with(term(notManaged), term(other))) {
		t.Error("an alternative term without DoesNotExist still allows managed nodes")
	}
	if ExcludesManagedNodes(unschedulablePod(nil)) {
		t.Error("a pod without affinity is provisioned for")
	}
}

func TestIsReschedulable(t *testing.T) {
	now := metav1.Now()
	ctrl := true
	ss := func(p *corev1.Pod) {
		p.DeletionTimestamp = &now
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "s", Controller: &ctrl}}
	}
	if !IsReschedulable(unschedulablePod(nil)) {
		t.Error("active pod")
	}
	if IsReschedulable(unschedulablePod(func(p *corev1.Pod) { p.DeletionTimestamp = &now })) {
		t.Error("terminating deployment pod is not replaced on its node's behalf")
	}
	if !IsReschedulable(unschedulablePod(ss)) {
		t.Error("terminating StatefulSet pod keeps its name and needs room")
	}
}
