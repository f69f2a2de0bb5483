package disruption

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// Limits of the multi-node consolidation search.
const (
	MultiNodeMaxCandidates = 100
	MultiNodeTimeout       = time.Minute
)

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
