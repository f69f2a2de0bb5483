package scheduling

import (
	"math"
	"slices"
)

// Sizing new claims. A pod is worth its share of the demand still to place
// (CPU share plus memory share). For each candidate instance type the solver
// simulates filling a fresh node with the current class and then,
// first-fit-decreasing, with the other pending classes that could run there;
// the type whose simulated pods are worth the most per dollar wins. This
// rewards shapes the pending pods actually fill in both dimensions, rather
// than shapes that are cheap per unit of one resource the pods cannot use.

// sizingCandidates bounds how many types are simulated per new claim.
const sizingCandidates = 16

// fillCredit is the value a fill simulation credits each pod on top of its
// demand share (see take); tieTolerance is how close to the best fill per
// dollar a type counts as tied.
const (
	fillCredit   = 1e-12
	tieTolerance = 1e-9
)

type sizingCand struct {
	t            int
	price, ratio float64
}

func (a sizingCand) better(b sizingCand) bool {
	if a.ratio != b.ratio {
		return a.ratio > b.ratio
	}
	return a.price < b.price
}

// chooseTarget picks the instance type a new claim is sized for.
func (s *solver) chooseTarget(c *class, ps *poolState, types bitset, slots uint64, perClaim int) int {
	pm, pb := 1/float64(max(s.remaining[resCPU], 1)), 1/float64(max(s.remaining[resMemory], 1))
	value := func(q []int64) float64 {
		return pm*float64(q[resCPU]) + pb*float64(q[resMemory])
	}
	pending := s.pending(c)
	// Pods with topology are sized by price alone, as they are kept out of
	// the pattern LP: the claim's type decides where they may launch.
	perNode := 0.0
	if s.plainClass(c) {
		perNode = s.nodeCost(ps, pending)
	}
	cands := s.rank(s.cands[:0], ps, types, slots, perNode, value)
	s.cands = cands
	if len(cands) == 0 {
		// canOpen only passes types with an offering in slots, so this is
		// unreachable; keep a valid choice anyway.
		first := -1
		types.each(func(t int) {
			if first < 0 {
				first = t
			}
		})
		return first
	}
	free := s.scratch()
	bestScore := 0.0
	for i := range cands {
		// A fill is worth at most the node's whole room (plus the per-pod
		// tie credit), and cands come best bound first: once the bound is
		// below the tie tolerance of the best fill, no later type can win,
		// so their fills are not simulated.
		if bound := cands[i].ratio + float64(ps.allocD[cands[i].t][resPods])*fillCredit/cands[i].price; bound < bestScore*(1-tieTolerance) {
			cands = cands[:i]
			break
		}
		cands[i].ratio = s.simulateFill(c, ps, cands[i].t, perClaim, free, value) / cands[i].price
		bestScore = max(bestScore, cands[i].ratio)
	}
	// Ties go to the larger type: fewer nodes for the same efficiency.
	best := -1
	for i, cd := range cands {
		if cd.ratio >= bestScore*(1-tieTolerance) && (best < 0 || cd.price > cands[best].price) {
			best = i
		}
	}
	return s.finishInOne(c, ps, types, slots, perNode, pending, value, cands[best])
}

// rank keeps in cands the sizingCandidates types with the most demand
// share per dollar; types far from that cannot be efficient however well
// filled.
func (s *solver) rank(cands []sizingCand, ps *poolState, types bitset, slots uint64, perNode float64, value func([]int64) float64) []sizingCand {
	types.each(func(t int) {
		price := s.nodePrice(t, slots, perNode)
		if math.IsInf(price, 1) {
			return
		}
		cd := sizingCand{t, price, value(ps.allocD[t]) / price}
		if len(cands) == sizingCandidates && !cd.better(cands[len(cands)-1]) {
			return
		}
		if len(cands) < sizingCandidates {
			cands = append(cands, cd)
		} else {
			cands[len(cands)-1] = cd
		}
		for i := len(cands) - 1; i > 0 && cands[i].better(cands[i-1]); i-- {
			cands[i], cands[i-1] = cands[i-1], cands[i]
		}
	})
	return cands
}

// pending sums the requests of the pods still to place that no claim
// expects (see promiseFill), c's own pods included.
func (s *solver) pending(c *class) []int64 {
	if s.pendBufV == nil {
		s.pendBufV = make([]int64, len(s.res.names))
		s.pendBufR = make([]int64, len(s.res.names))
	}
	for r := range s.pendBufV {
		s.pendBufV[r] = s.remaining[r] - s.promisedReq[r] + int64(c.promised)*c.req[r]
	}
	return s.pendBufV
}

// finishNodes bounds the nodes finishInOne plays the batch's end out on.
const finishNodes = 8

// finishInOne sizes the last claim of a batch: when one node can hold
// every pending pod, the cheapest such type wins if it costs no more than
// the nodes per-pod efficiency would buy instead, played out claim by
// claim (each the most efficient candidate, priced as the cheapest type
// holding its fill). Efficiency alone would split five pods over a node of
// three and a node of two where one node of five costs the same.
func (s *solver) finishInOne(c *class, ps *poolState, types bitset, slots uint64, perNode float64, pending []int64, value func([]int64) float64, best sizingCand) int {
	// Pods with topology keep their per-node sizing (see chooseTarget).
	if !s.plainClass(c) || !covers(ps.maxAlloc(), pending) {
		return best.t
	}
	one, onePrice := s.holding(ps, types, slots, perNode, pending)
	if one < 0 || one == best.t {
		return best.t
	}
	saved := s.holdPromises()
	defer s.restorePromises(saved)
	// Every pending pod counts as free to take, c's own included; the
	// fills below record what they take as promised.
	s.unpromise(c, c.promised)
	none := &class{}
	free := s.scratch()
	copy(free, ps.allocD[one])
	if s.fill(none, ps, one, 0, free, value); ps.allocD[one][resPods]-free[resPods] < pending[resPods] {
		return best.t // compatibility or per-node limits keep pods off it
	}
	if s.opts.Replacing {
		return one
	}
	// The pods would go on claims of their own classes, which may fit
	// types c's pods do not.
	s.altCands = s.rank(s.altCands[:0], ps, ps.types, slots, perNode, value)
	alt, left := 0.0, pending[resPods]
	for n := 0; left > 0 && alt < onePrice; n++ {
		pick, pickRatio := -1, 0.0
		for _, cd := range s.altCands {
			copy(free, ps.allocD[cd.t])
			if r := s.fill(none, ps, cd.t, 0, free, value) / cd.price; r > pickRatio {
				pick, pickRatio = cd.t, r
			}
		}
		if pick < 0 || n == finishNodes {
			return best.t
		}
		copy(free, ps.allocD[pick])
		s.promise = true
		s.fill(none, ps, pick, 0, free, value)
		s.promise = false
		used := s.pendBufR
		for r := range used {
			used[r] = ps.allocD[pick][r] - free[r]
		}
		// The claim lists cheaper types holding the same pods first.
		_, p := s.holding(ps, ps.types, slots, perNode, used)
		alt += p
		left -= used[resPods]
	}
	if onePrice <= alt {
		return one
	}
	return best.t
}

// holdPromises saves every class's promised pods, for restorePromises.
func (s *solver) holdPromises() []int {
	out := make([]int, len(s.order))
	for i, o := range s.order {
		out[i] = o.promised
	}
	s.pendBufU = append(s.pendBufU[:0], s.promisedReq...)
	return out
}

func (s *solver) restorePromises(saved []int) {
	for i, o := range s.order {
		o.promised = saved[i]
	}
	copy(s.promisedReq, s.pendBufU)
}

// holding returns the type of types with the lowest nodePrice whose one
// node holds need, and that price; -1 and +Inf when none does.
func (s *solver) holding(ps *poolState, types bitset, slots uint64, perNode float64, need []int64) (int, float64) {
	one, price := -1, math.Inf(1)
	types.each(func(t int) {
		if p := s.nodePrice(t, slots, perNode); p < price && covers(ps.allocD[t], need) {
			one, price = t, p
		}
	})
	return one, price
}

// unpromise releases d of c's promised pods (placed or no longer expected).
func (s *solver) unpromise(c *class, d int) {
	c.promised -= d
	for r, q := range c.req {
		s.promisedReq[r] -= int64(d) * q
	}
}

// hostCohort lists the classes whose pending pods must share the node c's
// pods land on when they are the first to match a hostname affinity term
// (see seededBy): every class carrying such a term that selects c, c
// included. Nil when c seeds no hostname affinity term.
func (s *solver) hostCohort(c *class) []*class {
	if !c.seedsHost() {
		return nil
	}
	var out []*class
	for _, g := range c.selectedBy {
		if g.kind != kindAffinity || !g.hostname || !g.seededBy(c) {
			continue
		}
		for _, o := range s.carriers[g] {
			if len(o.pods) > 0 && slices.Contains(o.actAff, g) && !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	return out
}

// seedsHost reports whether c's pods would be the first to match one of
// their own hostname affinity terms.
func (c *class) seedsHost() bool {
	for _, g := range c.actAff {
		if g.hostname && g.seededBy(c) {
			return true
		}
	}
	return false
}

// hostCarriers indexes the classes carrying each hostname affinity group
// (required or preferred), for hostCohort.
func hostCarriers(classes []*class) map[*topoGroup][]*class {
	out := map[*topoGroup][]*class{}
	for _, c := range classes {
		for _, list := range [][]*topoGroup{c.affinity, c.prefAffinity} {
			for _, g := range list {
				if g.hostname {
					out[g] = append(out[g], c)
				}
			}
		}
	}
	return out
}

// cohortNeed sums the requests of the pending pods of cohort whose class
// fits (nil: all).
func cohortNeed(cohort []*class, fits func(o *class) bool) []int64 {
	need := make([]int64, len(cohort[0].req))
	for _, o := range cohort {
		if fits != nil && !fits(o) {
			continue
		}
		for i, q := range o.req {
			need[i] += int64(len(o.pods)) * q
		}
	}
	return need
}

// cohortTypes narrows types to those that hold all of c's host cohort (the
// members that can run on the type), so the claim c opens is sized for the
// pods that must join it rather than for c alone: under NodePool limits a
// claim cannot outgrow its sized type. Types is returned unchanged when c
// has no cohort or no type holds it all.
func (s *solver) cohortTypes(c *class, ps *poolState, types bitset) bitset {
	cohort := s.hostCohort(c)
	if cohort == nil {
		return types
	}
	held := newBitset(len(s.cat.types))
	types.each(func(t int) {
		need := cohortNeed(cohort, func(o *class) bool { return o == c || s.classFits(o, ps, t) })
		if fitsOne(ps.allocD[t], need) {
			held.set(t)
		}
	})
	if held.empty() {
		return types
	}
	return held
}

// holdsCohort reports whether b has room for need as it stands. Pods that
// seed a hostname affinity term bind the pods following them to their
// node, so they go only where all of those fit: a claim grown for them
// could exceed its NodePool's limits or be dearer than one sized for them.
func (s *solver) holdsCohort(b *bin, need []int64) bool {
	if b.kind != TargetNewClaim {
		return fitsOne(b.free, need)
	}
	return fitsIn(b.used, need, b.pool.allocD[b.target])
}

// promiseFill records the simulated fill of b, a claim just opened and
// given pods of c, so later sizing does not count the same pods twice. For
// plain classes the fill is of the room left on b; pods with topology are
// promised a fresh node's fill, as their sizing has always assumed.
func (s *solver) promiseFill(c *class, b *bin, perClaim int) {
	free := s.scratch()
	copy(free, b.pool.allocD[b.target])
	if s.plainClass(c) {
		for r := range free {
			free[r] -= b.used[r]
		}
	}
	s.promise = true
	s.fill(c, b.pool, b.target, perClaim, free, func([]int64) float64 { return 0 })
	s.promise = false
}

// simulateFill estimates the value of the pods a fresh node of type t would
// end up holding. Pods already expected to fill earlier claims (promised)
// are not counted again; with s.promise set the fill is recorded as the
// chosen claim's promise.
func (s *solver) simulateFill(c *class, ps *poolState, t, perClaim int, free []int64, value func([]int64) float64) float64 {
	copy(free, ps.allocD[t])
	return s.fill(c, ps, t, perClaim, free, value)
}

// fill is simulateFill from the room free.
func (s *solver) fill(c *class, ps *poolState, t, perClaim int, free []int64, value func([]int64) float64) float64 {
	total := s.take(c, c, free, perClaim, value)
	for ri := range s.runs {
		// Once no class's smallest request fits, nothing more will.
		if free[resPods] < 1 || free[resCPU] < s.minReq[resCPU] || free[resMemory] < s.minReq[resMemory] {
			break
		}
		r := &s.runs[ri]
		if !fitsOne(free, r.req) {
			continue
		}
		live := r.classes[:0]
		for i, o := range r.classes {
			if len(o.pods) == 0 {
				continue
			}
			live = append(live, o)
			if o == c || len(o.pods) <= o.promised || !s.classFits(o, ps, t) {
				continue
			}
			total += s.take(c, o, free, o.freshCap, value)
			if !fitsOne(free, r.req) {
				live = append(live, r.classes[i+1:]...)
				break
			}
		}
		// Placed classes drop out of their run for good: pods are never
		// returned to a class.
		r.classes = live
	}
	return total
}

// take fills free with up to limit pods of o in a fill simulation for c and
// returns their value.
func (s *solver) take(c, o *class, free []int64, limit int, value func([]int64) float64) float64 {
	avail := len(o.pods)
	if o != c {
		avail -= o.promised
	}
	k := fitUpTo(free, o.req, min(avail, limit))
	if k <= 0 {
		return 0
	}
	for i, q := range o.req {
		free[i] -= int64(k) * q
	}
	if s.promise && o != c {
		o.promised += k
		for r, q := range o.req {
			s.promisedReq[r] += int64(k) * q
		}
	}
	// A small per-pod credit breaks ties towards holding more pods.
	return float64(k) * (value(o.req) + fillCredit)
}

// classRun is a maximal stretch of the queue order whose classes request the
// same resources: once a node cannot fit one of them, it fits none.
type classRun struct {
	req     []int64
	classes []*class
}

// buildRuns splits the queue order into runs of equal requests, so a fill
// simulation skips a whole run with one check instead of visiting every
// class: with many small classes that is what keeps sizing linear.
func buildRuns(order []*class) []classRun {
	var runs []classRun
	for _, c := range order {
		if n := len(runs); n > 0 && slices.Equal(runs[n-1].req, c.req) {
			runs[n-1].classes = append(runs[n-1].classes, c)
			continue
		}
		runs = append(runs, classRun{req: c.req, classes: []*class{c}})
	}
	return runs
}

// classFits reports whether pods of o could go on a node of type t from ps.
func (s *solver) classFits(o *class, ps *poolState, t int) bool {
	if o.poolKnown == nil || !o.poolKnown[ps.index] {
		s.learnPoolTypes(o, ps)
	}
	bs := o.poolTypes[ps.index]
	return bs != nil && bs.has(t)
}

// learnPoolTypes caches which of ps's types can run pods of o.
func (s *solver) learnPoolTypes(o *class, ps *poolState) {
	if o.poolTypes == nil {
		o.poolTypes = make([]bitset, len(s.pools))
		o.poolKnown = make([]bool, len(s.pools))
	}
	o.poolKnown[ps.index] = true
	if o.tolerates(ps.pool.Taints) == nil {
		if nr := s.table.combine(ps.reqID, o.reqID); nr >= 0 {
			o.poolTypes[ps.index] = s.cat.compile(nr, s.table.sets[nr]).types
		}
	}
}
