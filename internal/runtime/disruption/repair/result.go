package repair

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Result is the repair decision for one node at one time. Repair applies
// when Eligible: a matched policy's toleration has passed.
type Result struct {
	Eligible bool
	// Condition, Status and Reason are the condition whose policy was
	// selected: the highest priority, then the earliest eligible, then
	// the lowest condition type.
	Condition  corev1.NodeConditionType
	Status     corev1.ConditionStatus
	Reason     string
	EligibleAt time.Time
	// TerminationGracePeriod is the shortest drain bound among the
	// eligible policies; nil when none sets one.
	TerminationGracePeriod *time.Duration

	priority int
	// scoreRank and scoreSince belong to the eligible policy scoring
	// highest; all scores grow at the same rate, so it stays highest.
	scoreRank  int
	scoreSince time.Time
}

// Resolve merges the policies that apply to node at now into a Result.
func (m *Matcher) Resolve(node *corev1.Node, now time.Time) Result {
	var r Result
	for _, mt := range m.matches(node) {
		if mt.eligibleAt.After(now) {
			continue
		}
		first := !r.Eligible
		if first || score(mt.policy.rank, mt.eligibleAt, now) > r.Score(now) {
			r.scoreRank, r.scoreSince = mt.policy.rank, mt.eligibleAt
		}
		if tgp := mt.policy.TerminationGracePeriod; tgp != nil && (r.TerminationGracePeriod == nil || *tgp < *r.TerminationGracePeriod) {
			r.TerminationGracePeriod = tgp
		}
		selected := first
		if !first {
			switch {
			case mt.policy.Priority != r.priority:
				selected = mt.policy.Priority > r.priority
			case !mt.eligibleAt.Equal(r.EligibleAt):
				selected = mt.eligibleAt.Before(r.EligibleAt)
			default:
				selected = mt.condition.Type < r.Condition
			}
		}
		if selected {
			r.Eligible = true
			r.Condition, r.Status, r.Reason = mt.condition.Type, mt.condition.Status, mt.condition.Reason
			r.EligibleAt, r.priority = mt.eligibleAt, mt.policy.Priority
		}
	}
	return r
}

// Score orders repairs (higher first): the policy's priority rank plus the
// time since it became eligible in units of agingConstant. Every node is
// scored at the same now so ties stay ties. 0 when not eligible.
func (r Result) Score(now time.Time) float64 {
	if !r.Eligible {
		return 0
	}
	return score(r.scoreRank, r.scoreSince, now)
}

func score(rank int, since, now time.Time) float64 {
	return float64(rank) + float64(now.Sub(since))/float64(agingConstant)
}

// DrainBound is how long a repaired node may drain: min(the policy's
// bound, the NodeClaim's terminationGracePeriod), or nil (the NodeClaim's
// own, possibly unbounded) when the policies set none.
func DrainBound(r Result, claimTGP *time.Duration) *time.Duration {
	if r.TerminationGracePeriod == nil {
		return nil
	}
	d := *r.TerminationGracePeriod
	if claimTGP != nil && *claimTGP < d {
		d = *claimTGP
	}
	return &d
}
