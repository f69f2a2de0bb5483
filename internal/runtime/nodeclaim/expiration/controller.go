// Package expiration deletes NodeClaims that reach their expireAfter.
package expiration

import (
	"context"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// ExpiresAt is when the claim expires; ok is false for expireAfter: Never.
func ExpiresAt(claim *v1.NodeClaim) (at time.Time, ok bool) {
	d := claim.Spec.ExpireAfter.Duration
	if d == nil {
		return time.Time{}, false
	}
	return claim.CreationTimestamp.Add(*d), true
}

// ExpirationController deletes NodeClaims once they reach their
// expireAfter. Expiration is forceful: no budget, no replacement launched
// first; the provisioner finds new homes for the pods as they drain.
type ExpirationController struct {
	kube     client.Client
	recorder *events.Recorder
	clock    clock.Clock
}

// NewExpirationController wires the controller.
func NewExpirationController(kube client.Client, rec *events.Recorder, clk clock.Clock) *ExpirationController {
	return &ExpirationController{kube: kube, recorder: rec, clock: clk}
}

// Reconcile deletes the claim if it expired, else comes back when it will.
func (c *ExpirationController) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &v1.NodeClaim{}
	if err := c.kube.Get(ctx, req.NamespacedName, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if claim.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	at, ok := ExpiresAt(claim)
	if !ok {
		return reconcile.Result{}, nil
	}
	if now := c.clock.Now(); now.Before(at) {
		return reconcile.Result{RequeueAfter: at.Sub(now)}, nil
	}
	if err := c.kube.Delete(ctx, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	pool := claim.Labels[v1.NodePoolLabelKey]
	c.countDisrupted(ctx, claim)
	c.recorder.Normal(claim, events.DisruptionTerminating, events.ActionDisrupt, "Disrupting NodeClaim: Expired")
	log.FromContext(ctx).Info("deleted expired nodeclaim", "nodeclaim", claim.Name, "nodepool", pool, "expired-at", at.UTC().Format(time.RFC3339))
	return reconcile.Result{}, nil
}

// countDisrupted counts the expired claim as Karpenter does, with its
// NodePool's consolidation policy and its node's reschedulable pods.
func (c *ExpirationController) countDisrupted(ctx context.Context, claim *v1.NodeClaim) {
	pool := &v1.NodePool{}
	if err := c.kube.Get(ctx, client.ObjectKey{Name: claim.Labels[v1.NodePoolLabelKey]}, pool); err != nil {
		pool = nil
	}
	metrics.Disrupted(metrics.ReasonExpired, claim, pool, state.ReschedulableOn(ctx, c.kube, claim.Status.NodeName))
}

// Register adds the controller.
func (c *ExpirationController) Register(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).Named("nodeclaim.expiration").For(&v1.NodeClaim{}).Complete(c)
}
