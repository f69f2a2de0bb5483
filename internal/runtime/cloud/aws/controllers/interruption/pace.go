package interruption

import (
	"fmt"
	"time"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/repair"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
)

// pace decides, for one instance-status pass, which NodeClaims the pass
// may start deleting, so that a fleet-wide report (an AWS-side event, a
// bad AMI failing its checks everywhere) never takes a NodePool down at
// once:
//   - failed status checks are node repair by another road: they ride the
//     pool's Unhealthy disruption budget and stop at repair's safety limit
//     (more than 20% of the pool failing points at a cause replacing nodes
//     will not fix);
//   - a scheduled event has a deadline AWS enforces, so it is never
//     blocked, only paced: the same budget, but always one at a time.
//
// As in the budgets of the disruption loop, only initialized claims count;
// one that never initialized needs no budget. The claims already deleting,
// for any reason, use up the budget.
type pace struct {
	now   time.Time
	pools map[string]*poolPace
}

type poolPace struct {
	pool *v1.NodePool // nil when the NodePool is gone
	// all and failing are the pool's claims and those with a failed status
	// check: the safety limit's counts.
	all, failing int
	// total and deleting are the initialized claims whose instance is not
	// terminating yet, and those among them being deleted: the budget's.
	total, deleting int
}

func newPace(claims []*v1.NodeClaim, pools []*v1.NodePool, failing map[string]bool, now time.Time) *pace {
	p := &pace{now: now, pools: map[string]*poolPace{}}
	for _, np := range pools {
		p.of(np.Name).pool = np
	}
	for _, nc := range claims {
		pp := p.of(nc.Labels[v1.NodePoolLabelKey])
		pp.all++
		if failing[nc.Name] {
			pp.failing++
		}
		if counted(nc) {
			pp.total++
			if !nc.DeletionTimestamp.IsZero() {
				pp.deleting++
			}
		}
	}
	return p
}

func (p *pace) of(pool string) *poolPace {
	pp, ok := p.pools[pool]
	if !ok {
		pp = &poolPace{}
		p.pools[pool] = pp
	}
	return pp
}

// counted says whether a claim counts against its pool's budget.
func counted(nc *v1.NodeClaim) bool {
	return nodeclaim.IsTrue(nc, v1.ConditionTypeInitialized) && !nodeclaim.IsTrue(nc, v1.ConditionTypeInstanceTerminating)
}

// admit reports whether nc may be deleted now, forceful for a failed
// status check, and takes its place in the budget; otherwise why not.
func (p *pace) admit(nc *v1.NodeClaim, forceful bool) (bool, string) {
	if !nc.DeletionTimestamp.IsZero() {
		return true, ""
	}
	name := nc.Labels[v1.NodePoolLabelKey]
	pp := p.of(name)
	if forceful && (repair.PoolCount{Total: pp.all, Unhealthy: pp.failing}).Tripped() {
		return false, fmt.Sprintf("more than %d%% of nodes in nodepool %q fail EC2 status checks", repair.UnhealthyThresholdPercent, name)
	}
	if !counted(nc) {
		return true, ""
	}
	allowed := v1.Unlimited
	if pp.pool != nil {
		// A budget that cannot be evaluated counts as 0 (fail closed).
		allowed, _ = pp.pool.AllowedDisruptionsByReason(p.now, pp.total, v1.DisruptionReasonUnhealthy)
	}
	if !forceful {
		allowed = max(allowed, 1)
	}
	if pp.deleting >= allowed {
		return false, fmt.Sprintf("nodepool %q's budget for reason %s allows %d at a time and %d are being deleted", name, v1.DisruptionReasonUnhealthy, allowed, pp.deleting)
	}
	pp.deleting++
	return true, ""
}
