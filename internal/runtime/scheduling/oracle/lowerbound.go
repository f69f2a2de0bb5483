package oracle

import (
	"math"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
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

// LowerBoundCostOnNodes is LowerBoundCost with at most nodes options
// bought in all (Σ x_t ≤ nodes); +Inf when that many cannot cover the
// demand. By LP duality it is the largest, over λ ≥ 0, of LowerBoundCost
// with every price raised by λ, less λ·nodes. Every λ gives a lower bound,
// so the search over λ only decides how tight it is; the function is
// concave in λ, so a ternary search finds its maximum.
func LowerBoundCostOnNodes(options []BoundOption, cpu, memory, nodes float64) float64 {
	shifted := func(by func(BoundOption) float64) []BoundOption {
		out := make([]BoundOption, len(options))
		for i, o := range options {
			out[i] = o
			out[i].Price = by(o)
		}
		return out
	}
	// The fewest nodes that cover the demand: the LP with every price 1.
	unit := func(o BoundOption) float64 {
		if math.IsInf(o.Price, 1) {
			return o.Price
		}
		return 1
	}
	if LowerBoundCost(shifted(unit), cpu, memory) > nodes*(1+1e-9) {
		return math.Inf(1)
	}
	dual := func(lambda float64) float64 {
		return LowerBoundCost(shifted(func(o BoundOption) float64 { return o.Price + lambda }), cpu, memory) - lambda*nodes
	}
	hi := 0.0
	for _, o := range options {
		if !math.IsInf(o.Price, 1) {
			hi = max(hi, o.Price)
		}
	}
	lo, hi := 0.0, 1000*(hi+1)
	for range 100 {
		a, b := lo+(hi-lo)/3, hi-(hi-lo)/3
		if dual(a) < dual(b) {
			lo = a
		} else {
			hi = b
		}
	}
	return max(dual(0), dual((lo+hi)/2))
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
			// Parallel shapes (zero determinant up to rounding) have no
			// unique two-shape basis; the single-shape loop covers them.
			// An exact zero test lets rounding noise through, and the
			// "solution" of that noise is x = (-0, -0) at cost -0.
			l, r := oa.CPUMillis*ob.MemoryBytes, ob.CPUMillis*oa.MemoryBytes
			det := l - r
			if math.Abs(det) <= 1e-9*(math.Abs(l)+math.Abs(r)) {
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
func LPLowerBound(types []*scheduling.InstanceType, demand corev1.ResourceList) float64 {
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

// LPLowerBoundForPods tightens LPLowerBound for a known set of pods: a node
// of type t can only contribute the CPU that pods fitting on it can use —
// at most its allocatable, a fractional knapsack of pod CPU into its memory,
// and the CPU of its pod-capacity largest pods — and likewise for memory.
// Every integral placement respects these capacities, so the result is
// still a lower bound on the cost of placing pods, and it no longer credits
// types whose CPU or memory no pod can use (tiny burstables, memory-only
// shapes).
func LPLowerBoundForPods(types []*scheduling.InstanceType, pods []*corev1.Pod) float64 {
	opts, cpu, mem := podBoundOptions(types, pods)
	return LowerBoundCost(opts, cpu, mem)
}

// LPLowerBoundForPodsOnNodes is LPLowerBoundForPods for plans of at most
// nodes new nodes: what fewer, larger nodes must cost at least.
func LPLowerBoundForPodsOnNodes(types []*scheduling.InstanceType, pods []*corev1.Pod, nodes float64) float64 {
	opts, cpu, mem := podBoundOptions(types, pods)
	return LowerBoundCostOnNodes(opts, cpu, mem, nodes)
}

// podBoundOptions is each type at its cheapest available offering with the
// CPU and memory pods can use of it (see LPLowerBoundForPods), and the
// pods' total CPU and memory.
func podBoundOptions(types []*scheduling.InstanceType, pods []*corev1.Pod) ([]BoundOption, float64, float64) {
	type size struct{ cpu, mem float64 }
	counts := map[size]float64{}
	var demCPU, demMem float64
	for _, p := range pods {
		r := scheduling.PodRequests(p)
		cpu, mem := r[corev1.ResourceCPU], r[corev1.ResourceMemory]
		sz := size{float64(cpu.MilliValue()), float64(mem.Value())}
		counts[sz]++
		demCPU += sz.cpu
		demMem += sz.mem
	}
	opts := make([]BoundOption, 0, len(types))
	for _, it := range types {
		price := math.Inf(1)
		for _, o := range it.Offerings {
			if o.Available {
				price = min(price, o.Price)
			}
		}
		cq, mq, pq := it.Allocatable[corev1.ResourceCPU], it.Allocatable[corev1.ResourceMemory], it.Allocatable[corev1.ResourcePods]
		c, m := float64(cq.MilliValue()), float64(mq.Value())
		slots := math.Inf(1)
		if _, ok := it.Allocatable[corev1.ResourcePods]; ok {
			slots = float64(pq.Value())
		}
		type item struct {
			size
			n float64
		}
		var fit []item
		for sz, n := range counts {
			if sz.cpu <= c && sz.mem <= m {
				fit = append(fit, item{sz, n})
			}
		}
		// knapsack fills capacity cap of one dimension, taking items by the
		// best ratio of the other dimension, and returns the other total.
		knapsack := func(capacity float64, take func(item) (use, gain float64)) float64 {
			sort.Slice(fit, func(i, j int) bool {
				ui, gi := take(fit[i])
				uj, gj := take(fit[j])
				return gi*uj > gj*ui
			})
			var got float64
			for _, it := range fit {
				use, gain := take(it)
				if use <= 0 {
					got += gain * it.n
					continue
				}
				k := min(it.n, capacity/use)
				got += k * gain
				capacity -= k * use
				if capacity <= 0 {
					break
				}
			}
			return got
		}
		largest := func(key func(item) float64) float64 {
			sort.Slice(fit, func(i, j int) bool { return key(fit[i]) > key(fit[j]) })
			var got float64
			left := slots
			for _, it := range fit {
				k := min(it.n, left)
				got += k * key(it)
				if left -= k; left <= 0 {
					break
				}
			}
			return got
		}
		uc := min(c, knapsack(m, func(i item) (float64, float64) { return i.mem, i.cpu }), largest(func(i item) float64 { return i.cpu }))
		um := min(m, knapsack(c, func(i item) (float64, float64) { return i.cpu, i.mem }), largest(func(i item) float64 { return i.mem }))
		opts = append(opts, BoundOption{Price: price, CPUMillis: uc, MemoryBytes: um})
	}
	return opts, demCPU, demMem
}
