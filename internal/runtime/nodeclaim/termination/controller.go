// Package termination finishes deleted NodeClaims: it deletes the claim's
// Node, terminates its instance and then releases the karpenter.sh/termination
// finalizers. It does not cordon or drain: pods on the Node are left to the
// Node's deletion. A drain-aware termination flow replaces this controller
// by registering its own in its place (operator wiring).
package termination

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
)

// instanceRecheck is how often a terminating instance is checked again.
const instanceRecheck = 5 * time.Second

// Controller is the NodeClaim finalizer.
type Controller struct {
	kube     client.Client
	cloud    cloud.Provider
	recorder *events.Recorder
}

// NewController wires the controller.
func NewController(kube client.Client, provider cloud.Provider, rec *events.Recorder) *Controller {
	return &Controller{kube: kube, cloud: provider, recorder: rec}
}

// Reconcile runs for deleted claims that still hold the finalizer.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &v1.NodeClaim{}
	if err := c.kube.Get(ctx, req.NamespacedName, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if claim.DeletionTimestamp == nil || !controllerutil.ContainsFinalizer(claim, v1.TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	logger := log.FromContext(ctx).WithValues("nodeclaim", claim.Name)
	nodes, err := nodeclaim.NodesFor(ctx, c.kube, claim)
	if err != nil {
		return reconcile.Result{}, err
	}
	for _, node := range nodes {
		if err := nodeclaim.DeleteNode(ctx, c.kube, node); err != nil {
			return reconcile.Result{}, err
		}
	}
	if claim.Status.ProviderID != "" {
		err := c.cloud.Delete(ctx, claim)
		if err == nil {
			if !nodeclaim.IsTrue(claim, v1.ConditionTypeInstanceTerminating) {
				stored := claim.DeepCopy()
				nodeclaim.Set(claim, v1.ConditionTypeInstanceTerminating, metav1.ConditionTrue, v1.ConditionTypeInstanceTerminating, "")
				if err := c.kube.Status().Patch(ctx, claim, client.MergeFrom(stored)); err != nil {
					return reconcile.Result{}, client.IgnoreNotFound(err)
				}
				c.recorder.Normal(claim, events.InstanceTerminating, events.ActionDelete, "Terminating instance %s", claim.Status.ProviderID)
			}
			return reconcile.Result{RequeueAfter: instanceRecheck}, nil
		}
		if !cloud.IsNodeClaimNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("terminating instance %s: %w", claim.Status.ProviderID, err)
		}
	}
	stored := claim.DeepCopy()
	controllerutil.RemoveFinalizer(claim, v1.TerminationFinalizer)
	if err := c.kube.Patch(ctx, claim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	metrics.NodeClaimsTerminated.WithLabelValues("deleted", claim.Labels[v1.NodePoolLabelKey]).Inc()
	logger.Info("deleted nodeclaim", "provider-id", claim.Status.ProviderID)
	return reconcile.Result{}, nil
}

// Register adds the controller.
func (c *Controller) Register(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).
		Named("nodeclaim.termination").
		For(&v1.NodeClaim{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 50}).
		Complete(c)
}
