package disruption

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
)

// Limits of the consolidation searches.
const (
	MultiNodeMaxCandidates = 100
	MultiNodeTimeout       = time.Minute
	SingleNodeTimeout      = 3 * time.Minute
)

// Outcome of one method: a command, or nothing with the reasons candidates
// were passed over (for Unconsolidatable events).
type Outcome struct {
	Command *Command
	// Rejected maps candidates to why they could not be consolidated.
	Rejected map[*Candidate]string
	// Eligible is how many candidates the method considered.
	Eligible int
	// TimedOut is set when the method's time limit cut it short.
	TimedOut bool
	// Moves are the consolidation moves scored (see Move).
	Moves []Move
	// Blocked (DisruptionBlocked events) and RepairBlocked
	// (NodeRepairBlocked events) say why repair passed candidates over.
	Blocked       map[*Candidate]string
	RepairBlocked map[*Candidate]string
}

// Emptiness deletes every empty, consolidatable candidate of a dynamic
// pool within budget, in one command.
func Emptiness(env *Env, candidates []*Candidate, budgets Budgets) Outcome {
	var out Outcome
	cmd := &Command{Method: MethodEmptiness, Reason: v1.DisruptionReasonEmpty}
	for _, c := range candidates {
		if c.Pool.Spec.Replicas != nil || !c.Empty() || !c.Consolidatable() || c.Pool.Spec.Disruption.ConsolidateAfter.Duration == nil {
			continue
		}
		out.Eligible++
		if budgets.take(c.Pool.Name) {
			cmd.Candidates = append(cmd.Candidates, c)
		}
	}
	if len(cmd.Candidates) > 0 {
		out.Command = cmd
	}
	return out
}

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
		if budgets[c.Pool.Name] <= 0 {
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
		sim, err := Simulate(env, []*Candidate{c})
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

// underutilized are the consolidatable candidates of dynamic pools that
// consolidate underutilized nodes, the most worth moving (SavingsRatio)
// first. Static pools keep their nodes: only drift and expiry replace them.
func underutilized(candidates []*Candidate) []*Candidate {
	var out []*Candidate
	for _, c := range candidates {
		d := c.Pool.Spec.Disruption
		if c.Pool.Spec.Replicas == nil && c.Consolidatable() && d.ConsolidateAfter.Duration != nil && d.ConsolidationPolicy != v1.ConsolidationPolicyWhenEmpty {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].SavingsRatio() > out[j].SavingsRatio() })
	return out
}

// MultiNode finds the longest prefix (at least two) of the most-worth-
// moving candidates that can go with at most one cheaper replacement, by
// binary search over the prefix length, as Karpenter does; then every later
// candidate that can join that set does (extend). On timeout it keeps the
// best so far.
func MultiNode(ctx context.Context, env *Env, candidates []*Candidate, budgets Budgets) Outcome {
	eligible := underutilized(candidates)
	out := Outcome{Eligible: len(eligible)}
	var within []*Candidate
	b := budgets.clone()
	for _, c := range eligible {
		if len(within) == MultiNodeMaxCandidates {
			break
		}
		if b.take(c.Pool.Name) {
			within = append(within, c)
		}
	}
	if len(within) < 2 {
		return out
	}
	totals := poolTotals(env, candidates)
	ctx, cancel := context.WithTimeout(ctx, MultiNodeTimeout)
	defer cancel()
	lo, hi := 1, len(within)-1
	var kept, rejected []Move
	// try records multi-node moves only (extend's probes of one candidate
	// are not moves), and a rejection only while none is recorded or the
	// prefix search is under way: the move reported is Karpenter's.
	searching := true
	try := func(set []*Candidate) *Command {
		cmd, err := Consolidate(env, MethodMultiNode, set)
		if err != nil {
			return nil
		}
		ok, scores := approveBalanced(cmd, totals)
		switch {
		case len(set) < 2:
		case !ok:
			if searching || rejected == nil {
				rejected = moves(cmd, false, scores)
			}
		default:
			kept = moves(cmd, true, scores)
		}
		if !ok {
			return nil
		}
		return cmd
	}
	prefix := 0
	for lo <= hi && ctx.Err() == nil {
		mid := (lo + hi) / 2
		if cmd := try(within[:mid+1]); cmd != nil {
			out.Command, prefix = cmd, mid+1
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	out.TimedOut = lo <= hi
	searching = false
	if !out.TimedOut {
		left := budgets.clone()
		for _, c := range within[:prefix] {
			left.take(c.Pool.Name)
		}
		out.Command, out.TimedOut = extend(ctx, out.Command, within[:prefix], smallestFirst(eligible), left, try)
	}
	// As Karpenter: the move taken, or else the last one the score
	// rejected, is reported once rather than at every step of the search.
	if out.Command != nil {
		out.Moves = kept
	} else {
		out.Moves = rejected
	}
	return out
}

// extend adds to the set every other eligible candidate, smallest pods
// first, with which the set can still go, within the budgets left. The
// prefix search stops at the first candidate that cannot go, and looks no
// further than the budget's worth of candidates: after a scale-in, the
// nodes most worth moving are often those left with one large pod that
// fits nowhere else, while nodes of small pods, last in that order, could
// go at once. Without this, each of those went in a single-node command of
// its own, one validation delay apiece. It tries at most
// MultiNodeMaxCandidates candidates (a simulation each), within the
// method's time limit; a command needs two.
func extend(ctx context.Context, cmd *Command, set, eligible []*Candidate, left Budgets, try func([]*Candidate) *Command) (*Command, bool) {
	in := map[*Candidate]bool{}
	for _, c := range set {
		in[c] = true
	}
	tried := 0
	for _, c := range eligible {
		if tried == MultiNodeMaxCandidates || len(set) == MultiNodeMaxCandidates {
			break
		}
		if in[c] || left[c.Pool.Name] <= 0 {
			continue
		}
		if ctx.Err() != nil {
			return cmd, true
		}
		tried++
		next := slices.Concat(set, []*Candidate{c})
		got := try(next)
		if got == nil {
			continue
		}
		set = next
		left.take(c.Pool.Name)
		if len(set) >= 2 {
			cmd = got
		}
	}
	return cmd, false
}

// smallestFirst orders candidates by their reschedulable pods' CPU
// requests, then memory, keeping the given order among equals: the pods
// most likely to fit in the room other nodes have left.
func smallestFirst(candidates []*Candidate) []*Candidate {
	type size struct{ cpu, mem int64 }
	sizes := make(map[*Candidate]size, len(candidates))
	for _, c := range candidates {
		var s size
		for _, p := range c.Reschedulable {
			r := scheduling.PodRequests(p)
			s.cpu += r.Cpu().MilliValue()
			s.mem += r.Memory().Value()
		}
		sizes[c] = s
	}
	out := slices.Clone(candidates)
	slices.SortStableFunc(out, func(a, b *Candidate) int {
		if d := cmp.Compare(sizes[a].cpu, sizes[b].cpu); d != 0 {
			return d
		}
		return cmp.Compare(sizes[a].mem, sizes[b].mem)
	})
	return out
}

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
