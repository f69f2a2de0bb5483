package disruption

import (
	"fmt"
	"strings"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
)

// Event reasons (Karpenter's names).
const (
	reasonDisruptionBlocked          = "DisruptionBlocked"
	reasonUnconsolidatable           = "Unconsolidatable"
	reasonConsolidationApproved      = "ConsolidationApproved"
	reasonDisruptionLaunching        = "DisruptionLaunching"
	reasonDisruptionWaitingReadiness = "DisruptionWaitingReadiness"
	reasonDisruptionTerminating      = events.DisruptionTerminating
	reasonNodeRepairBlocked          = "NodeRepairBlocked"
	actionDisrupt                    = events.ActionDisrupt
	actionRepair                     = "Repairing"
)

// reportBlocked tells users why consolidatable or drifted nodes are not
// disrupted.
func (c *Controller) reportBlocked(blocked []Blocked) {
	for _, b := range blocked {
		cand := &Candidate{StateNode: b.StateNode}
		if !cand.Consolidatable() && !cand.Drifted() {
			continue
		}
		c.emitOnce(b.Node.Name+"/blocked", b.Reason, func() {
			c.recorder.Normal(b.Node, reasonDisruptionBlocked, actionDisrupt, "Cannot disrupt Node: %s", b.Reason)
			c.recorder.Normal(b.NodeClaim, reasonDisruptionBlocked, actionDisrupt, "Cannot disrupt NodeClaim: %s", b.Reason)
		})
	}
}

func (c *Controller) reportRejected(rejected map[*Candidate]string) {
	for cand, why := range rejected {
		c.emitOnce(cand.Node.Name+"/unconsolidatable", why, func() {
			c.recorder.Normal(cand.Node, reasonUnconsolidatable, actionDisrupt, "%s", why)
			c.recorder.Normal(cand.NodeClaim, reasonUnconsolidatable, actionDisrupt, "%s", why)
		})
	}
}

// reportRepairBlocked tells users why unhealthy nodes are not repaired:
// DisruptionBlocked on the Node and NodeClaim, and NodeRepairBlocked
// (warnings, also on the NodePool) when the pool is over the safety limit.
func (c *Controller) reportRepairBlocked(out Outcome) {
	for cand, why := range out.Blocked {
		c.emitOnce(cand.Node.Name+"/blocked", why, func() {
			c.recorder.Normal(cand.Node, reasonDisruptionBlocked, actionDisrupt, "Cannot disrupt Node: %s", why)
			c.recorder.Normal(cand.NodeClaim, reasonDisruptionBlocked, actionDisrupt, "Cannot disrupt NodeClaim: %s", why)
		})
	}
	for cand, why := range out.RepairBlocked {
		c.emitOnce(cand.Node.Name+"/repairblocked", why, func() {
			c.recorder.Warning(cand.Node, reasonNodeRepairBlocked, actionRepair, "%s", why)
			c.recorder.Warning(cand.NodeClaim, reasonNodeRepairBlocked, actionRepair, "%s", why)
		})
		c.emitOnce(cand.Pool.Name+"/repairblocked", why, func() {
			c.recorder.Warning(cand.Pool, reasonNodeRepairBlocked, actionRepair, "%s", why)
		})
	}
}

// reportBudgetBlocked tells a NodePool when its budget for the method's
// reason is what holds eligible nodes back.
func (c *Controller) reportBudgetBlocked(env *Env, candidates []*Candidate, budgets Budgets, m method) {
	seen := map[string]bool{}
	for _, cand := range candidates {
		pool := cand.Pool.Name
		if seen[pool] || budgets[pool] > 0 {
			continue
		}
		var waiting bool
		switch m.reason {
		case v1.DisruptionReasonDrifted:
			waiting = cand.Drifted()
		case v1.DisruptionReasonUnhealthy:
			waiting = cand.Repair.Eligible && cand.Initialized()
		default:
			waiting = cand.Consolidatable()
		}
		if waiting {
			seen[pool] = true
			msg := fmt.Sprintf("No allowed disruptions for disruption reason %s due to blocking budget", m.reason)
			c.emitOnce(pool+"/budget/"+string(m.reason), msg, func() {
				c.recorder.Normal(cand.Pool, reasonDisruptionBlocked, actionDisrupt, "%s", msg)
			})
		}
	}
}

// forgetEvents drops the memos that can no longer hold an event back:
// those whose node or pool (the key's first part) is not in the snapshot,
// and those older than eventRepeat. Without it every node that ever had an
// event would stay in the map for the life of the process.
func (c *Controller) forgetEvents(env *Env) {
	live := map[string]bool{}
	for _, n := range env.Snapshot.Nodes {
		live[n.Name()] = true
	}
	for _, p := range env.Snapshot.NodePools {
		live[p.Name] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, memo := range c.lastEvents {
		subject, _, _ := strings.Cut(key, "/")
		if !live[subject] || env.Now.Sub(memo.at) >= eventRepeat {
			delete(c.lastEvents, key)
		}
	}
}

// emitOnce calls emit unless the same message was emitted for key recently.
func (c *Controller) emitOnce(key, message string, emit func()) {
	c.mu.Lock()
	last, ok := c.lastEvents[key]
	now := c.clock.Now()
	if ok && last.message == message && now.Sub(last.at) < eventRepeat {
		c.mu.Unlock()
		return
	}
	c.lastEvents[key] = eventMemo{message: message, at: now}
	c.mu.Unlock()
	emit()
}
