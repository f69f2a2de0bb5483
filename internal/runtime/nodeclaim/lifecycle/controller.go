// Package lifecycle brings a NodeClaim from creation to a usable Node:
// launch (cloud Create), registration (sync the Node), initialization (the
// Node is Ready and complete) and liveness (give up on claims that never
// launch or register). Deleting claims belong to package termination.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state/nodepoolhealth"
)

// Controller is the NodeClaim lifecycle controller.
type Controller struct {
	kube     client.Client
	cloud    cloud.Provider
	recorder *events.Recorder
	clock    clock.Clock
	// launched remembers Create results until the informer shows the
	// Launched condition, so a stale read never launches twice.
	launched sync.Map // types.UID -> *v1.NodeClaim
	// labelled remembers the claims whose Node this controller labelled
	// initialized until the claim's stored status says so.
	labelled sync.Map // types.UID -> struct{}
	// health is the NodePools' registration record, shared with the
	// NodePool readiness controller, which resets it.
	health *nodepoolhealth.State
}

// NewController wires the controller.
func NewController(kube client.Client, provider cloud.Provider, rec *events.Recorder, clk clock.Clock, health *nodepoolhealth.State) *Controller {
	return &Controller{kube: kube, cloud: provider, recorder: rec, clock: clk, health: health}
}

// result of one step: deleted stops the pipeline; requeue asks to come back.
type result struct {
	deleted bool
	requeue reconcile.Result
}

// Reconcile runs the steps in order and writes metadata, then status.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &v1.NodeClaim{}
	if err := c.kube.Get(ctx, req.NamespacedName, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if claim.DeletionTimestamp != nil {
		c.launched.Delete(claim.UID)
		c.labelled.Delete(claim.UID)
		return reconcile.Result{}, nil
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("nodeclaim", claim.Name, "nodepool", claim.Labels[v1.NodePoolLabelKey]))
	stored := claim.DeepCopy()
	controllerutil.AddFinalizer(claim, v1.TerminationFinalizer)
	nodeclaim.InitConditions(claim)

	var errs []error
	var out reconcile.Result
	for _, step := range []func(context.Context, *v1.NodeClaim) (result, error){c.launch, c.register, c.initialize, c.liveness} {
		res, err := step(ctx, claim)
		if res.deleted {
			return reconcile.Result{}, err
		}
		if err != nil {
			errs = append(errs, err)
		}
		out = earliest(out, res.requeue)
	}
	nodeclaim.SetReady(claim)
	if err := c.write(ctx, stored, claim); err != nil {
		if apierrors.IsConflict(err) {
			// The store holds a newer claim than the cache served; its
			// watch event reconciles again once the cache has it. A
			// requeue now would read the same stale copy and lose again.
			return reconcile.Result{}, nil
		}
		errs = append(errs, err)
	} else {
		countSteps(stored, claim)
		announce(c.recorder, claim, Transitions(stored, claim))
		if !nodeclaim.IsTrue(stored, v1.ConditionTypeRegistered) && nodeclaim.IsTrue(claim, v1.ConditionTypeRegistered) {
			if err := c.registrationHealth(ctx, claim, true); err != nil {
				errs = append(errs, fmt.Errorf("recording the registration for the nodepool's NodeRegistrationHealthy: %w", err))
			}
		}
	}
	return out, errors.Join(errs...)
}

// stepCounters count the lifecycle steps by the condition that records them.
var stepCounters = []struct {
	condition string
	counter   *prometheus.CounterVec
}{
	{v1.ConditionTypeLaunched, metrics.NodeClaimsLaunched},
	{v1.ConditionTypeRegistered, metrics.NodeClaimsRegistered},
	{v1.ConditionTypeInitialized, metrics.NodeClaimsInitialized},
}

// countSteps counts the steps this reconcile completed once their status is
// stored: a step repeated because the write lost a conflict (the node label
// patched again from a stale cache) is counted once. A registration is also
// a Node created (karpenter_nodes_created_total).
func countSteps(before, after *v1.NodeClaim) {
	for _, s := range stepCounters {
		if !nodeclaim.IsTrue(before, s.condition) && nodeclaim.IsTrue(after, s.condition) {
			s.counter.WithLabelValues(after.Labels[v1.NodePoolLabelKey]).Inc()
			if s.condition == v1.ConditionTypeRegistered {
				metrics.NodesCreated.WithLabelValues(after.Labels[v1.NodePoolLabelKey], after.Labels[corev1.LabelTopologyZone]).Inc()
			}
		}
	}
}

// write persists metadata then status, keeping the in-memory status across
// the metadata update (whose response carries the stored status).
func (c *Controller) write(ctx context.Context, stored, claim *v1.NodeClaim) error {
	if !equality.Semantic.DeepEqual(stored.ObjectMeta, claim.ObjectMeta) {
		status := claim.Status.DeepCopy()
		if err := c.kube.Update(ctx, claim); err != nil {
			return client.IgnoreNotFound(err)
		}
		claim.Status = *status
	}
	if !equality.Semantic.DeepEqual(stored.Status, claim.Status) {
		if err := c.kube.Status().Update(ctx, claim); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	return nil
}

func earliest(a, b reconcile.Result) reconcile.Result {
	switch {
	case a.RequeueAfter == 0:
		return b
	case b.RequeueAfter == 0 || a.RequeueAfter < b.RequeueAfter:
		return a
	}
	return b
}

// Register adds the controller; Node events wake the claim they belong to.
func (c *Controller) Register(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).
		Named("nodeclaim.lifecycle").
		For(&v1.NodeClaim{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(c.claimsForNode)).
		WithOptions(controller.Options{MaxConcurrentReconciles: ratelimit.Concurrency(50), RateLimiter: ratelimit.PerObject()}).
		Complete(c)
}

func (c *Controller) claimsForNode(ctx context.Context, o client.Object) []reconcile.Request {
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
}
