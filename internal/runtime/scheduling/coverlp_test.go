package scheduling

import (
	"math"
	"testing"
)

func TestCoverLPMixesWhenAMixedPatternIsCheaper(t *testing.T) {
	// Two classes of 4 pods; alone each costs $1 a pod, a node holding one
	// of each costs $1.50.
	lp := newCoverLP([]float64{4, 4}, []float64{1, 1}, []float64{1, 1})
	lp.optimize(100)
	if got := lp.objective(); math.Abs(got-8) > 1e-9 {
		t.Fatalf("objective with single-class columns = %v, want 8", got)
	}
	if pi := lp.duals(); math.Abs(pi[0]-1) > 1e-9 || math.Abs(pi[1]-1) > 1e-9 {
		t.Errorf("duals = %v, want [1 1]", pi)
	}
	lp.addColumn([]float64{1, 1}, 1.5)
	lp.optimize(100)
	if got := lp.objective(); math.Abs(got-6) > 1e-9 {
		t.Errorf("objective = %v, want 6", got)
	}
	if sol := lp.solution(); math.Abs(sol[2]-4) > 1e-9 {
		t.Errorf("solution = %v, want 4 of the mixed column", sol)
	}
	if pi := lp.duals(); math.Abs(pi[0]+pi[1]-1.5) > 1e-9 {
		t.Errorf("duals %v do not price the mixed column at its cost", pi)
	}
}

func TestCoverLPUsesSurplusWhenOverCoveringIsCheaper(t *testing.T) {
	// One pod of class 0 is needed, but the only column covering it brings
	// three pods of class 1 (needing 1) for less than class 1's own column.
	lp := newCoverLP([]float64{1, 1}, []float64{1, 1}, []float64{5, 5})
	lp.addColumn([]float64{1, 3}, 2)
	lp.optimize(100)
	if got := lp.objective(); math.Abs(got-2) > 1e-9 {
		t.Errorf("objective = %v, want 2 (one mixed node, two spare class-1 slots)", got)
	}
}
