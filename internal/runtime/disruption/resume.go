package disruption

import (
	"context"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/repair"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// resumed is a command an earlier leader started, with the replacements
// it created.
type resumed struct {
	cmd          *Command
	replacements []*v1.NodeClaim
}

// resumable finds the commands an earlier leader left under way: live
// NodeClaims it created as replacements (ReplacementForAnnotationKey)
// for nodes that are still tainted and that no command of this process
// holds (stale, by NodeClaim name). A command's candidates whose NodeClaims
// are already being deleted were handed to termination before the leader
// died; the rest are resumed.
func resumable(env *Env, stale map[string]*state.StateNode) []resumed {
	byCandidates := map[string]*resumed{}
	var order []string
	for _, n := range env.Snapshot.Nodes {
		claim := n.NodeClaim
		if claim == nil || claim.DeletionTimestamp != nil || claim.Annotations[v1.ReplacementForAnnotationKey] == "" {
			continue
		}
		key := claim.Annotations[v1.ReplacementForAnnotationKey]
		r := byCandidates[key]
		if r == nil {
			var cands []*Candidate
			for _, name := range strings.Split(key, ",") {
				if c := resumedCandidate(env, stale[name]); c != nil {
					cands = append(cands, c)
				}
			}
			if len(cands) == 0 {
				continue
			}
			r = &resumed{cmd: &Command{Method: MethodResumed, Reason: disruptionReason(cands[0].NodeClaim), Candidates: cands}}
			if r.cmd.Reason == v1.DisruptionReasonUnhealthy {
				boundRepairs(env, cands)
			}
			byCandidates[key] = r
			order = append(order, key)
		}
		r.replacements = append(r.replacements, claim)
	}
	sort.Strings(order)
	out := make([]resumed, 0, len(order))
	for _, key := range order {
		out = append(out, *byCandidates[key])
	}
	return out
}

// resumedCandidate is a stale node as a candidate of a resumed command, or
// nil when it is not stale or its NodePool is gone.
func resumedCandidate(env *Env, n *state.StateNode) *Candidate {
	if n == nil {
		return nil
	}
	pool := env.pool(n.NodePool())
	if pool == nil {
		return nil
	}
	var resched []*corev1.Pod
	for _, pod := range n.Pods {
		if !pods.IsTerminal(pod) && pods.IsReschedulable(pod) {
			resched = append(resched, pod)
		}
	}
	return &Candidate{StateNode: n, Pool: pool, CapacityType: n.Labels()[v1.CapacityTypeLabelKey], Reschedulable: resched}
}

// disruptionReason is the reason the claim's command recorded on it.
func disruptionReason(claim *v1.NodeClaim) v1.DisruptionReason {
	if c := nodeclaim.Get(claim, v1.ConditionTypeDisruptionReason); c != nil {
		return v1.DisruptionReason(c.Reason)
	}
	return ""
}

// boundRepairs gives the candidates of a resumed repair the drain bound
// their policy gives them now, so a change of leader does not leave an
// unhealthy node's drain unbounded. A node that recovered meanwhile keeps
// its NodeClaim's own terminationGracePeriod.
func boundRepairs(env *Env, cands []*Candidate) {
	if env.Repair == nil {
		return
	}
	for _, c := range cands {
		if c.Node == nil {
			continue
		}
		if c.Repair = env.Repair.Resolve(c.Node, env.Now); !c.Repair.Eligible {
			continue
		}
		c.DrainBound = repair.DrainBound(c.Repair, gracePeriod(c.NodeClaim))
	}
}

// removeStaleTaints deals with nodes left tainted by a command this process
// no longer runs (a restart, a lost leader lease). A command whose
// replacements were created is resumed: its nodes wait for them and go, as
// they would have, instead of being untainted, disrupted again and
// replaced a second time. The other nodes are untainted.
func (c *Controller) removeStaleTaints(ctx context.Context, env *Env) {
	stale := map[string]*state.StateNode{}
	for _, n := range env.Snapshot.Nodes {
		if n.Node == nil || n.NodeClaim == nil || env.Queued[n.Node.Name] || !v1.HasDisruptedTaint(n.Node) {
			continue
		}
		if n.Node.DeletionTimestamp != nil || n.NodeClaim.DeletionTimestamp != nil {
			continue
		}
		stale[n.NodeClaim.Name] = n
	}
	for _, r := range resumable(env, stale) {
		for _, cand := range r.cmd.Candidates {
			delete(stale, cand.NodeClaim.Name)
		}
		c.queue.Resume(ctx, r.cmd, r.replacements)
	}
	for _, n := range stale {
		if err := Untaint(ctx, c.kube, n.Node.Name, n.NodeClaim.Name); err != nil {
			log.FromContext(ctx).Error(err, "removing a stale disruption taint", "node", n.Node.Name)
		}
	}
}
