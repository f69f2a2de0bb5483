package scheduling

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// Pattern packing. Pods that only resources and node requirements constrain
// (no pod topology, host ports or preferences) are packed as a whole before
// the first-fit queue runs: a column-generation LP (coverLP) chooses node
// patterns — an instance type and how many pods of each class it holds — so
// that memory-heavy and CPU-heavy pods share nodes whose shape suits them.
// The LP's whole nodes are opened as claims; the fractional rest, and every
// other class, goes through the queue, whose first fit also tops up the
// pattern claims.

const (
	// patternMinPods: below this, first-fit sizing is as good and the LP
	// would only cost time (consolidation simulations place a few pods).
	patternMinPods = 32
	// patternMaxClasses bounds the LP's rows; more classes go to the queue.
	patternMaxClasses = 64
	patternRounds     = 40
	patternPivots     = 2000
)

// plainClass reports whether only resources and node requirements decide
// where c's pods go.
func (s *solver) plainClass(c *class) bool {
	return len(c.pods) > 0 && len(c.ports) == 0 && len(c.prefNode) == 0 && len(c.volumeAlts) == 0 &&
		len(c.actAff)+len(c.actAnti)+len(c.actSpread) == 0 && len(c.selectedBy) == 0 &&
		len(c.requiredAntis) == 0 && len(s.inverse[c]) == 0 && !c.hostInverse
}

// packPatterns places plain classes on existing capacity first, then packs
// the rest by pattern, per NodePool (the first by weight that can host the
// class, as openClaim would choose) and requirement set.
func (s *solver) packPatterns(classes []*class) {
	type key struct{ pool, req int }
	groups := map[key][]*class{}
	var keys []key
	for _, c := range classes {
		if !s.plainClass(c) {
			continue
		}
		for _, b := range s.bins {
			if len(c.pods) == 0 {
				break
			}
			if k, st := s.admit(c, b, c.reqID, len(c.pods)); k > 0 {
				s.commit(c, b, k, st)
			}
		}
		if len(c.pods) == 0 {
			continue
		}
		for _, ps := range s.pools {
			if _, _, _, err := s.canOpen(c, ps, c.reqID); err == nil {
				k := key{ps.index, c.reqID}
				if groups[k] == nil {
					keys = append(keys, k)
				}
				groups[k] = append(groups[k], c)
				break
			}
		}
	}
	for _, k := range keys {
		s.packGroup(s.pools[k.pool], k.req, groups[k])
	}
}

// packGroup packs classes that share a NodePool and requirements.
func (s *solver) packGroup(ps *poolState, reqID int, cls []*class) {
	if len(ps.minValues) > 0 {
		return // minValues needs the queue's type-by-type bookkeeping
	}
	sort.SliceStable(cls, func(i, j int) bool { return len(cls[i].pods) > len(cls[j].pods) })
	if len(cls) > patternMaxClasses {
		cls = cls[:patternMaxClasses]
	}
	pods := 0
	for _, c := range cls {
		pods += len(c.pods)
	}
	if pods < patternMinPods {
		return
	}
	nr, types, relaxedMV, err := s.canOpen(cls[0], ps, reqID)
	if err != nil {
		return
	}
	for _, c := range cls[1:] {
		if _, t, _, err := s.canOpen(c, ps, reqID); err == nil {
			types.orInPlace(t)
		}
	}
	slots := s.cat.compile(nr, s.table.sets[nr]).slots
	if s.countsReservations(slots) {
		return // claims take reservations one by one in the queue
	}
	cands := s.patternTypes(ps, types, slots)
	if len(cands) == 0 {
		return
	}
	need := make([]int64, len(s.res.names))
	for _, c := range cls {
		for r, q := range c.req {
			need[r] += q * int64(len(c.pods))
		}
	}
	perNode := s.nodeCost(ps, need)
	price := func(t int) float64 { return s.nodePrice(t, slots, perNode) }

	m := len(cls)
	demand, diag, first := make([]float64, m), make([]float64, m), make([]float64, m)
	firstType := make([]int, m)
	for i, c := range cls {
		demand[i] = float64(len(c.pods))
		best := math.Inf(1)
		for _, t := range cands {
			k := min(fitCount(ps.allocD[t], c.req), len(c.pods))
			if k > 0 && price(t)/float64(k) < best {
				best, diag[i], first[i], firstType[i] = price(t)/float64(k), float64(k), price(t), t
			}
		}
		if math.IsInf(best, 1) {
			return // canOpen found a type for one pod; cannot happen
		}
	}
	lp := newCoverLP(demand, diag, first)
	colType := append([]int(nil), firstType...)
	colCount := make([][]int, m)
	for i := range cls {
		colCount[i] = make([]int, m)
		colCount[i][i] = int(diag[i])
	}
	f := newPatternFiller(s, ps, cls)
	for round := 0; round < patternRounds; round++ {
		lp.optimize(patternPivots)
		pi := lp.duals()
		f.bounds(pi)
		added := 0
		for _, t := range cands {
			if f.upperBound(t) <= price(t)*(1+1e-9) {
				continue // no fill of this type can price out
			}
			k, v := f.fill(t, pi, 0.75*price(t))
			if p := price(t); v > p*(1+1e-9) {
				col := make([]float64, m)
				for i, n := range k {
					col[i] = float64(n)
				}
				lp.addColumn(col, p)
				colType = append(colType, t)
				colCount = append(colCount, k)
				added++
			}
		}
		if added == 0 {
			break
		}
	}
	lp.optimize(patternPivots)

	sol := lp.solution()
	cols := make([]int, 0, len(sol))
	for j := range sol {
		cols = append(cols, j)
	}
	sort.Ints(cols)
	for _, j := range cols {
		t := colType[j]
		for n := int(sol[j] + 1e-9); n > 0; n-- {
			if ps.nodesLeft <= 0 || !ps.withinLimits(s.cat.capv[t]) {
				return
			}
			b := s.newClaimBin(ps, nr, types, t, relaxedMV)
			opened := false
			for i, c := range cls {
				want := min(colCount[j][i], len(c.pods))
				if want == 0 {
					continue
				}
				if k, st := s.admit(c, b, reqID, want); k > 0 {
					if !opened {
						s.addClaim(b)
						opened = true
					}
					s.commit(c, b, k, st)
				}
			}
			if !opened {
				break // the pattern's pods are all placed already
			}
		}
	}
}

// patternTypes are the candidate types for pattern columns: available, and
// not dominated by a type as cheap with at least as much of everything.
func (s *solver) patternTypes(ps *poolState, types bitset, slots uint64) []int {
	var list []int
	types.each(func(t int) {
		if !math.IsInf(s.cat.cheapest(t, slots), 1) {
			list = append(list, t)
		}
	})
	sort.SliceStable(list, func(i, j int) bool { return s.cat.cheapest(list[i], slots) < s.cat.cheapest(list[j], slots) })
	var out []int
	for _, t := range list {
		dominated := false
		for _, u := range out {
			if covers(ps.allocD[u], ps.allocD[t]) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, t)
		}
	}
	return out
}

// covers reports whether a holds at least b in every resource.
func covers(a, b []int64) bool {
	for i := range b {
		if a[i] < b[i] {
			return false
		}
	}
	return true
}

// patternFiller finds, for an instance type and the LP's prices per pod,
// a node's worth of pods of high total price: the pricing step of column
// generation. It is a heuristic (greedy by price density under a few
// weightings of CPU against memory, then swaps when the greedy fill is
// worth at least 75% of the type's price), so the LP may stop short of its
// optimum, never below it.
type patternFiller struct {
	ps   *poolState
	cls  []*class
	idx  []int
	dens []float64
	free []int64
	cur  []int
	// best price per unit of CPU, memory and pod slot (see bounds)
	perCPU, perMem, perPod float64
}

func newPatternFiller(s *solver, ps *poolState, cls []*class) *patternFiller {
	m := len(cls)
	return &patternFiller{ps: ps, cls: cls, idx: make([]int, m), dens: make([]float64, m),
		free: make([]int64, len(s.res.names)), cur: make([]int, m)}
}

var patternWeights = [...]float64{0, 0.25, 0.5, 0.75, 1}

// bounds records, for the current prices, the most any class pays per unit
// of each resource and per pod.
func (f *patternFiller) bounds(pi []float64) {
	f.perCPU, f.perMem, f.perPod = 0, 0, 0
	for i, c := range f.cls {
		if pi[i] <= 0 {
			continue
		}
		f.perCPU = max(f.perCPU, pi[i]/float64(max(c.req[resCPU], 1)))
		f.perMem = max(f.perMem, pi[i]/float64(max(c.req[resMemory], 1)))
		f.perPod = max(f.perPod, pi[i])
	}
}

// upperBound is no less than the value of any fill of type t: each of its
// CPU, memory and pod slots is worth at most the best price per unit.
func (f *patternFiller) upperBound(t int) float64 {
	a := f.ps.allocD[t]
	return min(f.perCPU*float64(a[resCPU]), f.perMem*float64(a[resMemory]), f.perPod*float64(a[resPods]))
}

func (f *patternFiller) fill(t int, pi []float64, floor float64) ([]int, float64) {
	alloc := f.ps.allocD[t]
	cpu, mem := float64(max(alloc[resCPU], 1)), float64(max(alloc[resMemory], 1))
	var best []int
	bestV := 0.0
	for _, w := range patternWeights {
		f.idx = f.idx[:0]
		for i, c := range f.cls {
			if pi[i] <= 0 {
				continue
			}
			f.idx = append(f.idx, i)
			f.dens[i] = pi[i] / (w*float64(c.req[resCPU])/cpu + (1-w)*float64(c.req[resMemory])/mem + 1e-12)
		}
		slices.SortFunc(f.idx, func(a, b int) int {
			if c := cmp.Compare(f.dens[b], f.dens[a]); c != 0 {
				return c
			}
			return a - b
		})
		copy(f.free, alloc)
		clear(f.cur)
		v := 0.0
		for _, i := range f.idx {
			c := f.cls[i]
			k := min(fitCount(f.free, c.req), len(c.pods))
			if k <= 0 {
				continue
			}
			f.take(i, k)
			v += float64(k) * pi[i]
		}
		if v > bestV {
			bestV = v
			best = append(best[:0], f.cur...)
		}
	}
	// Swaps polish the best greedy fill, when it is near pricing out.
	if bestV > 0 && bestV > floor {
		copy(f.cur, best)
		copy(f.free, alloc)
		for i, k := range best {
			for r, q := range f.cls[i].req {
				f.free[r] -= int64(k) * q
			}
		}
		if v := f.improve(pi, bestV); v > bestV {
			bestV = v
			best = append(best[:0], f.cur...)
		}
	}
	return best, bestV
}

func (f *patternFiller) take(i, k int) {
	for r, q := range f.cls[i].req {
		f.free[r] -= int64(k) * q
	}
	f.cur[i] += k
}

// improve applies the first improving move of "remove up to two pods of one
// class, add as many of another as then fit" until none improves.
func (f *patternFiller) improve(pi []float64, v float64) float64 {
	for moved := true; moved; {
		moved = false
		for i := range f.cls {
			for rem := 0; rem <= min(2, f.cur[i]); rem++ {
				f.take(i, -rem)
				for j, c := range f.cls {
					if j == i || pi[j] <= 0 {
						continue
					}
					k := min(fitCount(f.free, c.req), len(c.pods)-f.cur[j])
					if k <= 0 {
						continue
					}
					if gain := float64(k)*pi[j] - float64(rem)*pi[i]; gain > 1e-12 {
						f.take(j, k)
						v += gain
						moved = true
						break
					}
				}
				if moved {
					break
				}
				f.take(i, rem)
			}
			if moved {
				break
			}
		}
	}
	return v
}
