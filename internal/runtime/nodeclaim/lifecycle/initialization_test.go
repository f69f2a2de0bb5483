package lifecycle

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
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

// A step repeated after a lost status write is counted once: only the
// reconcile whose write stores the condition counts it.
func TestStepsAreCountedOnTheWriteThatStoresThem(t *testing.T) {
	pool := "count-steps"
	value := func() float64 { return testutil.ToFloat64(metrics.NodeClaimsInitialized.WithLabelValues(pool)) }
	claim := func(initialized bool) *v1.NodeClaim {
		c := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1.NodePoolLabelKey: pool}}}
		nodeclaim.InitConditions(c)
		if initialized {
			nodeclaim.Set(c, v1.ConditionTypeInitialized, metav1.ConditionTrue, v1.ConditionTypeInitialized, "")
		}
		return c
	}
	before := value()
	countSteps(claim(false), claim(true))
	// The next reconcile reads the stored status: already initialized.
	countSteps(claim(true), claim(true))
	if got := value() - before; got != 1 {
		t.Errorf("initialized counted %v times, want once", got)
	}
}
