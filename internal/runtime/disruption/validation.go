package disruption

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// validateAndStart waits the validation delay, then re-checks each command
// (see Revalidate) in the order decided, with the nodes of the commands
// before it that still hold counted as going, as they were when it was
// decided, and starts those that hold.
func (c *Controller) validateAndStart(ctx context.Context, decided []*Command, pools []*v1.NodePool) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.clock.After(c.opts.ValidationDelay):
	}
	env, err := c.Env(ctx)
	if err != nil {
		return err
	}
	going := map[string]bool{}
	for _, cmd := range decided {
		for _, n := range env.Snapshot.Nodes {
			n.Leaving = going[n.Name()]
		}
		valid, err := Revalidate(ctx, env, cmd)
		if err != nil {
			failedValidations.WithLabelValues(consolidationTypeOf(cmd.Method)).Inc()
			log.FromContext(ctx).Info("disruption command no longer valid", "method", cmd.Method, "reason", err.Error())
			continue
		}
		if err := c.queue.Execute(ctx, valid, pools); err != nil {
			return fmt.Errorf("starting %s: %w", valid, err)
		}
		for _, cand := range valid.Candidates {
			going[cand.Name()] = true
		}
	}
	return nil
}

// Revalidate re-derives cmd in env (see validateAndStart). An emptiness or
// multi-node command keeps those of its candidates that still hold: each
// passed the same wait, so a node that took pods, or a set that no longer
// goes as decided, costs the command only what changed, not the whole
// command and another validation delay. A multi-node command keeps the
// longest run, in its order, that still goes as decided at no higher price
// (at least two nodes).
func Revalidate(ctx context.Context, env *Env, cmd *Command) (*Command, error) {
	current, _ := Candidates(env, cmd.Reason)
	byName := map[string]*Candidate{}
	for _, cand := range current {
		byName[cand.Name()] = cand
	}
	budgets, _ := BuildBudgets(env.Snapshot.Nodes, env.Snapshot.NodePools, cmd.Reason, env.Now)
	narrows := cmd.Method == MethodEmptiness || cmd.Method == MethodMultiNode
	var fresh []*Candidate
	var lost error
	for _, old := range cmd.Candidates {
		cand, ok := byName[old.Name()]
		var why error
		switch {
		case !ok:
			why = fmt.Errorf("node %s is no longer a disruption candidate", old.Name())
		case !cand.Consolidatable():
			why = fmt.Errorf("node %s had pods scheduled or removed", old.Name())
		case cmd.Method == MethodEmptiness && !cand.Empty():
			why = fmt.Errorf("node %s is no longer empty", old.Name())
		case !budgets.take(cand.Pool.Name):
			why = fmt.Errorf("nodepool %s has no disruption budget left for node %s", cand.Pool.Name, old.Name())
		}
		if why != nil {
			if !narrows {
				return nil, why
			}
			lost = cmp.Or(lost, why)
			continue
		}
		fresh = append(fresh, cand)
	}
	if cmd.Method == MethodEmptiness {
		if len(fresh) == 0 {
			return nil, lost
		}
		return &Command{Method: cmd.Method, Reason: cmd.Reason, Candidates: fresh}, nil
	}
	holds := func(again *Command) bool {
		return again.Decision() == cmd.Decision() && again.ReplacementPrice() <= cmd.ReplacementPrice()
	}
	if lost == nil {
		again, err := Consolidate(env, cmd.Method, fresh)
		if err == nil && holds(again) {
			return again, nil
		}
		if lost = err; err == nil {
			lost = fmt.Errorf("the decision changed from %s to %s", cmd, again)
		}
		if !narrows {
			return nil, lost
		}
	}
	var set []*Candidate
	var best *Command
	for _, c := range fresh {
		if ctx.Err() != nil {
			break
		}
		next := slices.Concat(set, []*Candidate{c})
		again, err := Consolidate(env, cmd.Method, next)
		if err != nil || !holds(again) {
			continue
		}
		set = next
		if len(set) >= 2 {
			best = again
		}
	}
	if best == nil {
		return nil, lost
	}
	if ok, _ := approveBalanced(best, poolTotals(env, current)); !ok {
		return nil, lost
	}
	log.FromContext(ctx).Info("disruption command narrowed at validation", "from", len(cmd.Candidates), "to", len(best.Candidates), "reason", lost.Error())
	return best, nil
}
