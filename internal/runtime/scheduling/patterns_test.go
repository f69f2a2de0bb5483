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

func TestPatternPackingSharesNodesBetweenCPUAndMemoryHeavyPods(t *testing.T) {
	types := []*InstanceType{
		mkType("cpu.c", "amd64", 4, 2, 0.10),
		mkType("mem.r", "amd64", 1, 16, 0.10),
		mkType("mix.m", "amd64", 4, 16, 0.12),
	}
	in := func() Input {
		ps := append(pods(40, "cpu", "1", "256Mi"), pods(40, "mem", "100m", "3584Mi")...)
		return Input{NodePools: []*NodePool{mkPool("default", types)}, Pods: ps}
	}
	runCases(t, []tcase{{"mixed nodes hold both kinds", in, func(t *testing.T, r *result) {
		// Apart, 40 one-CPU pods need 10 cpu.c and 40 memory pods 10 mem.r:
		// $2.00. Three of one and four of the other fill a mix.m ($0.12).
		if cost := r.plan.Cost(); cost > 1.55 {
			t.Errorf("cost $%.2f/h, want at most $1.55 (10 mix.m holding 3+4, the rest of the CPU pods on cpu.c)", cost)
		}
		mixed := 0
		for _, c := range r.plan.NewClaims {
			var cpu, mem int
			for _, p := range c.Pods {
				if p.Name[:3] == "cpu" {
					cpu++
				} else {
					mem++
				}
			}
			if cpu == 3 && mem == 4 {
				mixed++
				expectType(t, c, "mix.m")
			}
		}
		if mixed < 10 {
			t.Errorf("%d claims hold 3 CPU and 4 memory pods, want 10", mixed)
		}
		if len(r.plan.Errors) > 0 {
			t.Errorf("unplaced: %v", r.plan.Errors)
		}
	}}})
}

func TestPatternPackingLeavesExistingCapacityFirst(t *testing.T) {
	types := []*InstanceType{mkType("cpu.c", "amd64", 4, 8, 0.10)}
	in := func() Input {
		node := mkNode("existing", 8, 32, map[string]string{labelArch: "amd64", labelOS: "linux", labelZone: "z1"})
		return Input{NodePools: []*NodePool{mkPool("default", types)}, Nodes: []*Node{node}, Pods: pods(40, "p", "1", "1Gi")}
	}
	runCases(t, []tcase{{"existing node filled before new claims", in, func(t *testing.T, r *result) {
		onNode := 0
		for _, p := range r.plan.Placements {
			if p.Kind == TargetNode {
				onNode++
			}
		}
		if onNode != 8 {
			t.Errorf("%d pods on the existing 8-core node, want 8", onNode)
		}
		r.claims(t, 8)
	}}})
}
