// Package podevents records on each NodeClaim the last time a pod came to
// or left its Node (status.lastPodEventTime), the time consolidateAfter
// counts from.
package podevents

import (
	"context"
	"sync"
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

// podEventDedupe spaces lastPodEventTime writes per claim: a new time is
// written only when it is at least this much later than the stored one.
// It is shorter than the 15 s consolidation validation, so a command
// decided while a write was skipped is still caught.
const podEventDedupe = 10 * time.Second

// PodEvents records on each NodeClaim the last time a pod was bound to its
// Node, finished on it or started terminating there
// (status.lastPodEventTime), with the time the pod records for the event
// (pods.EventTime). DaemonSet pods do not count. Requests are Node names.
type PodEvents struct {
	kube  client.Client
	clock clock.Clock

	mu sync.Mutex
	// pending is the latest event time seen per Node, not yet written.
	pending map[string]time.Time
}

// NewPodEvents wires the controller.
func NewPodEvents(kube client.Client, clk clock.Clock) *PodEvents {
	return &PodEvents{kube: kube, clock: clk, pending: map[string]time.Time{}}
}

// observe remembers an event at `at` on node and reports whether the node
// needs a reconcile.
func (p *PodEvents) observe(node string, at time.Time) bool {
	if node == "" || at.IsZero() {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur, ok := p.pending[node]; !ok || at.After(cur) {
		p.pending[node] = at
	}
	return true
}

func (p *PodEvents) take(node string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.pending[node]
	delete(p.pending, node)
	return at, ok
}

// Reconcile stamps the claim of the Node named by req with the latest
// event time seen on it.
func (p *PodEvents) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	at, ok := p.take(req.Name)
	if !ok {
		return reconcile.Result{}, nil
	}
	if now := p.clock.Now(); at.After(now) {
		at = now // a pod's clock ahead of ours must not hold consolidation back
	}
	node := &corev1.Node{}
	if err := p.kube.Get(ctx, req.NamespacedName, node); err != nil || node.Spec.ProviderID == "" {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	claims, err := nodeclaim.ClaimsByProviderID(ctx, p.kube, node.Spec.ProviderID)
	if err != nil {
		p.observe(req.Name, at)
		return reconcile.Result{}, err
	}
	for _, claim := range claims {
		if claim.DeletionTimestamp != nil || !StampsPodEvent(claim.Status.LastPodEventTime.Time, at) {
			continue
		}
		stored := claim.DeepCopy()
		claim.Status.LastPodEventTime = metav1.NewTime(at)
		if err := p.kube.Status().Patch(ctx, claim, client.MergeFrom(stored)); client.IgnoreNotFound(err) != nil {
			p.observe(req.Name, at)
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// StampsPodEvent says whether an event at `at` moves a claim whose
// lastPodEventTime is stored: only forward, and by at least the dedupe
// interval.
func StampsPodEvent(stored, at time.Time) bool {
	return at.Sub(stored) >= podEventDedupe
}

// Register adds the controller. A pod that is bound (seen first or
// later), goes terminal or starts terminating wakes its Node, as in
// Karpenter; so does a pod deleted without a terminating phase first.
func (p *PodEvents) Register(mgr manager.Manager) error {
	enqueue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], pod *corev1.Pod, at time.Time, ok bool) {
		if ok && p.observe(pod.Spec.NodeName, at) {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: pod.Spec.NodeName}})
		}
	}
	return builder.ControllerManagedBy(mgr).
		Named("nodeclaim.podevents").
		Watches(&corev1.Pod{}, handler.Funcs{
			CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				pod := e.Object.(*corev1.Pod)
				at, ok := pods.EventTime(pod)
				enqueue(q, pod, at, ok)
			},
			UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				o, n := e.ObjectOld.(*corev1.Pod), e.ObjectNew.(*corev1.Pod)
				bound := o.Spec.NodeName == "" && n.Spec.NodeName != ""
				terminal := !pods.IsTerminal(o) && pods.IsTerminal(n)
				terminating := o.DeletionTimestamp == nil && n.DeletionTimestamp != nil
				if bound || terminal || terminating {
					at, ok := pods.EventTime(n)
					enqueue(q, n, at, ok)
				}
			},
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				pod, isPod := e.Object.(*corev1.Pod)
				if !isPod {
					return
				}
				at, ok := pods.EventTime(pod)
				if pod.DeletionTimestamp == nil {
					at = p.clock.Now() // deleted without a terminating phase
				}
				enqueue(q, pod, at, ok)
			},
		}).
		Complete(p)
}
