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
	if cpu <= 0 && memory <= 0 {
		return 0
	}
	var opts []BoundOption
	for _, o := range options {
		if o.Price >= 0 && !math.IsInf(o.Price, 1) && o.CPUMillis > 0 && o.MemoryBytes > 0 {
			opts = append(opts, o)
		}
	}
	best := math.Inf(1)
	for _, o := range opts {
		x := max(cpu/o.CPUMillis, memory/o.MemoryBytes)
		best = min(best, o.Price*x)
	}
	for i := range opts {
		a := opts[i]
		for j := i + 1; j < len(opts); j++ {
			b := opts[j]
			det := a.CPUMillis*b.MemoryBytes - b.CPUMillis*a.MemoryBytes
			if det == 0 {
				continue
			}
			xa := (cpu*b.MemoryBytes - b.CPUMillis*memory) / det
			xb := (a.CPUMillis*memory - cpu*a.MemoryBytes) / det
			if xa < 0 || xb < 0 {
				continue
			}
			best = min(best, a.Price*xa+b.Price*xb)
		}
	}
	return best
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
