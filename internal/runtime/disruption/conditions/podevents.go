package conditions

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
)

// podEventDedupe spaces lastPodEventTime writes per claim.
const podEventDedupe = 10 * time.Second

// PodEvents records on each NodeClaim the last time a pod was bound to or
// removed from its Node (status.lastPodEventTime). Requests are Node names.
type PodEvents struct {
	kube  client.Client
	clock clock.Clock
}

// NewPodEvents wires the controller.
func NewPodEvents(kube client.Client, clk clock.Clock) *PodEvents {
	return &PodEvents{kube: kube, clock: clk}
}

// Reconcile stamps the claim of the Node named by req.
func (p *PodEvents) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := p.kube.Get(ctx, req.NamespacedName, node); err != nil || node.Spec.ProviderID == "" {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	claims, err := nodeclaim.ClaimsByProviderID(ctx, p.kube, node.Spec.ProviderID)
	if err != nil {
		return reconcile.Result{}, err
	}
	now := p.clock.Now()
	for _, claim := range claims {
		if claim.DeletionTimestamp != nil || now.Sub(claim.Status.LastPodEventTime.Time) < podEventDedupe {
			continue
		}
		stored := claim.DeepCopy()
		claim.Status.LastPodEventTime = metav1.NewTime(now)
		if err := p.kube.Status().Patch(ctx, claim, client.MergeFrom(stored)); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// Register adds the controller: a pod's binding, termination or deletion
// wakes its Node.
func (p *PodEvents) Register(mgr manager.Manager) error {
	enqueue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], node string) {
		if node != "" {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: node}})
		}
	}
	return builder.ControllerManagedBy(mgr).
		Named("nodeclaim.podevents").
		Watches(&corev1.Pod{}, handler.Funcs{
			CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				enqueue(q, e.Object.(*corev1.Pod).Spec.NodeName)
			},
			UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				o, n := e.ObjectOld.(*corev1.Pod), e.ObjectNew.(*corev1.Pod)
				if o.Spec.NodeName != n.Spec.NodeName || (pods.IsTerminal(n) && !pods.IsTerminal(o)) {
					enqueue(q, n.Spec.NodeName)
				}
			},
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if pod, ok := e.Object.(*corev1.Pod); ok {
					enqueue(q, pod.Spec.NodeName)
				}
			},
		}).
		Complete(p)
}
