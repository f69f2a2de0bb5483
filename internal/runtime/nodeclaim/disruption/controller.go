package disruption

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/drift"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ratelimit"
)

// controllerName names the controller in logs and metrics.
const controllerName = "nodeclaim.disruption"

// DriftRecheck is how often drift is evaluated again without a trigger.
const DriftRecheck = 5 * time.Minute

// Controller sets Consolidatable and Drifted on NodeClaims.
type Controller struct {
	kube  client.Client
	cloud cloud.Provider
	clock clock.Clock

	mu sync.Mutex
	// typeChecked is when each claim, by name, last passed the instance
	// type check; the UID tells a claim recreated under the name apart.
	// Reconcile drops a claim's entry once the claim is gone or deleting.
	typeChecked map[string]typeCheck
}

type typeCheck struct {
	uid types.UID
	at  time.Time
}

// NewController wires the controller.
func NewController(kube client.Client, provider cloud.Provider, clk clock.Clock) *Controller {
	return &Controller{kube: kube, cloud: provider, clock: clk, typeChecked: map[string]typeCheck{}}
}

// Reconcile updates one claim's disruption conditions.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &v1.NodeClaim{}
	if err := c.kube.Get(ctx, req.NamespacedName, claim); err != nil {
		if apierrors.IsNotFound(err) {
			c.forget(req.Name)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if claim.DeletionTimestamp != nil {
		c.forget(claim.Name)
		return reconcile.Result{}, nil
	}
	pool := &v1.NodePool{}
	if err := c.kube.Get(ctx, client.ObjectKey{Name: claim.Labels[v1.NodePoolLabelKey]}, pool); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	stored := claim.DeepCopy()
	ok, wait := Consolidatable(claim, pool, c.clock.Now())
	if ok {
		nodeclaim.Set(claim, v1.ConditionTypeConsolidatable, metav1.ConditionTrue, v1.ConditionTypeConsolidatable, "")
	} else {
		meta.RemoveStatusCondition(&claim.Status.Conditions, v1.ConditionTypeConsolidatable)
	}
	result := reconcile.Result{RequeueAfter: DriftRecheck}
	if wait > 0 && wait < result.RequeueAfter {
		result.RequeueAfter = wait
	}
	reason, err := c.drifted(ctx, claim, pool)
	if err != nil {
		return reconcile.Result{}, err
	}
	switch {
	case reason != "":
		nodeclaim.Set(claim, v1.ConditionTypeDrifted, metav1.ConditionTrue, reason, "")
	case nodeclaim.IsTrue(claim, v1.ConditionTypeLaunched):
		meta.RemoveStatusCondition(&claim.Status.Conditions, v1.ConditionTypeDrifted)
	}
	if !equality.Semantic.DeepEqual(stored.Status, claim.Status) {
		if err := c.kube.Status().Patch(ctx, claim, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
			if client.IgnoreNotFound(err) == nil {
				return reconcile.Result{}, nil
			}
			if apierrors.IsConflict(err) {
				// The lifecycle controller wrote first; the new version's
				// watch event judges it once the cache has it.
				return reconcile.Result{}, nil
			}
			return reconcile.Result{}, fmt.Errorf("updating disruption conditions of nodeclaim %s: %w", claim.Name, err)
		}
	}
	return result, nil
}

// drifted is the drift reason of a launched claim, "" if it matches.
func (c *Controller) drifted(ctx context.Context, claim *v1.NodeClaim, pool *v1.NodePool) (string, error) {
	if !nodeclaim.IsTrue(claim, v1.ConditionTypeLaunched) {
		return "", nil
	}
	if r := drift.NodePool(claim, pool); r != "" {
		return r, nil
	}
	if r, err := c.instanceTypeDrift(ctx, claim, pool); r != "" || err != nil {
		return r, err
	}
	r, err := c.cloud.IsDrifted(metrics.WithController(ctx, controllerName), claim)
	if err != nil {
		return "", fmt.Errorf("checking nodeclaim %s for node class drift: %w", claim.Name, err)
	}
	return string(r), nil
}

// instanceTypeDrift checks, when due, that the pool's catalog still offers
// the claim's instance type.
func (c *Controller) instanceTypeDrift(ctx context.Context, claim *v1.NodeClaim, pool *v1.NodePool) (string, error) {
	now := c.clock.Now()
	c.mu.Lock()
	var last time.Time
	if tc, ok := c.typeChecked[claim.Name]; ok && tc.uid == claim.UID {
		last = tc.at
	}
	c.mu.Unlock()
	if !drift.InstanceTypeCheckDue(claim.CreationTimestamp.Time, last, now) {
		return "", nil
	}
	catalog, err := c.cloud.GetInstanceTypes(metrics.WithController(ctx, controllerName), pool)
	switch {
	case cloud.IsNodeClassNotReady(err):
		return "", nil // judged against a resolved node class only
	case err != nil:
		return "", fmt.Errorf("listing instance types of nodepool %s for nodeclaim %s: %w", pool.Name, claim.Name, err)
	case len(catalog) == 0:
		return "", nil // an empty catalog is missing data, not every type gone
	}
	if r := drift.InstanceType(claim, catalog); r != "" {
		return r, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.typeChecked[claim.Name] = typeCheck{uid: claim.UID, at: now}
	return "", nil
}

// forget drops what the controller remembers of a claim.
func (c *Controller) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.typeChecked, name)
}

// Register adds the controller: changes of a NodePool or a node class
// wake the claims that use it.
func (c *Controller) Register(mgr manager.Manager) error {
	b := builder.ControllerManagedBy(mgr).
		Named(controllerName).
		For(&v1.NodeClaim{}).
		Watches(&v1.NodePool{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return c.claims(ctx, func(cl *v1.NodeClaim) bool { return cl.Labels[v1.NodePoolLabelKey] == o.GetName() })
		}))
	for _, kind := range c.cloud.NodeClasses() {
		b = b.Watches(kind.New(), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return c.claims(ctx, func(cl *v1.NodeClaim) bool {
				ref := cl.Spec.NodeClassRef
				return ref != nil && ref.Kind == kind.Kind && ref.Name == o.GetName()
			})
		}))
	}
	return b.WithOptions(controller.Options{MaxConcurrentReconciles: ratelimit.Concurrency(10), RateLimiter: ratelimit.PerObject()}).
		Complete(c)
}

func (c *Controller) claims(ctx context.Context, match func(*v1.NodeClaim) bool) []reconcile.Request {
	list := &v1.NodeClaimList{}
	if err := c.kube.List(ctx, list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if match(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
		}
	}
	return out
}
