package termination

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ratelimit"
)

// nodeWait is how often a deleted claim checks on its Node's termination,
// besides being woken by the Node's deletion.
const nodeWait = 10 * time.Second

// NodeClaimController is the NodeClaim's karpenter.sh/termination
// finalizer: it stamps the deadline, deletes the Node and waits for the
// Node's finalizer (which drains and terminates the instance), then makes
// sure the instance is gone.
type NodeClaimController struct {
	kube     client.Client
	cloud    cloud.Provider
	recorder *events.Recorder
	clock    clock.Clock
}

// NewNodeClaimController wires the NodeClaim finalizer.
func NewNodeClaimController(kube client.Client, provider cloud.Provider, rec *events.Recorder, clk clock.Clock) *NodeClaimController {
	return &NodeClaimController{kube: kube, cloud: provider, recorder: rec, clock: clk}
}

// Reconcile advances one deleted NodeClaim.
func (c *NodeClaimController) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &v1.NodeClaim{}
	if err := c.kube.Get(ctx, req.NamespacedName, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if claim.DeletionTimestamp == nil || !controllerutil.ContainsFinalizer(claim, v1.TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("nodeclaim", claim.Name))
	if err := c.annotateDeadline(ctx, claim); err != nil {
		return reconcile.Result{}, err
	}
	nodes, err := nodeclaim.NodesFor(ctx, c.kube, claim)
	if err != nil {
		return reconcile.Result{}, err
	}
	for _, node := range nodes {
		if node.DeletionTimestamp == nil {
			if err := c.kube.Delete(ctx, node); client.IgnoreNotFound(err) != nil {
				return reconcile.Result{}, fmt.Errorf("deleting node %s of nodeclaim %s: %w", node.Name, claim.Name, err)
			}
		}
	}
	if len(nodes) > 0 {
		return reconcile.Result{RequeueAfter: nodeWait}, nil
	}
	if gone, err := terminateInstance(ctx, c.kube, c.cloud, c.recorder, claim, ""); err != nil || !gone {
		return reconcile.Result{RequeueAfter: instanceRecheck}, err
	}
	if err := removeFinalizer(ctx, c.kube, claim, v1.TerminationFinalizer); err != nil {
		return reconcile.Result{}, err
	}
	pool := claim.Labels[v1.NodePoolLabelKey]
	reason := DrainReason(claim)
	metrics.NodeClaimsTerminated.WithLabelValues(pool, claim.Labels[v1.CapacityTypeLabelKey], claim.Labels[corev1.LabelTopologyZone]).Inc()
	nodeClaimsTerminationDuration.WithLabelValues(pool).Observe(c.clock.Since(claim.DeletionTimestamp.Time).Seconds())
	log.FromContext(ctx).Info("deleted nodeclaim", "provider-id", claim.Status.ProviderID, "reason", reason)
	return reconcile.Result{}, nil
}

// annotateDeadline stamps karpenter.sh/nodeclaim-termination-timestamp when
// the claim has a terminationGracePeriod and no deadline yet.
func (c *NodeClaimController) annotateDeadline(ctx context.Context, claim *v1.NodeClaim) error {
	deadline := TerminationDeadline(claim)
	if deadline == nil {
		return nil
	}
	if _, ok := claim.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey]; ok {
		return nil
	}
	stored := claim.DeepCopy()
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey] = deadline.Format(time.RFC3339)
	if err := c.kube.Patch(ctx, claim, client.MergeFrom(stored)); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

// Register adds the controller; a Node's deletion wakes its claim.
func (c *NodeClaimController) Register(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).
		Named("nodeclaim.termination").
		For(&v1.NodeClaim{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			node := o.(*corev1.Node)
			if node.Spec.ProviderID == "" {
				return nil
			}
			claims, err := nodeclaim.ClaimsByProviderID(ctx, c.kube, node.Spec.ProviderID)
			if err != nil {
				return nil
			}
			out := make([]reconcile.Request, 0, len(claims))
			for _, cl := range claims {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: cl.Name}})
			}
			return out
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: ratelimit.Concurrency(50), RateLimiter: ratelimit.PerObject()}).
		Complete(c)
}
