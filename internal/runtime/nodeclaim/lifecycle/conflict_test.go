package lifecycle

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kevents "k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// TestRegistrationWaitsOutAStaleNode: the Node read trails the store (the
// cache at a few hundred nodes lags by seconds), so the registration patch
// conflicts. The step neither fails nor asks for a retry: a retry would
// read the same stale copy and lose again, while the newer Node's watch
// event wakes the claim once the cache has it. That read registers it.
func TestRegistrationWaitsOutAStaleNode(t *testing.T) {
	ctx := context.Background()
	kube := testenv.KubeFor(t)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "stale-node", Labels: map[string]string{}},
		Spec:       corev1.NodeSpec{ProviderID: "aws:///us-west-2a/i-00000000000stale1", Taints: []corev1.Taint{v1.UnregisteredNoExecuteTaint}},
	}
	if err := kube.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	stale := node.DeepCopy()
	node.Labels = map[string]string{"kubelet": "wrote-after-the-read"}
	if err := kube.Client.Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	ww, err := client.NewWithWatch(kube.Config, client.Options{Scheme: kube.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	serveStale := true
	c := &Controller{recorder: events.NewRecorder(kevents.NewFakeRecorder(100)), kube: interceptor.NewClient(ww, interceptor.Funcs{
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			l, ok := list.(*corev1.NodeList)
			if !ok {
				return cl.List(ctx, list, opts...)
			}
			if serveStale {
				l.Items = []corev1.Node{*stale.DeepCopy()}
				return nil
			}
			fresh := &corev1.Node{}
			if err := cl.Get(ctx, client.ObjectKeyFromObject(node), fresh); err != nil {
				return err
			}
			l.Items = []corev1.Node{*fresh}
			return nil
		},
	})}
	claim := func() *v1.NodeClaim {
		cl := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "stale-abc", UID: "stale-uid"}, Status: v1.NodeClaimStatus{ProviderID: node.Spec.ProviderID}}
		nodeclaim.InitConditions(cl)
		nodeclaim.Set(cl, v1.ConditionTypeLaunched, metav1.ConditionTrue, v1.ConditionTypeLaunched, "")
		return cl
	}

	cl := claim()
	res, err := c.register(ctx, cl)
	if err != nil {
		t.Fatalf("a conflict on a stale Node failed the step: %v", err)
	}
	if res.requeue != (reconcile.Result{}) {
		t.Errorf("a conflict on a stale Node requeued (%+v); the Node's watch event is the retry", res.requeue)
	}
	if nodeclaim.IsTrue(cl, v1.ConditionTypeRegistered) {
		t.Error("claim registered though its Node was not synced")
	}

	serveStale = false
	cl = claim()
	if _, err := c.register(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if !nodeclaim.IsTrue(cl, v1.ConditionTypeRegistered) {
		t.Fatalf("claim not registered on the fresh read: %+v", cl.Status.Conditions)
	}
	got := &corev1.Node{}
	if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(node), got); err != nil {
		t.Fatal(err)
	}
	if got.Labels[v1.NodeRegisteredLabelKey] != "true" || got.Labels["kubelet"] != "wrote-after-the-read" || hasTaint(got, v1.UnregisteredNoExecuteTaint) {
		t.Errorf("Node after registration: labels %v taints %v; want registered, the other writer's label kept, the unregistered taint gone", got.Labels, got.Spec.Taints)
	}
}
