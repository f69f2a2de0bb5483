package disruption

import (
	"time"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// Budgets is how many more nodes each NodePool may start disrupting for
// one reason.
type Budgets map[string]int

// BuildBudgets is simulation.DisruptionBudgets as Budgets.
func BuildBudgets(nodes []*state.StateNode, pools []*v1.NodePool, reason v1.DisruptionReason, now time.Time) (Budgets, []error) {
	b, errs := simulation.DisruptionBudgets(nodes, pools, reason, now)
	return Budgets(b), errs
}

// take consumes one disruption of pool's budget if any is left.
func (b Budgets) take(pool string) bool {
	if b[pool] <= 0 {
		return false
	}
	b[pool]--
	return true
}

func (b Budgets) clone() Budgets {
	out := make(Budgets, len(b))
	for k, v := range b {
		out[k] = v
	}
	return out
}
