package operator

import (
	"testing"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// TestSolverOptionsCarryNodeCost: NODE_COST reaches every scheduling pass,
// and its default is the solver's DefaultNodeCost.
func TestSolverOptionsCarryNodeCost(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want float64
	}{{"", scheduling.DefaultNodeCost}, {"0.05", 0.05}, {"0", 0}} {
		s, err := ParseSettings(nil, func(k string) string {
			return map[string]string{"CLUSTER_NAME": "c", "NODE_COST": tc.env}[k]
		})
		if err != nil {
			t.Fatal(err)
		}
		opts := solverOptions(s)
		if opts.NodeCost == nil || *opts.NodeCost != tc.want {
			t.Errorf("NODE_COST=%q: solver node cost %v, want %v", tc.env, opts.NodeCost, tc.want)
		}
	}
}
