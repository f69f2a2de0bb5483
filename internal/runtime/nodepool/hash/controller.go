// Package hash keeps the static-drift hashes current: it stamps each
// NodePool with the hash of its template, and when the hash version changes
// (a new release hashes differently) it re-stamps the NodePool's claims
// with the new version and, unless they already drifted, the new hash, so
// an upgrade never drifts every node. EC2NodeClass hashes are stamped on
// the class by its own controller; their claims are re-stamped here alike.
package hash

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
)

// Restamp updates the hash annotations of claim in place when its version
// differs from want's version: the version always, the hash only while the
// claim has not drifted. It reports whether anything changed.
func Restamp(claim *v1.NodeClaim, hashKey, versionKey string, want map[string]string) bool {
	if claim.Annotations[versionKey] == want[versionKey] {
		return false
	}
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Annotations[versionKey] = want[versionKey]
	if !meta.IsStatusConditionTrue(claim.Status.Conditions, v1.ConditionTypeDrifted) {
		claim.Annotations[hashKey] = want[hashKey]
	}
	return true
}

// Controller is the NodePool hash controller (requests name NodePools).
type Controller struct {
	kube  client.Client
	cloud cloud.Provider
}

// NewController wires the controller; the provider names the node class
// kinds whose hashes are re-stamped too.
func NewController(kube client.Client, provider cloud.Provider) *Controller {
	return &Controller{kube: kube, cloud: provider}
}

// Reconcile stamps the pool and re-stamps its claims and, for its node
// class, their node class hash version.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pool := &v1.NodePool{}
	if err := c.kube.Get(ctx, req.NamespacedName, pool); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	want := pool.HashAnnotations()
	if pool.Annotations[v1.NodePoolHashAnnotationKey] != want[v1.NodePoolHashAnnotationKey] ||
		pool.Annotations[v1.NodePoolHashVersionAnnotationKey] != want[v1.NodePoolHashVersionAnnotationKey] {
		stored := pool.DeepCopy()
		if pool.Annotations == nil {
			pool.Annotations = map[string]string{}
		}
		for k, v := range want {
			pool.Annotations[k] = v
		}
		if err := c.kube.Patch(ctx, pool, client.MergeFrom(stored)); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	var classWant map[string]string
	if kind, ok := cloud.NodeClassKindOf(c.cloud, pool.Spec.Template.Spec.NodeClassRef); ok {
		nc := kind.New()
		if err := c.kube.Get(ctx, client.ObjectKey{Name: pool.Spec.Template.Spec.NodeClassRef.Name}, nc); err == nil {
			classWant = kind.HashAnnotations(nc)
		}
	}
	claims := &v1.NodeClaimList{}
	if err := c.kube.List(ctx, claims, client.MatchingLabels{v1.NodePoolLabelKey: pool.Name}); err != nil {
		return reconcile.Result{}, err
	}
	for i := range claims.Items {
		claim := &claims.Items[i]
		stored := claim.DeepCopy()
		changed := Restamp(claim, v1.NodePoolHashAnnotationKey, v1.NodePoolHashVersionAnnotationKey, want)
		if classWant != nil && claim.Annotations[v1.EC2NodeClassHashVersionAnnotationKey] != "" {
			changed = Restamp(claim, v1.EC2NodeClassHashAnnotationKey, v1.EC2NodeClassHashVersionAnnotationKey, classWant) || changed
		}
		if !changed {
			continue
		}
		if err := c.kube.Patch(ctx, claim, client.MergeFrom(stored)); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, fmt.Errorf("re-stamping hash annotations of nodeclaim %s: %w", claim.Name, err)
		}
	}
	return reconcile.Result{}, nil
}

// Register adds the controller; node class changes wake the pools using it.
func (c *Controller) Register(mgr manager.Manager) error {
	b := builder.ControllerManagedBy(mgr).
		Named("nodepool.hash").
		For(&v1.NodePool{})
	for _, kind := range c.cloud.NodeClasses() {
		b = b.Watches(kind.New(), handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return kind.PoolRequests(ctx, c.kube, o.GetName())
		}))
	}
	return b.Complete(c)
}
