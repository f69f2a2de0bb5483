package disruption

import (
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
)

// Drift replaces the first drifted candidate within budget whose pods can
// be rescheduled: empty ones first, then by how long they have drifted.
func Drift(env *Env, candidates []*Candidate, budgets Budgets) Outcome {
	out := Outcome{Rejected: map[*Candidate]string{}}
	var drifted []*Candidate
	for _, c := range candidates {
		if c.Drifted() {
			drifted = append(drifted, c)
		}
	}
	out.Eligible = len(drifted)
	sort.SliceStable(drifted, func(i, j int) bool {
		if drifted[i].Empty() != drifted[j].Empty() {
			return drifted[i].Empty()
		}
		return driftedSince(drifted[i]).Before(driftedSince(drifted[j]))
	})
	for _, c := range drifted {
		if budgets[c.Pool.Name] <= 0 || !env.driftAllowed(c.Pool.Name) {
			continue
		}
		if c.Pool.Spec.Replicas != nil {
			replacement, why := staticReplacement(env, c)
			if why != "" {
				out.Rejected[c] = why
				continue
			}
			budgets.take(c.Pool.Name)
			out.Command = &Command{Method: MethodDrift, Reason: v1.DisruptionReasonDrifted, Candidates: []*Candidate{c}, Replacements: []*scheduling.NewClaim{replacement}}
			return out
		}
		sim, err := SimulateReplacement(env, c)
		if err != nil {
			out.Rejected[c] = err.Error()
			continue
		}
		if len(sim.Unplaced) > 0 {
			out.Rejected[c] = "not all pods would schedule: " + sim.Unplaced[0].Err.Error()
			continue
		}
		budgets.take(c.Pool.Name)
		out.Command = &Command{Method: MethodDrift, Reason: v1.DisruptionReasonDrifted, Candidates: []*Candidate{c}, Replacements: sim.Plan.NewClaims}
		return out
	}
	return out
}

func driftedSince(c *Candidate) time.Time {
	if cond := meta.FindStatusCondition(c.NodeClaim.Status.Conditions, v1.ConditionTypeDrifted); cond != nil {
		return cond.LastTransitionTime.Time
	}
	return time.Time{}
}

// staticReplacement is the claim that replaces a drifted node of a static
// pool: one from the pool's template, whatever its pods need (they may go
// anywhere). None while the pool scales down, or when limits.nodes leaves
// no room to launch it before the node goes.
func staticReplacement(env *Env, c *Candidate) (*scheduling.NewClaim, string) {
	count := simulation.CountStatic(env.Snapshot.Nodes, c.Pool.Name, nil)
	if int64(count.Active+count.PendingDisruption) > *c.Pool.Spec.Replicas {
		return nil, "static NodePool is scaling down to its replicas"
	}
	if room, limited := count.NodeRoom(c.Pool.Spec.Limits); limited && room == 0 {
		return nil, "static NodePool is at its node limit and cannot stage a replacement"
	}
	nc, err := simulation.StaticClaim(env.Snapshot, c.Pool, env.InstanceTypes[c.Pool.Name], env.Options)
	if err != nil {
		return nil, "no replacement for the static NodePool: " + err.Error()
	}
	return nc, ""
}
