package repair

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
)

// agingConstant is how long past its toleration a node waits to gain one
// priority rank, so a low-priority fault is not starved forever.
const agingConstant = 30 * time.Minute

type key struct {
	conditionType corev1.NodeConditionType
	status        corev1.ConditionStatus
}

type compiled struct {
	cloud.RepairPolicy
	reason *regexp.Regexp // nil for the fallback
	rank   int
}

// Matcher evaluates Nodes against a validated policy set.
type Matcher struct {
	specific map[key][]compiled
	fallback compiled
}

// NewMatcher validates and compiles the policies: every policy needs a
// condition type, a valid status, non-negative durations, a priority in
// 0..100, the Replace action and a compiling reason pattern, and exactly
// one policy (the fallback) has no reason pattern.
func NewMatcher(policies []cloud.RepairPolicy) (*Matcher, error) {
	m := &Matcher{specific: map[key][]compiled{}}
	ranks := denseRanks(policies)
	var errs []error
	fallbacks := 0
	for i, p := range policies {
		c := compiled{RepairPolicy: p, rank: ranks[p.Priority]}
		if err := validate(p); err != nil {
			errs = append(errs, fmt.Errorf("repair policy %d (%s=%s): %w", i, p.ConditionType, p.ConditionStatus, err))
		}
		k := key{p.ConditionType, p.ConditionStatus}
		if p.ReasonRegex == "" {
			fallbacks++
			m.fallback = c
			if _, ok := m.specific[k]; !ok {
				m.specific[k] = nil
			}
			continue
		}
		re, err := regexp.Compile(p.ReasonRegex)
		if err != nil {
			errs = append(errs, fmt.Errorf("repair policy %d (%s=%s): reason pattern: %w", i, p.ConditionType, p.ConditionStatus, err))
			continue
		}
		c.reason = re
		m.specific[k] = append(m.specific[k], c)
	}
	if fallbacks != 1 {
		errs = append(errs, fmt.Errorf("repair policies need exactly one fallback (a policy without a reason pattern), found %d", fallbacks))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}

func validate(p cloud.RepairPolicy) error {
	var errs []error
	if p.ConditionType == "" {
		errs = append(errs, errors.New("empty condition type"))
	}
	switch p.ConditionStatus {
	case corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown:
	default:
		errs = append(errs, fmt.Errorf("condition status %q is not True, False or Unknown", p.ConditionStatus))
	}
	if p.TolerationDuration < 0 {
		errs = append(errs, fmt.Errorf("negative toleration %s", p.TolerationDuration))
	}
	if p.TerminationGracePeriod != nil && *p.TerminationGracePeriod < 0 {
		errs = append(errs, fmt.Errorf("negative termination grace period %s", *p.TerminationGracePeriod))
	}
	if p.Priority < 0 || p.Priority > 100 {
		errs = append(errs, fmt.Errorf("priority %d is outside 0..100", p.Priority))
	}
	if p.Action != cloud.ReplaceNode {
		errs = append(errs, fmt.Errorf("action %q is not supported; use %q", p.Action, cloud.ReplaceNode))
	}
	return errors.Join(errs...)
}

// denseRanks maps each distinct priority to its rank among them (0 for the
// lowest), so only the order of priorities matters to scores.
func denseRanks(policies []cloud.RepairPolicy) map[int]int {
	var ps []int
	for _, p := range policies {
		if !slices.Contains(ps, p.Priority) {
			ps = append(ps, p.Priority)
		}
	}
	slices.Sort(ps)
	out := map[int]int{}
	for i, p := range ps {
		out[p] = i
	}
	return out
}

// Covers says whether some policy watches the condition's type and status,
// whatever its reason and however long it has held: the safety limit
// counts such nodes as unhealthy.
func (m *Matcher) Covers(c corev1.NodeCondition) bool {
	_, ok := m.specific[key{c.Type, c.Status}]
	return ok
}

// Unhealthy says whether any of the node's conditions is covered.
func (m *Matcher) Unhealthy(node *corev1.Node) bool {
	return slices.ContainsFunc(node.Status.Conditions, m.Covers)
}

// match is one policy applying to one of a node's conditions, from
// eligibleAt on.
type match struct {
	policy     compiled
	condition  corev1.NodeCondition
	eligibleAt time.Time
}

// matches are the policies the node's conditions match, toleration aside.
// A condition's clock starts at its last transition, never before the
// Node existed (a condition without a transition time, or one copied from
// elsewhere, cannot make a new node repairable at once).
func (m *Matcher) matches(node *corev1.Node) []match {
	var out []match
	for _, c := range node.Status.Conditions {
		policies, ok := m.specific[key{c.Type, c.Status}]
		if !ok {
			continue
		}
		since := c.LastTransitionTime.Time
		if since.Before(node.CreationTimestamp.Time) {
			since = node.CreationTimestamp.Time
		}
		found := false
		for _, p := range policies {
			if p.reason.MatchString(c.Reason) {
				found = true
				out = append(out, match{policy: p, condition: c, eligibleAt: since.Add(p.TolerationDuration)})
			}
		}
		if !found {
			out = append(out, match{policy: m.fallback, condition: c, eligibleAt: since.Add(m.fallback.TolerationDuration)})
		}
	}
	return out
}
