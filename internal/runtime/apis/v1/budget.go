package v1

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Unlimited is the number of allowed disruptions when no budget applies.
const Unlimited = math.MaxInt32

// IsActive reports whether the budget applies at now. A budget without a
// schedule always applies; one with a schedule applies for Duration after
// each time the schedule fires (cron in UTC). An error means the schedule
// cannot be parsed.
func (b *Budget) IsActive(now time.Time) (bool, error) {
	if b.Schedule == nil && b.Duration == nil {
		return true, nil
	}
	if b.Schedule == nil || b.Duration == nil {
		return false, fmt.Errorf("budget needs both schedule and duration, or neither")
	}
	schedule, err := cron.ParseStandard("TZ=UTC " + *b.Schedule)
	if err != nil {
		return false, fmt.Errorf("budget schedule %q is not a cron expression: %w", *b.Schedule, err)
	}
	// The window is open iff the schedule fired within the last Duration:
	// its first firing after (now - Duration) is not after now.
	now = now.UTC()
	return !schedule.Next(now.Add(-b.Duration.Duration)).After(now), nil
}

// AllowedDisruptions is how many of numNodes nodes the budget lets be
// disrupting at now: Unlimited if the budget is inactive, a percentage of
// numNodes rounded up, or the count. It fails closed (0) on a bad budget.
func (b *Budget) AllowedDisruptions(now time.Time, numNodes int) (int, error) {
	active, err := b.IsActive(now)
	if err != nil {
		return 0, err
	}
	if !active {
		return Unlimited, nil
	}
	return budgetNodes(b.Nodes, numNodes)
}

// budgetNodes resolves "N" or "P%" against numNodes; percentages round up,
// as a PDB's maxUnavailable does, so a small pool can still make progress.
func budgetNodes(nodes string, numNodes int) (int, error) {
	if pct, ok := strings.CutSuffix(nodes, "%"); ok {
		p, err := strconv.Atoi(pct)
		if err != nil || p < 0 || p > 100 {
			return 0, fmt.Errorf("budget nodes %q is not a percentage from 0%% to 100%%", nodes)
		}
		return (numNodes*p + 99) / 100, nil
	}
	n, err := strconv.Atoi(nodes)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("budget nodes %q is neither a non-negative count nor a percentage", nodes)
	}
	return n, nil
}

// AllowsReason reports whether the budget applies to reason.
func (b *Budget) AllowsReason(reason DisruptionReason) bool {
	return len(b.Reasons) == 0 || slices.Contains(b.Reasons, reason)
}

// AllowedDisruptionsByReason is the smallest number of allowed disruptions
// among the pool's budgets that apply to reason at now, for a pool of numNodes
// nodes: Unlimited when none applies. A budget that cannot be evaluated counts
// as 0 (fail closed) and its error is returned alongside.
func (in *NodePool) AllowedDisruptionsByReason(now time.Time, numNodes int, reason DisruptionReason) (int, error) {
	allowed := Unlimited
	var errs []error
	for i := range in.Spec.Disruption.Budgets {
		budget := &in.Spec.Disruption.Budgets[i]
		if !budget.AllowsReason(reason) {
			continue
		}
		n, err := budget.AllowedDisruptions(now, numNodes)
		if err != nil {
			errs = append(errs, fmt.Errorf("nodepool %q spec.disruption.budgets[%d]: %w", in.Name, i, err))
		}
		allowed = min(allowed, n)
	}
	return allowed, errors.Join(errs...)
}
