// Package readiness keeps a NodePool's Ready condition: NodeClassReady
// mirrors its node class's Ready condition and ValidationSucceeded the
// runtime checks of its template; Ready is both. Only Ready NodePools are
// provisioned from. It also resets the informational
// NodeRegistrationHealthy condition (which the NodeClaim lifecycle sets)
// to Unknown when the pool or its node class changes.
package readiness

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state/nodepoolhealth"
)

// Controller is the NodePool readiness controller.
type Controller struct {
	kube   client.Client
	cloud  cloud.Provider
	health *nodepoolhealth.State
}

// NewController wires the controller; the provider names the node class
// kinds a NodePool may reference, and health is the registration record
// the NodeClaim lifecycle keeps.
func NewController(kube client.Client, provider cloud.Provider, health *nodepoolhealth.State) *Controller {
	return &Controller{kube: kube, cloud: provider, health: health}
}

// Reconcile recomputes the pool's conditions.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pool := &v1.NodePool{}
	if err := c.kube.Get(ctx, req.NamespacedName, pool); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	stored := pool.DeepCopy()
	status, reason, msg, gen, err := c.nodeClassReady(ctx, pool)
	if err != nil {
		return reconcile.Result{}, err
	}
	set(pool, v1.ConditionTypeNodeClassReady, status, reason, msg)
	if gen != 0 {
		c.registrationHealth(pool, gen)
		pool.Status.NodeClassObservedGeneration = gen
	}
	if err := Validate(pool); err != nil {
		set(pool, v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, "NodePoolValidationFailed", err.Error())
	} else {
		set(pool, v1.ConditionTypeValidationSucceeded, metav1.ConditionTrue, v1.ConditionTypeValidationSucceeded, "")
	}
	setRoot(pool)
	if equality.Semantic.DeepEqual(stored.Status, pool.Status) {
		return reconcile.Result{}, nil
	}
	// The optimistic lock: a merge patch replaces the whole condition list,
	// and the NodeClaim lifecycle writes NodeRegistrationHealthy beside us.
	err = c.kube.Status().Patch(ctx, pool, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsConflict(err) {
		return reconcile.Result{Requeue: true}, nil
	}
	return reconcile.Result{}, client.IgnoreNotFound(err)
}

// registrationHealth seeds the registration record from the stored
// condition after a restart, and resets both (condition Unknown, record
// empty) when the condition is missing or the pool's spec or its node
// class (generation gen) changed since it was set: old launches say
// nothing about the new configuration.
func (c *Controller) registrationHealth(pool *v1.NodePool, gen int64) {
	cond := meta.FindStatusCondition(pool.Status.Conditions, v1.ConditionTypeNodeRegistrationHealthy)
	if c.health != nil && cond != nil {
		switch cond.Status {
		case metav1.ConditionTrue:
			c.health.Seed(pool.UID, nodepoolhealth.Healthy)
		case metav1.ConditionFalse:
			c.health.Seed(pool.UID, nodepoolhealth.Unhealthy)
		}
	}
	if cond != nil && cond.ObservedGeneration == pool.Generation && pool.Status.NodeClassObservedGeneration == gen {
		return
	}
	if cond == nil || cond.Status != metav1.ConditionUnknown || cond.ObservedGeneration != pool.Generation {
		meta.SetStatusCondition(&pool.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeNodeRegistrationHealthy,
			Status: metav1.ConditionUnknown, Reason: "AwaitingReconciliation", Message: "no node launched since the NodePool or its node class changed",
			ObservedGeneration: pool.Generation})
	}
	if c.health != nil {
		c.health.Reset(pool.UID)
	}
}

func (c *Controller) nodeClassReady(ctx context.Context, pool *v1.NodePool) (metav1.ConditionStatus, string, string, int64, error) {
	ref := pool.Spec.Template.Spec.NodeClassRef
	kind, ok := cloud.NodeClassKindOf(c.cloud, ref)
	if !ok {
		return metav1.ConditionFalse, "UnsupportedNodeClass", "spec.template.spec.nodeClassRef must reference " + c.supported(), 0, nil
	}
	nc := kind.New()
	if err := c.kube.Get(ctx, types.NamespacedName{Name: ref.Name}, nc); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return metav1.ConditionFalse, "NodeClassNotFound", fmt.Sprintf("%s %q not found", ref.Kind, ref.Name), 0, nil
		}
		return "", "", "", 0, err
	}
	if nc.GetDeletionTimestamp() != nil {
		return metav1.ConditionFalse, "NodeClassTerminating", fmt.Sprintf("%s %q is being deleted", ref.Kind, ref.Name), nc.GetGeneration(), nil
	}
	ready := meta.FindStatusCondition(nc.GetConditions(), v1.ConditionTypeReady)
	switch {
	case ready == nil:
		return metav1.ConditionUnknown, "NodeClassReadinessUnknown", fmt.Sprintf("%s %q has no Ready condition yet", ref.Kind, ref.Name), nc.GetGeneration(), nil
	case ready.Status == metav1.ConditionTrue:
		return metav1.ConditionTrue, v1.ConditionTypeNodeClassReady, "", nc.GetGeneration(), nil
	}
	return ready.Status, "NodeClassNotReady", fmt.Sprintf("%s %q is not ready: %s", ref.Kind, ref.Name, ready.Message), nc.GetGeneration(), nil
}

// supported names the node class kinds the provider serves.
func (c *Controller) supported() string {
	var kinds []string
	for _, k := range c.cloud.NodeClasses() {
		kinds = append(kinds, fmt.Sprintf("group %s, kind %s", k.Group, k.Kind))
	}
	return strings.Join(kinds, " or ")
}

// Validate runs the checks CEL cannot: every requirement parses.
func Validate(pool *v1.NodePool) error {
	var errs []error
	for i, r := range pool.Spec.Template.Spec.Requirements {
		if _, err := r.Parse(); err != nil {
			errs = append(errs, fmt.Errorf("spec.template.spec.requirements[%d] (%s): %w", i, r.Key, err))
		}
	}
	return errors.Join(errs...)
}

func set(pool *v1.NodePool, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&pool.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: pool.Generation})
}

func setRoot(pool *v1.NodePool) {
	status, reason, msg := metav1.ConditionTrue, v1.ConditionTypeReady, ""
	for _, t := range v1.NodePoolReadyConditions {
		c := meta.FindStatusCondition(pool.Status.Conditions, t)
		if c == nil || c.Status != metav1.ConditionTrue {
			s := metav1.ConditionUnknown
			if c != nil {
				s = c.Status
			}
			if status != metav1.ConditionFalse {
				status = s
			}
			reason = "UnhealthyDependents"
			if msg != "" {
				msg += ", "
			}
			msg += fmt.Sprintf("%s=%s", t, s)
		}
	}
	set(pool, v1.ConditionTypeReady, status, reason, msg)
}

// Register adds the controller; node class changes wake their pools.
func (c *Controller) Register(mgr manager.Manager) error {
	b := builder.ControllerManagedBy(mgr).
		Named("nodepool.readiness").
		For(&v1.NodePool{})
	for _, kind := range c.cloud.NodeClasses() {
		b = b.Watches(kind.New(), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return kind.PoolRequests(ctx, c.kube, o.GetName())
		}))
	}
	return b.Complete(c)
}
