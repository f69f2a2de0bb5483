package lifecycle

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
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

// TestInitializationLabelsTheNodeOnce: the claim's status write lost a race
// and the Node read is still from before the label (a cache trailing under
// load), so the next reconcile finds both as they were. The Node is not
// patched again, and the claim is still marked initialized.
func TestInitializationLabelsTheNodeOnce(t *testing.T) {
	ctx := context.Background()
	kube := testenv.KubeFor(t)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "init-once", Labels: map[string]string{}},
		Spec:       corev1.NodeSpec{ProviderID: "aws:///us-west-2a/i-0000000000init01"},
	}
	if err := kube.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	if err := kube.Client.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	// The apiserver taints a new Node not-ready; the node lifecycle
	// controller, not running here, would lift it.
	stale := node.DeepCopy()
	stale.Spec.Taints = nil
	ww, err := client.NewWithWatch(kube.Config, client.Options{Scheme: kube.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	patches := 0
	c := &Controller{kube: interceptor.NewClient(ww, interceptor.Funcs{
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if l, ok := list.(*corev1.NodeList); ok {
				l.Items = []corev1.Node{*stale.DeepCopy()}
				return nil
			}
			return cl.List(ctx, list, opts...)
		},
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*corev1.Node); ok {
				patches++
			}
			return cl.Patch(ctx, obj, patch, opts...)
		},
	})}
	claim := func() *v1.NodeClaim {
		cl := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "init-once", UID: "init-once-uid"}, Status: v1.NodeClaimStatus{ProviderID: node.Spec.ProviderID}}
		nodeclaim.InitConditions(cl)
		nodeclaim.Set(cl, v1.ConditionTypeRegistered, metav1.ConditionTrue, v1.ConditionTypeRegistered, "")
		return cl
	}
	for i := range 3 {
		cl := claim()
		if _, err := c.initialize(ctx, cl); err != nil {
			t.Fatal(err)
		}
		if !nodeclaim.IsTrue(cl, v1.ConditionTypeInitialized) {
			t.Errorf("reconcile %d: claim not marked initialized: %+v", i+1, cl.Status.Conditions)
		}
	}
	if patches != 1 {
		t.Errorf("Node patched %d times, want once", patches)
	}
	got := &corev1.Node{}
	if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(node), got); err != nil {
		t.Fatal(err)
	}
	if got.Labels[v1.NodeInitializedLabelKey] != "true" {
		t.Errorf("Node labels %v, want %s=true", got.Labels, v1.NodeInitializedLabelKey)
	}
	// Once the stored claim says initialized, the claim is forgotten.
	done := claim()
	nodeclaim.Set(done, v1.ConditionTypeInitialized, metav1.ConditionTrue, v1.ConditionTypeInitialized, "")
	if _, err := c.initialize(ctx, done); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.labelled.Load(done.UID); ok {
		t.Error("claim still remembered after its status stored the condition")
	}
}
