// Package tagging holds the controller that tags a NodeClaim's instance
// once its node registers, as Karpenter does: Name is the node's name, so
// the EC2 console shows which node an instance is.
package tagging

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ratelimit"
)

// Name is the controller's name, Karpenter's.
const Name = "nodeclaim.tagging"

// ReasonTaggingFailed is the warning on a NodeClaim whose instance could
// not be tagged; the controller retries.
const ReasonTaggingFailed = "InstanceTaggingFailed"

const actionTag = "Tagging"

// Controller tags the instances of registered NodeClaims and marks each
// claim done, so its instance is tagged once.
type Controller struct {
	kube     client.Client
	provider *awsprovider.Provider
	recorder *events.Recorder
}

// NewController wires the controller.
func NewController(kube client.Client, provider *awsprovider.Provider, recorder *events.Recorder) *Controller {
	return &Controller{kube: kube, provider: provider, recorder: recorder}
}

// Register adds the controller to the manager. It sees only claims that
// still need tagging.
func (c *Controller) Register(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).
		Named(Name).
		For(&v1.NodeClaim{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			claim, ok := o.(*v1.NodeClaim)
			return ok && taggable(claim)
		}))).
		// One worker, as Karpenter: the writes are paced
		// (awsprovider.TagsPerSecond), so more would only wait.
		WithOptions(controller.Options{MaxConcurrentReconciles: 1, RateLimiter: ratelimit.PerObject()}).
		Complete(c)
}

// taggable says whether a claim's instance still needs its tags: its node
// registered (the claim has the node's name and a provider ID), the claim
// is not being deleted, and it lacks either annotation. Karpenter's claims
// tagged before it added eks:eks-cluster-name carry only the first and are
// tagged again.
func taggable(claim *v1.NodeClaim) bool {
	done := claim.Annotations[v1.TaggedAnnotationKey] == "true" && claim.Annotations[v1.ClusterNameTaggedAnnotationKey] == "true"
	return !done && claim.DeletionTimestamp.IsZero() &&
		nodeclaim.IsTrue(claim, v1.ConditionTypeRegistered) && claim.Status.NodeName != "" && claim.Status.ProviderID != ""
}

// Reconcile tags one claim's instance, then annotates the claim. A failed
// call is retried with backoff; an instance that is gone or not this
// cluster's is left alone and the claim unmarked, as there is nothing to
// retry until the claim changes.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &v1.NodeClaim{}
	if err := c.kube.Get(ctx, req.NamespacedName, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !taggable(claim) {
		return reconcile.Result{}, nil
	}
	logger := log.FromContext(ctx).WithValues("NodeClaim", claim.Name, "Node", claim.Status.NodeName, "provider-id", claim.Status.ProviderID)
	ctx = log.IntoContext(ctx, logger)
	written, err := c.provider.TagRegistered(ctx, claim)
	switch {
	case cloud.IsNodeClaimNotFound(err):
		logger.V(1).Info("not tagging the instance", "reason", err.Error())
		return reconcile.Result{}, nil
	case err != nil:
		c.recorder.Warning(claim, ReasonTaggingFailed, actionTag, "Tagging instance failed (%s); retrying", awserr.CodeOrError(err))
		return reconcile.Result{}, fmt.Errorf("tagging the instance of NodeClaim %s: %w", claim.Name, err)
	}
	if len(written) > 0 {
		logger.Info("tagged instance", "tags", written)
	}
	patch := client.MergeFrom(claim.DeepCopy())
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Annotations[v1.TaggedAnnotationKey] = "true"
	claim.Annotations[v1.ClusterNameTaggedAnnotationKey] = "true"
	if err := c.kube.Patch(ctx, claim, patch); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{}, nil
}
