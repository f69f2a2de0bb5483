package nodeoverlay

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1alpha1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeoverlay/overlays"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "nodeoverlay"

// Store holds the current Table; the cloud provider applies it
// (cloud.InstanceTypeOverlay). Until the controller's first evaluation no
// pool is evaluated, so no instance type is offered without its overlays.
type Store struct {
	table atomic.Pointer[overlays.Table]
}

// NewStore returns a store in which no pool is evaluated yet.
func NewStore() *Store {
	s := &Store{}
	s.table.Store(overlays.Empty())
	return s
}

var _ cloud.InstanceTypeOverlay = (*Store)(nil)

// Apply applies the current table to a pool's instance types.
func (s *Store) Apply(pool string, its []*scheduling.InstanceType) ([]*scheduling.InstanceType, error) {
	return s.table.Load().Apply(pool, its)
}

// InstanceTypes lists a pool's instance types before any overlay.
type InstanceTypes interface {
	BaseInstanceTypes(ctx context.Context, pool *v1.NodePool) ([]*scheduling.InstanceType, error)
}

// Controller evaluates every NodeOverlay against every NodePool on any
// change of either (or of a node class), writes each overlay's
// ValidationSucceeded and Ready conditions, and publishes the result.
type Controller struct {
	kube  client.Client
	types InstanceTypes
	kinds []cloud.NodeClassKind
	store *Store
}

// NewController wires the controller; kinds are the node class kinds whose
// changes change a pool's instance types.
func NewController(kube client.Client, types InstanceTypes, kinds []cloud.NodeClassKind, store *Store) *Controller {
	return &Controller{kube: kube, types: types, kinds: kinds, store: store}
}

// retryAfter is how soon a pool whose instance types could not be listed
// (its node class not ready yet, say) is tried again; its pods wait for it.
const retryAfter = 10 * time.Second

// refreshAfter re-evaluates without a change, as Karpenter does, so
// instance types added to the catalog get their overlays.
const refreshAfter = 6 * time.Hour

// Reconcile evaluates all overlays at once: the request only wakes it.
func (c *Controller) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	list := &v1alpha1.NodeOverlayList{}
	if err := c.kube.List(ctx, list); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing NodeOverlays: %w", err)
	}
	nodePools := &v1.NodePoolList{}
	if err := c.kube.List(ctx, nodePools); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing NodePools: %w", err)
	}
	var pools []overlays.Pool
	var listErrs []error
	for i := range nodePools.Items {
		np := &nodePools.Items[i]
		its, err := c.types.BaseInstanceTypes(ctx, np)
		if err != nil {
			listErrs = append(listErrs, fmt.Errorf("NodePool %s: %w", np.Name, err))
			continue
		}
		pools = append(pools, overlays.Pool{Name: np.Name, Labels: np.Spec.Template.Labels, InstanceTypes: its})
	}
	valid, invalid := overlays.Valid(list.Items)
	table, conflicts, err := overlays.Evaluate(valid, pools)
	if err != nil {
		return reconcile.Result{}, err
	}
	requeue, err := c.writeStatuses(ctx, list.Items, invalid, conflicts)
	if err != nil || requeue {
		// The statuses must say what the table does: publish neither
		// until both agree with the overlays as they are now.
		return reconcile.Result{Requeue: requeue}, err
	}
	c.store.table.Store(table)
	if len(listErrs) > 0 {
		log.FromContext(ctx).Info("NodeOverlays not evaluated for some NodePools: their instance types are not offered until they are",
			"error", errors.Join(listErrs...).Error())
		return reconcile.Result{RequeueAfter: retryAfter}, nil
	}
	return reconcile.Result{RequeueAfter: refreshAfter}, nil
}

// writeStatuses sets each overlay's ValidationSucceeded (False with
// RuntimeValidation or Conflict) and Ready. It asks for a new evaluation
// when an overlay changed or went away meanwhile.
func (c *Controller) writeStatuses(ctx context.Context, overlays []v1alpha1.NodeOverlay, invalid map[string]error, conflicts map[string]bool) (bool, error) {
	var errs []error
	for i := range overlays {
		o := &overlays[i]
		stored := o.DeepCopy()
		status, reason, msg := metav1.ConditionTrue, v1alpha1.ConditionTypeValidationSucceeded, ""
		if err, ok := invalid[o.Name]; ok {
			status, reason, msg = metav1.ConditionFalse, v1alpha1.ReasonRuntimeValidation, err.Error()
		} else if conflicts[o.Name] {
			status, reason, msg = metav1.ConditionFalse, v1alpha1.ReasonConflict,
				fmt.Sprintf("conflicts with another NodeOverlay of weight %d that changes the same price or resource of an instance type; give one of them another weight", o.Weight())
		}
		for _, t := range []string{v1alpha1.ConditionTypeValidationSucceeded, v1.ConditionTypeReady} {
			if t == v1.ConditionTypeReady && status == metav1.ConditionTrue {
				reason = v1.ConditionTypeReady
			}
			meta.SetStatusCondition(&o.Status.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: o.Generation})
		}
		if equality.Semantic.DeepEqual(stored.Status, o.Status) {
			continue
		}
		if err := c.kube.Status().Patch(ctx, o, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return true, nil
			}
			errs = append(errs, fmt.Errorf("NodeOverlay %s status: %w", o.Name, err))
		}
	}
	return false, errors.Join(errs...)
}

// everything is the one request all events map to: one evaluation covers
// every overlay.
var everything = reconcile.Request{NamespacedName: types.NamespacedName{Name: "nodeoverlays"}}

// Register adds the controller to the manager.
func (c *Controller) Register(mgr manager.Manager) error {
	wake := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{everything}
	})
	b := builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&v1alpha1.NodeOverlay{}, wake, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1.NodePool{}, wake, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1})
	// A node class's status (Ready, AMIs, subnets) decides which instance
	// types its pools list, so every change of it counts.
	for _, k := range c.kinds {
		b = b.Watches(k.New(), wake)
	}
	return b.Complete(c)
}
