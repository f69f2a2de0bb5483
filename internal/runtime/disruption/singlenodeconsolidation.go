package disruption

import (
	"context"
	"time"
)

// SingleNodeTimeout limits the single-node consolidation search.
const SingleNodeTimeout = 3 * time.Minute

// SingleNode consolidates the first candidate, in disruption-cost order,
// that can be deleted or replaced by one cheaper node. Candidates of all
// pools are interleaved so one large pool cannot starve the others.
func SingleNode(ctx context.Context, env *Env, candidates []*Candidate, budgets Budgets) Outcome {
	eligible := interleave(underutilized(candidates))
	out := Outcome{Eligible: len(eligible), Rejected: map[*Candidate]string{}}
	totals := poolTotals(env, candidates)
	ctx, cancel := context.WithTimeout(ctx, SingleNodeTimeout)
	defer cancel()
	for _, c := range eligible {
		if ctx.Err() != nil {
			out.TimedOut = true
			break
		}
		if budgets[c.Pool.Name] <= 0 || !canPassBalanced(c, totals) {
			continue
		}
		cmd, err := Consolidate(env, MethodSingleNode, []*Candidate{c})
		if err != nil {
			out.Rejected[c] = err.Error()
			continue
		}
		// Rejections by the Balanced score are not reported on the node:
		// under Balanced they are the common case, as in Karpenter.
		ok, scores := approveBalanced(cmd, totals)
		out.Moves = append(out.Moves, moves(cmd, ok, scores)...)
		if !ok {
			continue
		}
		out.Command = cmd
		return out
	}
	return out
}

// interleave takes candidates round-robin across pools, keeping each
// pool's order.
func interleave(candidates []*Candidate) []*Candidate {
	byPool := map[string][]*Candidate{}
	var pools []string
	for _, c := range candidates {
		if _, ok := byPool[c.Pool.Name]; !ok {
			pools = append(pools, c.Pool.Name)
		}
		byPool[c.Pool.Name] = append(byPool[c.Pool.Name], c)
	}
	out := make([]*Candidate, 0, len(candidates))
	for i := 0; len(out) < len(candidates); i++ {
		for _, p := range pools {
			if i < len(byPool[p]) {
				out = append(out, byPool[p][i])
			}
		}
	}
	return out
}
