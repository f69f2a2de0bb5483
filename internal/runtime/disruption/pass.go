package disruption

import (
	"context"
	"fmt"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// method is one disruption method with the reason its budgets use.
type method struct {
	name   string
	reason v1.DisruptionReason
	run    func(context.Context, *Env, []*Candidate, Budgets) Outcome
}

// methods run in Karpenter v1.15's order: repair first (fixing a fault
// outranks any discretionary change), then Emptiness, Drift and
// consolidation.
var methods = []method{
	{MethodRepair, v1.DisruptionReasonUnhealthy, func(_ context.Context, e *Env, c []*Candidate, b Budgets) Outcome { return Repair(e, c, b) }},
	{MethodEmptiness, v1.DisruptionReasonEmpty, func(_ context.Context, e *Env, c []*Candidate, b Budgets) Outcome { return Emptiness(e, c, b) }},
	{MethodDrift, v1.DisruptionReasonDrifted, func(_ context.Context, e *Env, c []*Candidate, b Budgets) Outcome { return Drift(e, c, b) }},
	{MethodMultiNode, v1.DisruptionReasonUnderutilized, MultiNode},
	{MethodSingleNode, v1.DisruptionReasonUnderutilized, SingleNode},
}

// A pass decides at most MaxCommandsPerPass consolidation and emptiness
// commands before their common validation, and starts no further search
// passSearch after its first decision: the first command's nodes wait at
// most that longer than the validation delay.
const (
	MaxCommandsPerPass = 10
	passSearch         = 5 * time.Second
)

// Pass decides (see decide) and starts what it decided; it reports
// whether it decided a command (started, or abandoned when its validation
// failed).
func (c *Controller) Pass(ctx context.Context) (bool, error) {
	start := c.clock.Now()
	env, err := c.Env(ctx)
	if err != nil {
		return false, err
	}
	tEnv := c.clock.Since(start)
	c.forgetEvents(env)
	c.removeStaleTaints(ctx, env)
	c.reportHolds(ctx, env)
	batch, now, took := c.decide(ctx, env)
	logPass(ctx, env, tEnv, c.clock.Since(start), took, batch, now)
	switch {
	case now != nil:
		if err := c.startInRollout(ctx, env, now); err != nil {
			return false, err
		}
		if err := c.queue.Execute(ctx, now, env.Snapshot.NodePools); err != nil {
			c.stopRollout(ctx, now, err)
			return false, fmt.Errorf("starting %s: %w", now, err)
		}
		return true, nil
	case len(batch) > 0:
		return true, c.validateAndStart(ctx, batch, env.Snapshot.NodePools)
	}
	return false, nil
}

// logPass logs a pass that decided something at info, with how long it
// took (reading the cluster, then deciding), and one that decided nothing
// at debug.
func logPass(ctx context.Context, env *Env, tEnv, total time.Duration, took []string, batch []*Command, now *Command) {
	nodes := 0
	for _, cmd := range append(slices.Clone(batch), now) {
		if cmd != nil {
			nodes += len(cmd.Candidates)
		}
	}
	logger := log.FromContext(ctx)
	if nodes == 0 {
		logger = logger.V(1)
	}
	logger.Info("disruption pass", "nodes", len(env.Snapshot.Nodes), "commands", len(batch)+btoi(now != nil), "disrupting", nodes,
		"duration", total.String(), "snapshot", tEnv.String(), "methods", took)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// decide runs the methods in order. A command that needs no validation
// (repair, drift) found first is returned as now, to start at once. A
// consolidation or emptiness command that deletes is kept and the same
// method runs again, then the rest, with its nodes counted as going
// (Leaving): the batch so found waits out one validation delay, not one
// per command. A command that replaces ends the search, as does one that
// needs no validation after a batch began (it goes next pass).
// took lists each method run with how long it took, in the order run.
func (c *Controller) decide(ctx context.Context, env *Env) (batch []*Command, now *Command, took []string) {
	blockedReported := false
	var firstDecided time.Time
	// The consolidation searches are skipped while the cluster is the one
	// they last found nothing in; a pass in which both ran to the end and
	// found nothing records it.
	var fingerprint uint64
	fingerprinted, foundNothing := false, 0
	for i := 0; i < len(methods); i++ {
		m := methods[i]
		if m.name == MethodRepair && env.Repair == nil {
			continue
		}
		start := c.clock.Now()
		if len(batch) > 0 && start.Sub(firstDecided) >= passSearch {
			break
		}
		candidates, blocked := Candidates(env, m.reason)
		// Repair's candidates ignore do-not-disrupt; the reasons users
		// see are those of voluntary disruption.
		if !blockedReported && m.reason != v1.DisruptionReasonUnhealthy {
			c.reportBlocked(blocked)
			blockedReported = true
		}
		if m.reason == v1.DisruptionReasonDrifted {
			c.reportObserved(blocked)
		}
		budgets, errs := BuildBudgets(env.Snapshot.Nodes, env.Snapshot.NodePools, m.reason, env.Now)
		for _, err := range errs {
			log.FromContext(ctx).Error(err, "evaluating disruption budgets")
		}
		for pool, n := range budgets {
			allowedDisruptions.WithLabelValues(pool, reasonLabel(m.reason)).Set(float64(n))
		}
		consolidation := m.name == MethodMultiNode || m.name == MethodSingleNode
		if consolidation && len(batch) == 0 {
			if !fingerprinted {
				fingerprint, fingerprinted = consolidationFingerprint(env, budgets), true
			}
			if c.consolidated.holds(fingerprint, env.Now) {
				took = append(took, m.name+"=unchanged")
				continue
			}
		}
		out := m.run(ctx, env, candidates, budgets)
		took = append(took, m.name+"="+c.clock.Since(start).Round(time.Millisecond).String())
		evaluationDuration.WithLabelValues(reasonLabel(m.reason), consolidationTypeOf(m.name)).Observe(c.clock.Since(start).Seconds())
		eligibleNodes.WithLabelValues(reasonLabel(m.reason)).Set(float64(out.Eligible))
		if out.TimedOut {
			consolidationTimeouts.WithLabelValues(consolidationTypeOf(m.name)).Inc()
		}
		c.reportRejected(out.Rejected)
		c.observeMoves(out.Moves)
		c.reportRepairBlocked(out)
		cmd := out.Command
		if consolidation && len(batch) == 0 && cmd == nil && !out.TimedOut {
			foundNothing++
		}
		switch {
		case cmd == nil:
			if len(batch) == 0 {
				c.reportBudgetBlocked(env, candidates, budgets, m)
			}
			continue
		case !cmd.NeedsValidation():
			if len(batch) == 0 {
				return nil, cmd, took
			}
			return batch, nil, took
		}
		if len(batch) == 0 {
			firstDecided = c.clock.Now()
		}
		batch = append(batch, cmd)
		// A replacement is sized for the pods the simulation moved; a
		// later decision would move some of them again.
		if cmd.Decision() != "delete" || len(batch) == MaxCommandsPerPass {
			break
		}
		for _, cand := range cmd.Candidates {
			cand.Leaving = true
		}
		i-- // the same method again, without these nodes
	}
	if len(batch) == 0 && foundNothing == 2 {
		c.consolidated = consolidatedMemo{fingerprint: fingerprint, at: env.Now}
	}
	return batch, nil, took
}
