package lifecycle

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
)

// launch creates the instance. Insufficient capacity and a node class that
// is not ready (Ready=False) delete the claim, so the next scheduling pass
// decides afresh with those offerings marked unavailable; other errors,
// such as a node class still resolving, are retried with the claim kept.
func (c *Controller) launch(ctx context.Context, claim *v1.NodeClaim) (result, error) {
	if nodeclaim.IsTrue(claim, v1.ConditionTypeLaunched) {
		c.launched.Delete(claim.UID)
		return result{}, nil
	}
	// A stale read of the claim may bring us back after the launch: reuse
	// its result rather than launch twice.
	if cached, ok := c.launched.Load(claim.UID); ok {
		populate(claim, cached.(*v1.NodeClaim))
		nodeclaim.Set(claim, v1.ConditionTypeLaunched, metav1.ConditionTrue, v1.ConditionTypeLaunched, "")
		return result{}, nil
	}
	created, err := c.cloud.Create(metrics.WithController(ctx, "nodeclaim.lifecycle"), claim)
	switch {
	case cloud.IsInsufficientCapacity(err):
		c.recorder.Warning(claim, events.InsufficientCapacityError, events.ActionLaunching, "NodeClaim %s event: %s", claim.Name, err)
		return c.deleteClaim(ctx, claim, "insufficient_capacity", err)
	case cloud.IsNodeClassNotReady(err):
		c.recorder.Warning(claim, events.NodeClassNotReady, events.ActionLaunching, "NodeClaim %s event: %s", claim.Name, err)
		return c.deleteClaim(ctx, claim, "nodeclass_not_ready", err)
	case err != nil:
		reason := "LaunchFailed"
		var ce *cloud.CreateError
		if errors.As(err, &ce) && ce.Reason != "" {
			reason = ce.Reason
		}
		nodeclaim.Set(claim, v1.ConditionTypeLaunched, metav1.ConditionUnknown, reason, err.Error())
		return result{}, fmt.Errorf("launching nodeclaim: %w", err)
	}
	c.launched.Store(claim.UID, created)
	populate(claim, created)
	nodeclaim.Set(claim, v1.ConditionTypeLaunched, metav1.ConditionTrue, v1.ConditionTypeLaunched, "")
	log.FromContext(ctx).Info("launched nodeclaim", "provider-id", claim.Status.ProviderID,
		"instance-type", claim.Labels["node.kubernetes.io/instance-type"], "zone", claim.Labels["topology.kubernetes.io/zone"],
		"capacity-type", claim.Labels[v1.CapacityTypeLabelKey])
	return result{}, nil
}

// populate copies what the launch resolved onto the claim.
func populate(claim, created *v1.NodeClaim) {
	if claim.Labels == nil {
		claim.Labels = map[string]string{}
	}
	for k, v := range created.Labels {
		claim.Labels[k] = v
	}
	if len(created.Annotations) > 0 && claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	for k, v := range created.Annotations {
		claim.Annotations[k] = v
	}
	claim.Status.ProviderID = created.Status.ProviderID
	claim.Status.ImageID = created.Status.ImageID
	claim.Status.Capacity = created.Status.Capacity
	claim.Status.Allocatable = created.Status.Allocatable
}

// deleteClaim deletes the claim, logging why; termination finishes it.
func (c *Controller) deleteClaim(ctx context.Context, claim *v1.NodeClaim, reason string, cause error) (result, error) {
	log.FromContext(ctx).Info("deleting nodeclaim", "reason", reason, "cause", fmt.Sprint(cause))
	return result{deleted: true}, client.IgnoreNotFound(c.kube.Delete(ctx, claim))
}
