package disruption

import (
	"errors"
	"math"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
)

// BalancedK is Karpenter's scoring parameter for the Balanced policy: a
// move passes when its score reaches 1/BalancedK.
const BalancedK = 2

// PoolTotals are what a Balanced pool's moves are measured against: the
// hourly price of all its nodes and the summed reschedule cost of all its
// nodes (candidates or not).
type PoolTotals struct {
	Cost       float64
	Disruption float64
}

// Score is a move's share of its pool's cost saved over its share of the
// pool's disruption.
type Score struct {
	SavingsFraction    float64
	DisruptionFraction float64
}

// Value is savings fraction over disruption fraction: 0 when nothing is
// saved, +Inf when nothing is disrupted.
func (s Score) Value() float64 {
	if s.SavingsFraction <= 0 {
		return 0
	}
	if s.DisruptionFraction == 0 {
		return math.Inf(1)
	}
	return s.SavingsFraction / s.DisruptionFraction
}

// Approved is true when the score reaches 1/BalancedK.
func (s Score) Approved() bool { return s.Value() >= 1.0/BalancedK }

// ScoreMove scores saving savings $/h at disruption cost disruption in a
// pool with totals t. Empty totals give a zero score.
func ScoreMove(savings, disruption float64, t PoolTotals) Score {
	if t.Cost <= 0 || t.Disruption <= 0 {
		return Score{}
	}
	return Score{SavingsFraction: savings / t.Cost, DisruptionFraction: disruption / t.Disruption}
}

// SavingsRatio orders consolidation candidates: price per unit of
// reschedule cost, highest first (the most worth moving).
func (c *Candidate) SavingsRatio() float64 {
	return c.Price / simulation.RescheduleCost(c.Reschedulable)
}

// poolTotals sums, per pool of the candidates, the price of every node of
// the pool that has a priced offering (the candidates' prices when none
// has) and the reschedule cost of every node of the pool: nodes that are
// not candidates still count in the denominators.
func poolTotals(env *Env, candidates []*Candidate) map[string]PoolTotals {
	byName := map[string]*Candidate{}
	fallback := map[string]float64{}
	for _, c := range candidates {
		byName[c.Name()] = c
		fallback[c.Pool.Name] += c.Price
	}
	out := map[string]PoolTotals{}
	for _, n := range env.Snapshot.Nodes {
		pool := n.NodePool()
		if _, ok := fallback[pool]; !ok {
			continue
		}
		t := out[pool]
		if c, ok := byName[n.Name()]; ok {
			t.Disruption += simulation.RescheduleCost(c.Reschedulable)
		} else {
			t.Disruption += simulation.RescheduleCost(reschedulable(n.Pods))
		}
		if n.NodeClaim != nil {
			if p, ok := simulation.NodePrice(n.Labels(), env.InstanceTypes[pool]); ok {
				t.Cost += p
			}
		}
		out[pool] = t
	}
	for pool, cost := range fallback {
		if t := out[pool]; t.Cost <= 0 {
			t.Cost = cost
			out[pool] = t
		}
	}
	return out
}

// canPassBalanced is false for a candidate of a Balanced pool whose best
// move, deleting it outright, would not pass; no replacement would either.
func canPassBalanced(c *Candidate, totals map[string]PoolTotals) bool {
	if c.Pool.Spec.Disruption.ConsolidationPolicy != v1.ConsolidationPolicyBalanced {
		return true
	}
	t, ok := totals[c.Pool.Name]
	if !ok || t.Cost <= 0 {
		return true
	}
	return ScoreMove(c.Price, simulation.RescheduleCost(c.Reschedulable), t).Approved()
}

// approveBalanced scores cmd in each Balanced pool it disrupts; it passes
// when every one of them approves. A move across pools credits each pool
// with the net savings in proportion to its share of the candidates' price.
// Pools of other policies are not scored.
func approveBalanced(cmd *Command, totals map[string]PoolTotals) (bool, map[string]Score) {
	savings := cmd.Price() - cmd.ReplacementPrice()
	price := map[string]float64{}
	disruption := map[string]float64{}
	balanced := map[string]bool{}
	for _, c := range cmd.Candidates {
		price[c.Pool.Name] += c.Price
		disruption[c.Pool.Name] += simulation.RescheduleCost(c.Reschedulable)
		balanced[c.Pool.Name] = c.Pool.Spec.Disruption.ConsolidationPolicy == v1.ConsolidationPolicyBalanced
	}
	ok := true
	scores := map[string]Score{}
	for pool, isBalanced := range balanced {
		if !isBalanced {
			continue
		}
		poolSavings := savings
		if len(price) > 1 && cmd.Price() > 0 {
			poolSavings = savings * price[pool] / cmd.Price()
		}
		s := ScoreMove(poolSavings, disruption[pool], totals[pool])
		scores[pool] = s
		ok = ok && s.Approved()
	}
	return ok, scores
}

// reschedulable are the pods that would need a new home if their node went.
func reschedulable(all []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range all {
		if !pods.IsTerminal(p) && pods.IsReschedulable(p) {
			out = append(out, p)
		}
	}
	return out
}

// errBalancedRejected marks a move whose Balanced score is too low.
var errBalancedRejected = errors.New("the Balanced score is below 1/k")

// Move is a consolidation move's verdict, for Karpenter's consolidation
// move metrics and events: every single-node move is counted, a multi-node
// move per pool it disrupts; Scored moves (Balanced pools) carry their
// score.
type Move struct {
	// Candidates of the pool in the move.
	Candidates []*Candidate
	Pool       *v1.NodePool
	Approved   bool
	Scored     bool
	Score      Score
}

// moves are cmd's verdicts per pool, given approveBalanced's result.
func moves(cmd *Command, approved bool, scores map[string]Score) []Move {
	var out []Move
	byPool := map[string]int{}
	for _, c := range cmd.Candidates {
		i, ok := byPool[c.Pool.Name]
		if !ok {
			s, scored := scores[c.Pool.Name]
			i = len(out)
			byPool[c.Pool.Name] = i
			out = append(out, Move{Pool: c.Pool, Approved: approved, Scored: scored, Score: s})
		}
		out[i].Candidates = append(out[i].Candidates, c)
	}
	return out
}
