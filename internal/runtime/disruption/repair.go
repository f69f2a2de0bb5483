package disruption

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/repair"
)

// MethodRepair is node repair (Karpenter v1.14+ runs it as a disruption
// method, first in every pass).
const MethodRepair = "repair"

// Repair replaces the highest-scoring unhealthy candidate: one whose Node
// condition matched a repair policy for longer than the policy's
// toleration, whose NodePool is not over the safety limit and has
// Unhealthy budget left (a node that never initialized needs none), and
// whose pods can be rescheduled, with replacements launched first. Its
// drain is bounded by the policy (see repair.DrainBound). One command per
// pass, like drift. Nodes annotated karpenter.sh/do-not-repair=true are
// left alone.
func Repair(env *Env, candidates []*Candidate, budgets Budgets) Outcome {
	out := Outcome{Blocked: map[*Candidate]string{}, RepairBlocked: map[*Candidate]string{}}
	if env.Repair == nil {
		return out
	}
	var eligible []*Candidate
	for _, c := range candidates {
		c.Repair = env.Repair.Resolve(c.Node, env.Now)
		if !c.Repair.Eligible {
			continue
		}
		if c.Node.Annotations[v1.DoNotRepairAnnotationKey] == "true" {
			out.Blocked[c] = fmt.Sprintf("repair is blocked through the %q annotation", v1.DoNotRepairAnnotationKey)
			continue
		}
		if c.podBlockers && c.Repair.TerminationGracePeriod == nil && c.NodeClaim.Spec.TerminationGracePeriod == nil {
			out.Blocked[c] = "repair requires a termination grace period to bypass blocking pods"
			continue
		}
		eligible = append(eligible, c)
	}
	out.Eligible = len(eligible)
	sort.SliceStable(eligible, func(i, j int) bool {
		si, sj := eligible[i].Repair.Score(env.Now), eligible[j].Repair.Score(env.Now)
		if si != sj {
			return si > sj
		}
		if eligible[i].DisruptionCost != eligible[j].DisruptionCost {
			return eligible[i].DisruptionCost < eligible[j].DisruptionCost
		}
		return eligible[i].Name() < eligible[j].Name()
	})
	if len(eligible) == 0 {
		return out
	}
	counts := env.Repair.CountPools(nodesOf(env), v1.NodePoolLabelKey)
	for _, c := range eligible {
		pool := c.Pool.Name
		if counts[pool].Tripped() {
			out.RepairBlocked[c] = fmt.Sprintf("more than %d%% of nodes in nodepool %q are unhealthy", repair.UnhealthyThresholdPercent, pool)
			continue
		}
		if c.Initialized() && budgets[pool] <= 0 {
			continue
		}
		sim, err := SimulateReplacement(env, c)
		if err != nil {
			out.Blocked[c] = err.Error()
			continue
		}
		if len(sim.Unplaced) > 0 {
			out.Blocked[c] = "not all pods would schedule: " + sim.Unplaced[0].Err.Error()
			continue
		}
		c.DrainBound = repair.DrainBound(c.Repair, gracePeriod(c.NodeClaim))
		if c.Initialized() {
			budgets.take(pool)
		}
		out.Command = &Command{Method: MethodRepair, Reason: v1.DisruptionReasonUnhealthy, Candidates: []*Candidate{c}, Replacements: sim.Plan.NewClaims}
		return out
	}
	return out
}

// nodesOf are the Nodes in the snapshot.
func nodesOf(env *Env) []*corev1.Node {
	var out []*corev1.Node
	for _, n := range env.Snapshot.Nodes {
		if n.Node != nil {
			out = append(out, n.Node)
		}
	}
	return out
}

// gracePeriod is the claim's terminationGracePeriod, nil when unset.
func gracePeriod(claim *v1.NodeClaim) *time.Duration {
	if tgp := claim.Spec.TerminationGracePeriod; tgp != nil {
		return &tgp.Duration
	}
	return nil
}
