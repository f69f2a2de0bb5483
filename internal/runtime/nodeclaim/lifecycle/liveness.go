package lifecycle

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
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
			return c.deleteClaim(ctx, claim, "launch_timeout", fmt.Errorf("not launched within %s", LaunchTimeout))
		}
		return result{requeue: reconcile.Result{RequeueAfter: left}}, nil
	}
	launched := nodeclaim.Get(claim, v1.ConditionTypeLaunched).LastTransitionTime.Time
	left := launched.Add(RegistrationTimeout).Sub(now)
	if left <= 0 {
		return c.deleteClaim(ctx, claim, "registration_timeout", fmt.Errorf("node not registered within %s of launch", RegistrationTimeout))
	}
	return result{requeue: reconcile.Result{RequeueAfter: left}}, nil
}
