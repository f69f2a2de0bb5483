package v1

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestApplyDisruptedTaint(t *testing.T) {
	node := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{
		{Key: DisruptedTaintKey, Value: "old", Effect: corev1.TaintEffectNoExecute},
		{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule},
	}}}
	if !ApplyDisruptedTaint(node) {
		t.Fatal("no change reported")
	}
	if len(node.Spec.Taints) != 2 || !HasDisruptedTaint(node) || node.Spec.Taints[1].Key != "team" {
		t.Fatalf("taints %v: want the disrupted taint replacing the same-key taint and team kept", node.Spec.Taints)
	}
	if node.Labels[corev1.LabelNodeExcludeBalancers] != "karpenter" {
		t.Fatalf("labels %v lack the load-balancer exclusion", node.Labels)
	}
	if ApplyDisruptedTaint(node) {
		t.Fatal("a second application reports a change")
	}
}
