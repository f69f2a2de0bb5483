// Package counter keeps a NodePool's status.nodes and status.resources: the
// number of its launched NodeClaims and their summed capacity; and serves
// them, with the pool's limits, as karpenter_nodepools_usage and
// karpenter_nodepools_limit.
package counter

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
)

// Controller is the NodePool counter.
type Controller struct{ kube client.Client }

// NewController wires the controller.
func NewController(kube client.Client) *Controller { return &Controller{kube: kube} }

// Reconcile recounts one pool.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pool := &v1.NodePool{}
	if err := c.kube.Get(ctx, req.NamespacedName, pool); err != nil {
		if apierrors.IsNotFound(err) {
			metrics.ForgetNodePool(req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	// Every claim event of the pool recounts it: read the cache's objects
	// in place rather than copy hundreds of claims each time (Count only
	// reads them).
	claims := &v1.NodeClaimList{}
	if err := c.kube.List(ctx, claims, client.MatchingLabels{v1.NodePoolLabelKey: pool.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, err
	}
	stored := pool.DeepCopy()
	nodes, res := Count(claims.Items)
	pool.Status.Nodes = &nodes
	pool.Status.Resources = res
	metrics.ObserveNodePool(pool)
	if equality.Semantic.DeepEqual(stored.Status, pool.Status) {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, client.IgnoreNotFound(c.kube.Status().Patch(ctx, pool, client.MergeFrom(stored)))
}

// Count sums the launched claims: their number and capacity, with the
// number also under the "nodes" resource as Karpenter reports it.
func Count(claims []v1.NodeClaim) (int64, corev1.ResourceList) {
	var n int64
	res := corev1.ResourceList{}
	for i := range claims {
		if claims[i].Status.ProviderID == "" {
			continue
		}
		n++
		for name, q := range claims[i].Status.Capacity {
			cur := res[name]
			cur.Add(q)
			res[name] = cur
		}
	}
	res["nodes"] = *resource.NewQuantity(n, resource.DecimalSI)
	return n, res
}

// Register adds the controller; claim changes wake their pool.
func (c *Controller) Register(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).
		Named("nodepool.counter").
		For(&v1.NodePool{}).
		Watches(&v1.NodeClaim{}, handler.EnqueueRequestsFromMapFunc(nodeclaim.PoolRequest)).
		Complete(c)
}
