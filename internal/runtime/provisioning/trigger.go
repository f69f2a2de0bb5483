package provisioning

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ratelimit"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// podRecheck is how often a still-provisionable pod triggers again.
const podRecheck = 10 * time.Second

// PodTrigger opens or extends a batch for every provisionable pod, except
// pods waiting for the node they are nominated to: while hundreds of them
// wait for their nodes, their status updates would keep every batch open
// to its maximum duration.
type PodTrigger struct {
	kube    client.Client
	batcher *Batcher
	cluster *state.Cluster
}

// NewPodTrigger returns the pod trigger controller.
func NewPodTrigger(kube client.Client, b *Batcher, cluster *state.Cluster) *PodTrigger {
	return &PodTrigger{kube: kube, batcher: b, cluster: cluster}
}

// Reconcile triggers the batcher and re-checks the pod until it is placed.
func (t *PodTrigger) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := t.kube.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !pods.IsProvisionable(pod) {
		return reconcile.Result{}, nil
	}
	if !t.awaitingNode(ctx, pod) {
		t.batcher.Trigger(pod.UID)
	}
	return reconcile.Result{RequeueAfter: podRecheck}, nil
}

// awaitingNode is true while the pod is nominated to a claim or node that
// has not initialized (state.StateNode.Initialized): until then
// kube-scheduler binds nothing there, so the pod cannot have lost its room,
// and its status updates (kube-scheduler retries it as each of hundreds of
// nodes comes up) would keep every batch open to its maximum duration. Once
// the node has initialized, a pod still pending may have lost its room to
// pods kube-scheduler put there, and the next pass must look again; a target
// going away or an expired nomination triggers too.
func (t *PodTrigger) awaitingNode(ctx context.Context, pod *corev1.Pod) bool {
	if t.cluster == nil {
		return false
	}
	nom, ok := t.cluster.NominatedTo(pod.UID)
	if !ok {
		return false
	}
	n := t.nominee(ctx, nom)
	return n != nil && !n.Deleting() && !n.Initialized()
}

// nominee joins the nomination's target into the StateNode a pass asks: the
// claim and, once it registered, its Node. Nil when the target is gone; a
// Node no claim owns comes without one. The Node's claim is its owner
// reference, which registration writes; the pass's snapshot joins by
// providerID instead, which also pairs a Node not yet registered (such a
// Node triggers here as unowned: one extra pass at most).
func (t *PodTrigger) nominee(ctx context.Context, nom state.Nomination) *state.StateNode {
	n := &state.StateNode{}
	name := nom.Target
	if nom.InFlight {
		claim := &v1.NodeClaim{}
		if err := t.kube.Get(ctx, client.ObjectKey{Name: nom.Target}, claim); err != nil {
			return nil
		}
		n.NodeClaim = claim
		if claim.Status.NodeName == "" {
			return n
		}
		name = claim.Status.NodeName
	}
	node := &corev1.Node{}
	if err := t.kube.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		if n.NodeClaim != nil {
			return n // registered, its Node not yet in the cache
		}
		return nil
	}
	n.Node = node
	if n.NodeClaim == nil {
		n.NodeClaim = t.owner(ctx, node)
	}
	return n
}

// owner is the NodeClaim that registration made the Node's owner, or nil.
func (t *PodTrigger) owner(ctx context.Context, node *corev1.Node) *v1.NodeClaim {
	for _, o := range node.OwnerReferences {
		if o.Kind != "NodeClaim" || o.APIVersion != v1.SchemeGroupVersion.String() {
			continue
		}
		claim := &v1.NodeClaim{}
		if err := t.kube.Get(ctx, client.ObjectKey{Name: o.Name}, claim); err == nil && claim.UID == o.UID {
			return claim
		}
	}
	return nil
}

// Register adds the controller; bound pods are filtered out before they
// reach the queue.
func (t *PodTrigger) Register(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).
		Named("provisioner.trigger.pod").
		For(&corev1.Pod{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.(*corev1.Pod).Spec.NodeName == ""
		}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: ratelimit.Concurrency(10)}).
		Complete(t)
}

// NodeTrigger opens a batch when a node is tainted for disruption, so its
// pods get replacement capacity before they are evicted.
type NodeTrigger struct {
	kube    client.Client
	batcher *Batcher
}

// NewNodeTrigger returns the node trigger controller.
func NewNodeTrigger(kube client.Client, b *Batcher) *NodeTrigger {
	return &NodeTrigger{kube: kube, batcher: b}
}

// Reconcile triggers the batcher for disrupted nodes.
func (t *NodeTrigger) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := t.kube.Get(ctx, req.NamespacedName, node); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	for _, taint := range node.Spec.Taints {
		if taint.MatchTaint(&v1.DisruptedNoScheduleTaint) {
			t.batcher.Trigger(node.UID)
			return reconcile.Result{RequeueAfter: podRecheck}, nil
		}
	}
	return reconcile.Result{}, nil
}

// Register adds the controller.
func (t *NodeTrigger) Register(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).Named("provisioner.trigger.node").For(&corev1.Node{}).Complete(t)
}
