package disruption

import v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"

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
