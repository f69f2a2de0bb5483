package scheduling

import (
	"math"

	corev1 "k8s.io/api/core/v1"
)

// BoundOption is one purchasable shape for the cost lower bound.
type BoundOption struct {
	Price       float64
	CPUMillis   float64
	MemoryBytes float64
}

// LowerBoundCost solves the linear relaxation
//
//	min Σ price_t·x_t  s.t.  Σ x_t·cpu_t ≥ cpu,  Σ x_t·mem_t ≥ memory,  x ≥ 0.
//
// With two constraints an optimal basic solution uses at most two shapes, so
// enumerating every single shape and every pair (solving the 2×2 system with
// both constraints tight) is exact. Options without CPU or memory are
// skipped. Returns +Inf when no option helps and 0 for zero demand.
func LowerBoundCost(options []BoundOption, cpu, memory float64) float64 {
	cost, _, _ := solveLP(options, cpu, memory)
	return cost
}

// solveLP returns the optimum of the relaxation and its basis: the indices
// of the one or two options used (b = -1 for a single option, a = -1 when
// nothing helps).
func solveLP(opts []BoundOption, cpu, memory float64) (cost float64, a, b int) {
	if cpu <= 0 && memory <= 0 {
		return 0, -1, -1
	}
	usable := func(o BoundOption) bool {
		return o.Price >= 0 && !math.IsInf(o.Price, 1) && o.CPUMillis > 0 && o.MemoryBytes > 0
	}
	cost, a, b = math.Inf(1), -1, -1
	for i, o := range opts {
		if !usable(o) {
			continue
		}
		if c := o.Price * max(cpu/o.CPUMillis, memory/o.MemoryBytes); c < cost {
			cost, a, b = c, i, -1
		}
	}
	for i := range opts {
		oa := opts[i]
		if !usable(oa) {
			continue
		}
		for j := i + 1; j < len(opts); j++ {
			ob := opts[j]
			if !usable(ob) {
				continue
			}
			det := oa.CPUMillis*ob.MemoryBytes - ob.CPUMillis*oa.MemoryBytes
			if det == 0 {
				continue
			}
			xa := (cpu*ob.MemoryBytes - ob.CPUMillis*memory) / det
			xb := (oa.CPUMillis*memory - cpu*oa.MemoryBytes) / det
			if xa < 0 || xb < 0 {
				continue
			}
			if c := oa.Price*xa + ob.Price*xb; c < cost {
				cost, a, b = c, i, j
			}
		}
	}
	return cost, a, b
}

// LPLowerBound is LowerBoundCost over instance types' allocatable CPU and
// memory at their cheapest available offering, for a total demand.
func LPLowerBound(types []*InstanceType, demand corev1.ResourceList) float64 {
	opts := make([]BoundOption, 0, len(types))
	for _, it := range types {
		price := math.Inf(1)
		for _, o := range it.Offerings {
			if o.Available {
				price = min(price, o.Price)
			}
		}
		cpu, mem := it.Allocatable[corev1.ResourceCPU], it.Allocatable[corev1.ResourceMemory]
		opts = append(opts, BoundOption{Price: price, CPUMillis: float64(cpu.MilliValue()), MemoryBytes: float64(mem.Value())})
	}
	cpu, mem := demand[corev1.ResourceCPU], demand[corev1.ResourceMemory]
	return LowerBoundCost(opts, float64(cpu.MilliValue()), float64(mem.Value()))
}
