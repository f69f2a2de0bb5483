package lifecycle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func TestNotInitialized(t *testing.T) {
	startup := corev1.Taint{Key: "cni-not-ready", Effect: corev1.TaintEffectNoSchedule}
	gpuClaim := func() *v1.NodeClaim {
		c := claimWith(nil, []corev1.Taint{startup})
		c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), "nvidia.com/gpu": resource.MustParse("1")}
		return c
	}
	readyNode := func(mut func(*corev1.Node)) *corev1.Node {
		n := &corev1.Node{Status: corev1.NodeStatus{
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), "nvidia.com/gpu": resource.MustParse("1")},
		}}
		if mut != nil {
			mut(n)
		}
		return n
	}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		want string
	}{
		{"initialized", readyNode(nil), ""},
		{"not ready", readyNode(func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }), "NodeNotReady"},
		{"startup taint", readyNode(func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{startup} }), "StartupTaintsExist"},
		{"ephemeral taint", readyNode(func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}
		}), "KnownEphemeralTaintsExist"},
		{"readiness prefix", readyNode(func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "readiness.k8s.io/network", Effect: corev1.TaintEffectNoSchedule}}
		}), "KnownEphemeralTaintsExist"},
		{"device plugin missing", readyNode(func(n *corev1.Node) { delete(n.Status.Allocatable, "nvidia.com/gpu") }), "ResourceNotRegistered"},
	} {
		if got, _ := NotInitialized(gpuClaim(), tc.node); got != tc.want {
			t.Errorf("%s: reason %q, want %q", tc.name, got, tc.want)
		}
	}
}
