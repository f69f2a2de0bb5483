package lifecycle

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state/nodepoolhealth"
)

// registrationHealth records one launch's outcome for the claim's NodePool
// (registered, or given up on at a launch or registration timeout) and
// keeps the NodePool's NodeRegistrationHealthy condition, as Karpenter
// v1.15 does: True when a node registers while fewer than half of the
// pool's last launches failed, False when a failure makes it half. The
// condition is written before the outcome is recorded, so a failed write
// is retried with the outcome still to record. Claims the pool does not
// own (no owner reference to it) are not its evidence.
func (c *Controller) registrationHealth(ctx context.Context, claim *v1.NodeClaim, registered bool) error {
	name := claim.Labels[v1.NodePoolLabelKey]
	if name == "" || c.health == nil {
		return nil
	}
	// A conflict is retried here, on a fresh read: a registration's
	// reconcile that failed after storing the claim would not see the
	// transition again, and the outcome would go unrecorded.
	var pool *v1.NodePool
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		pool = &v1.NodePool{}
		if err := c.kube.Get(ctx, client.ObjectKey{Name: name}, pool); err != nil {
			return err
		}
		if !ownedByPool(claim, pool) {
			pool = nil
			return nil
		}
		stored := pool.DeepCopy()
		if !setRegistrationHealth(pool, claim, c.health.Next(pool.UID, registered), registered, c.clock.Now()) {
			return nil
		}
		// The optimistic lock: a merge patch replaces the whole condition
		// list, so a concurrent writer's condition must not be lost.
		return c.kube.Status().Patch(ctx, pool, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil || pool == nil {
		return client.IgnoreNotFound(err)
	}
	c.health.Record(pool.UID, registered)
	return nil
}

// setRegistrationHealth sets the pool's NodeRegistrationHealthy condition
// for the status it has once this outcome is recorded; it reports whether
// the condition changed. A success sets True only when the pool is Healthy;
// a failure sets False only when it is Unhealthy, with the reason of the
// launch that failed: RegistrationFailed when the instance launched but
// never became a Node, else the claim's Launched reason.
func setRegistrationHealth(pool *v1.NodePool, claim *v1.NodeClaim, next nodepoolhealth.Status, registered bool, now time.Time) bool {
	current := meta.FindStatusCondition(pool.Status.Conditions, v1.ConditionTypeNodeRegistrationHealthy)
	cond := metav1.Condition{Type: v1.ConditionTypeNodeRegistrationHealthy, ObservedGeneration: pool.Generation, LastTransitionTime: metav1.NewTime(now)}
	switch {
	case registered && next == nodepoolhealth.Healthy:
		cond.Status, cond.Reason = metav1.ConditionTrue, v1.ConditionTypeNodeRegistrationHealthy
	case !registered && next == nodepoolhealth.Unhealthy:
		cond.Status = metav1.ConditionFalse
		cond.Reason, cond.Message = events.RegistrationFailed, "Failed to register node"
		if launched := nodeclaim.Get(claim, v1.ConditionTypeLaunched); launched == nil || launched.Status != metav1.ConditionTrue {
			cond.Reason, cond.Message = "LaunchFailed", "Failed to launch node"
			if launched != nil && launched.Reason != "" {
				cond.Reason, cond.Message = launched.Reason, launched.Message
			}
		}
	default:
		return false
	}
	if current != nil && current.Status == cond.Status {
		return false
	}
	meta.SetStatusCondition(&pool.Status.Conditions, cond)
	return true
}

func ownedByPool(claim *v1.NodeClaim, pool *v1.NodePool) bool {
	for _, o := range claim.OwnerReferences {
		if o.Kind == "NodePool" && o.UID == pool.UID {
			return true
		}
	}
	return false
}
