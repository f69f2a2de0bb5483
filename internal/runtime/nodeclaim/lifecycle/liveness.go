package lifecycle

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
)

// Timeouts after which a claim is given up on and deleted.
const (
	LaunchTimeout       = 5 * time.Minute
	RegistrationTimeout = 15 * time.Minute
)

// liveness deletes claims that did not launch within LaunchTimeout of
// creation, or whose Node did not register within RegistrationTimeout of
// launch; the next scheduling pass provisions again if pods still wait.
func (c *Controller) liveness(ctx context.Context, claim *v1.NodeClaim) (result, error) {
	if nodeclaim.IsTrue(claim, v1.ConditionTypeRegistered) {
		return result{}, nil
	}
	now := c.clock.Now()
	if !nodeclaim.IsTrue(claim, v1.ConditionTypeLaunched) {
		left := claim.CreationTimestamp.Add(LaunchTimeout).Sub(now)
		if left <= 0 {
			if err := c.registrationHealth(ctx, claim, false); err != nil {
				return result{}, fmt.Errorf("recording the launch timeout for the nodepool's NodeRegistrationHealthy: %w", err)
			}
			announceLaunchTimedOut(c.recorder, claim, c.poolOf(ctx, claim))
			return c.deleteClaim(ctx, claim, "launch_timeout", fmt.Errorf("not launched within %s", LaunchTimeout))
		}
		return result{requeue: reconcile.Result{RequeueAfter: left}}, nil
	}
	launched := nodeclaim.Get(claim, v1.ConditionTypeLaunched).LastTransitionTime.Time
	left := launched.Add(RegistrationTimeout).Sub(now)
	if left <= 0 {
		if err := c.registrationHealth(ctx, claim, false); err != nil {
			return result{}, fmt.Errorf("recording the registration timeout for the nodepool's NodeRegistrationHealthy: %w", err)
		}
		announceRegistrationFailed(c.recorder, claim, c.poolOf(ctx, claim))
		return c.deleteClaim(ctx, claim, "registration_timeout", fmt.Errorf("node not registered within %s of launch", RegistrationTimeout))
	}
	return result{requeue: reconcile.Result{RequeueAfter: left}}, nil
}

// poolOf reads the claim's NodePool for an event, nil if it cannot: the
// NodePool is where a failure that hits every node (a broken AMI or user
// data, a launch that never succeeds) shows.
func (c *Controller) poolOf(ctx context.Context, claim *v1.NodeClaim) *v1.NodePool {
	pool := &v1.NodePool{}
	if err := c.kube.Get(ctx, client.ObjectKey{Name: claim.Labels[v1.NodePoolLabelKey]}, pool); err != nil {
		log.FromContext(ctx).Error(err, "reading the nodepool to report a timeout")
		return nil
	}
	return pool
}

// announceLaunchTimedOut emits FailedLaunch warnings for a claim given up
// at the launch timeout, with the last launch error its Launched condition
// holds, on the NodePool too unless it is nil.
func announceLaunchTimedOut(rec *events.Recorder, claim *v1.NodeClaim, pool *v1.NodePool) {
	what := fmt.Sprintf("not launched within %s", LaunchTimeout)
	if c := nodeclaim.Get(claim, v1.ConditionTypeLaunched); c != nil && c.Message != "" {
		what += ": " + c.Reason + ": " + c.Message
	}
	rec.Warning(claim, events.FailedLaunch, events.ActionLaunching, "Failed to launch node: %s; deleting the NodeClaim", what)
	if pool != nil {
		rec.Warning(pool, events.FailedLaunch, events.ActionLaunching, "Failed to launch node: NodeClaim %s %s; the NodeClaim is deleted", claim.Name, what)
	}
}

// announceRegistrationFailed emits the RegistrationFailed events, on the
// NodePool too unless it is nil.
func announceRegistrationFailed(rec *events.Recorder, claim *v1.NodeClaim, pool *v1.NodePool) {
	what := fmt.Sprintf("the node of instance %s did not register within %s of its launch", claim.Status.ProviderID, RegistrationTimeout)
	rec.Warning(claim, events.RegistrationFailed, events.ActionRegister, "Failed to register node: %s; deleting the NodeClaim", what)
	if pool != nil {
		rec.Warning(pool, events.RegistrationFailed, events.ActionRegister, "Failed to register node: NodeClaim %s: %s; the NodeClaim is deleted", claim.Name, what)
	}
}
