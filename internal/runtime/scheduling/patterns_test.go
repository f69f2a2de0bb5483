package scheduling_test

import (
	"testing"

	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

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
