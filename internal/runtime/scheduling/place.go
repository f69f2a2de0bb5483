package scheduling

import (
	"errors"
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
)

// placeClass places as many pods of c as the constraints allow and returns
// how many it placed. Classes whose zone-like topology decides a domain per
// pod (spread on a non-hostname key, zonal self anti-affinity) are placed one
// pod at a time against per-domain cursors; all others in one bulk pass.
func (s *solver) placeClass(c *class) int {
	before := len(c.pods)
	perDomain := s.perDomainGroups(c)
	if len(perDomain) == 0 {
		extra, err := s.topoReqs(c, nil)
		if err != nil {
			c.lastErr = err
			return 0
		}
		p := s.newPlacer(c, extra)
		p.place(len(c.pods))
		if len(c.pods) > 0 {
			c.lastErr = p.err()
		}
		return before - len(c.pods)
	}
	// Pods go one at a time, but a new claim in a domain is sized for the
	// domain's share of the class: the pods that follow land on it. Sized
	// for one pod, every claim would hold one.
	share := len(c.pods)
	for _, g := range perDomain {
		if g.kind == kindAnti {
			share = 1
		} else if d := len(g.eligible); d > 0 {
			share = min(share, (len(c.pods)+d-1)/d)
		}
	}
	placers := map[string]*placer{}
	failed := map[*topoGroup]map[string]bool{}
	for len(c.pods) > 0 {
		choice, err := s.domainChoice(c, perDomain, failed)
		if err != nil {
			c.lastErr = err
			break
		}
		extra, err := s.topoReqs(c, choice)
		if err != nil {
			c.lastErr = err
			break
		}
		key := extra.String()
		p := placers[key]
		if p == nil {
			p = s.newPlacer(c, extra)
			p.sizeFor = share
			placers[key] = p
		}
		if p.place(1) == 0 {
			c.lastErr = p.err()
			for g, d := range choice {
				if failed[g] == nil {
					failed[g] = map[string]bool{}
				}
				failed[g][d] = true
			}
		}
	}
	return before - len(c.pods)
}

// active returns the topology groups c must currently satisfy (computed by
// prepareClass whenever the constraints change).
func (c *class) active() (aff, anti, spread []*topoGroup) {
	return c.actAff, c.actAnti, c.actSpread
}

func (c *class) computeActive() {
	c.actAff = append(append([]*topoGroup(nil), c.affinity...), c.prefAffinity...)
	c.actAnti = append(append([]*topoGroup(nil), c.anti...), c.prefAnti...)
	c.actSpread = append(append([]*topoGroup(nil), c.spreads...), c.softSpreads...)
	c.hostTopo = false
	for _, list := range [][]*topoGroup{c.actAff, c.actAnti, c.actSpread} {
		for _, g := range list {
			c.hostTopo = c.hostTopo || g.hostname
		}
	}
}

func (s *solver) perDomainGroups(c *class) []*topoGroup {
	var out []*topoGroup
	_, anti, spread := c.active()
	for _, g := range spread {
		if !g.hostname {
			out = append(out, g)
		}
	}
	for _, g := range anti {
		if !g.hostname && g.self(c) {
			if g.eligible == nil {
				g.eligible, g.minKnown = s.eligibleDomains(g), false
			}
			out = append(out, g)
		}
	}
	return out
}

// domainChoice picks, per spread group, the least-populated candidate
// domain that keeps skew within maxSkew, and per self anti-affinity group a
// domain without matching pods.
func (s *solver) domainChoice(c *class, groups []*topoGroup, failed map[*topoGroup]map[string]bool) (map[*topoGroup]string, error) {
	strict := s.table.sets[c.reqID]
	out := map[*topoGroup]string{}
	for _, g := range groups {
		best, bestCount := "", math.MaxInt
		if g.kind == kindAnti {
			for _, d := range g.eligible {
				if g.counts[d] == 0 && g.everywhere == 0 && strict.Get(g.key).Has(d) && !failed[g][d] && s.heldOpen(c, g.key, d) {
					best = d
					break
				}
			}
			if best == "" {
				return nil, fmt.Errorf("pod anti-affinity on %s: every domain already has a matching pod or no capacity (%s)", g.key, g.selector)
			}
			out[g] = best
			continue
		}
		inc := 0
		if g.self(c) {
			inc = 1
		}
		lo := g.spreadMin()
		for _, d := range g.eligible {
			n := g.counts[d]
			if n+inc-lo > g.maxSkew || failed[g][d] || !strict.Get(g.key).Has(d) || !s.heldOpen(c, g.key, d) {
				continue
			}
			if n < bestCount {
				best, bestCount = d, n
			}
		}
		if best == "" {
			return nil, fmt.Errorf("topology spread on %s (maxSkew %d) cannot be satisfied in domains %v (counts %v)", g.key, g.maxSkew, g.eligible, countsOf(g))
		}
		out[g] = best
	}
	return out, nil
}

func countsOf(g *topoGroup) []int {
	out := make([]int, len(g.eligible))
	for i, d := range g.eligible {
		out[i] = g.counts[d]
	}
	return out
}

// topoReqs turns the non-hostname topology terms of c into node
// requirements for this placement: affinity -> In domains with matching
// pods; anti-affinity and inverse anti-affinity -> NotIn occupied domains;
// chosen spread/anti domains -> In that domain.
func (s *solver) topoReqs(c *class, choice map[*topoGroup]string) (requirements.Requirements, error) {
	out := requirements.Requirements{}
	aff, anti, _ := c.active()
	for _, g := range aff {
		if g.hostname {
			continue
		}
		var allowed []string
		for d, n := range g.counts {
			if n > 0 {
				allowed = append(allowed, d)
			}
		}
		if len(allowed) == 0 {
			if !g.seededBy(c) {
				return nil, fmt.Errorf("pod affinity on %s: no pod matching %s runs in any domain yet", g.key, g.selector)
			}
			d := s.bootstrapDomain(c, g)
			if d == "" {
				return nil, fmt.Errorf("pod affinity on %s: no domain is available to the pod", g.key)
			}
			allowed = []string{d}
		}
		out.Add(requirements.New(g.key, corev1.NodeSelectorOpIn, allowed...))
	}
	for _, g := range anti {
		if g.hostname || choice[g] != "" {
			continue
		}
		if g.everywhere > 0 {
			return nil, fmt.Errorf("pod anti-affinity on %s: a matching pod may be in every domain", g.key)
		}
		out.Add(requirements.New(g.key, corev1.NodeSelectorOpNotIn, occupied(g.counts)...))
	}
	for _, g := range s.inverse[c] {
		if g.hostname {
			continue
		}
		out.Add(requirements.New(g.key, corev1.NodeSelectorOpNotIn, occupied(g.owners)...))
	}
	for g, d := range choice {
		out.Add(requirements.New(g.key, corev1.NodeSelectorOpIn, d))
	}
	return out, nil
}

func occupied(m map[string]int) []string {
	var out []string
	for d, n := range m {
		if n > 0 {
			out = append(out, d)
		}
	}
	return out
}

func (s *solver) bootstrapDomain(c *class, g *topoGroup) string {
	if g.eligible == nil {
		g.eligible, g.minKnown = s.eligibleDomains(g), false
	}
	strict := s.table.sets[c.reqID]
	for _, d := range g.eligible {
		if strict.Get(g.key).Has(d) {
			return d
		}
	}
	return ""
}

// placer places pods of one class under one set of extra requirements,
// scanning bins first-fit with a cursor: a bin that could not take more pods
// of this class never can later, since bins only fill up.
type placer struct {
	s       *solver
	c       *class
	reqID   int
	cursor  int
	reasons []string
	// sizeFor is how many pods of the class a new claim is sized for when
	// more will follow than place is asked for at once.
	sizeFor int
	rooms   *roomIndex
}

func (s *solver) newPlacer(c *class, extra requirements.Requirements) *placer {
	id := c.reqID
	if len(extra) > 0 {
		id = s.table.intern(s.table.sets[c.reqID].Intersect(extra))
	}
	return &placer{s: s, c: c, reqID: id, rooms: s.roomsFor(c, id)}
}

func (p *placer) err() error {
	if len(p.reasons) == 0 {
		return errors.New("no existing node or in-flight claim has room and no NodePool is configured")
	}
	return fmt.Errorf("no existing capacity fits and no NodePool can launch a node: %s", joinReasons(p.reasons))
}

func (p *placer) place(n int) int {
	s := p.s
	placed := 0
	// Classes that may make a claim outgrow its type do not trust the
	// room index's ceilings.
	indexed := !p.c.sharesHost()
	// Pods seeding a hostname affinity term take only a bin with room for
	// the pods that must follow them (see holdsCohort).
	var seed []int64
	if cohort := s.hostCohort(p.c); cohort != nil {
		seed = cohortNeed(cohort, nil)
	}
	for placed < n {
		for p.cursor < len(s.bins) {
			if indexed {
				if p.cursor = p.rooms.next(p.cursor, p.c.req); p.cursor >= len(s.bins) {
					break
				}
			}
			b := s.bins[p.cursor]
			if seed != nil && !s.holdsCohort(b, seed) {
				p.cursor++
				continue
			}
			k, st := s.admit(p.c, b, p.reqID, n-placed)
			if k > 0 {
				s.commit(p.c, b, k, st)
				seed = nil
				placed += k
				if placed == n {
					return placed
				}
			}
			p.cursor++
		}
		k, reasons := s.openClaim(p.c, p.reqID, n-placed, max(n-placed, p.sizeFor))
		if k == 0 {
			p.reasons = reasons
			return placed
		}
		placed += k
	}
	return placed
}

// admitState carries a claim's narrowed state from admit to commit.
type admitState struct {
	reqID  int
	types  bitset
	target int
}

// admit returns how many of n pods of c fit on b.
func (s *solver) admit(c *class, b *bin, reqID, n int) (int, admitState) {
	st := admitState{reqID: -1}
	if len(c.ports) > 0 {
		if portsConflict(b.ports, c.ports) {
			return 0, st
		}
		n = 1
	}
	if n = min(n, s.hostnameCap(c, b)); n <= 0 {
		return 0, st
	}
	if b.kind != TargetNewClaim {
		key := [2]int{reqID, b.index}
		ok, seen := s.matches[key]
		if !seen {
			ok = s.table.sets[reqID].MatchesLabels(b.node.Labels)
			s.matches[key] = ok
		}
		if !ok || c.tolerates(b.taints) != nil {
			return 0, st
		}
		return min(n, fitCount(b.free, c.req), s.spreadCap(c, b, -1)), st
	}
	if c.tolerates(b.pool.pool.Taints) != nil {
		return 0, st
	}
	nr := s.table.combine(b.reqID, reqID)
	if nr < 0 || (b.reservation != "" && nr != b.reqID) {
		// A reserved claim keeps the type, zone and requirements its
		// reservation was taken for.
		return 0, st
	}
	if n = min(n, s.spreadCap(c, b, nr)); n <= 0 {
		return 0, st
	}
	narrow := s.cat.compile(nr, s.table.sets[nr]).types
	free := s.scratch()
	k := 0
	keepsTarget := b.types.has(b.target) && narrow.has(b.target)
	if keepsTarget {
		// Most refusals end here: the sized type is full and the claim
		// may not grow; no need to build the narrowed type set.
		if k = s.claimFit(b, b.target, c, free); k == 0 && !s.mustGrow(c, b) {
			return 0, st
		}
	}
	st.reqID, st.types, st.target = nr, b.types, b.target
	if nr != b.reqID {
		st.types = b.types.and(narrow)
	}
	if len(c.ports) > 0 {
		// A DaemonSet's host port counts where its pod would run: on any
		// type the claim may still launch as.
		if blocked := b.pool.daemonPortTypes(c.ports); blocked != nil && !st.types.and(blocked).empty() {
			return 0, st
		}
	}
	if !keepsTarget {
		// The narrowed requirements exclude the sized type; allow another
		// type no pricier than it.
		slots := s.cat.compile(nr, s.table.sets[nr]).slots
		limit := s.cat.cheapest(b.target, s.cat.compile(b.reqID, s.table.sets[b.reqID]).slots)
		st.target = -1
		st.types.each(func(t int) {
			if s.cat.cheapest(t, slots) > limit {
				return
			}
			if f := s.claimFit(b, t, c, free); f > k {
				k, st.target = f, t
			}
		})
	}
	if k < n && st.target >= 0 && b.reservation == "" && s.mustGrow(c, b) {
		k, st.target = s.grow(b, st, c, n, k)
	}
	k = min(k, n)
	if k > 0 && len(b.pool.minValues) > 0 && !b.relaxedMV {
		k = s.minValuesFit(b, st.types, c, k)
	}
	return k, st
}

// mustGrow reports whether a claim may outgrow the type it was sized for:
// when its NodePool cannot open another node, or when the pods must share
// this very node (hostname affinity). Otherwise pods go to a new claim sized
// for them, which keeps claims cost-efficient.
func (s *solver) mustGrow(c *class, b *bin) bool {
	if b.pool.nodesLeft <= 0 {
		return true
	}
	for _, r := range b.pool.limited {
		if b.pool.remaining[r] < s.cat.capv[b.target][r] {
			return true
		}
	}
	return c.sharesHost()
}

// sharesHost reports whether c has hostname-keyed pod affinity: its pods
// must share a node with matching pods.
func (c *class) sharesHost() bool {
	for _, g := range c.actAff {
		if g.hostname {
			return true
		}
	}
	return false
}

// grow picks the cheapest type of the claim that holds all n pods, or else
// the one holding the most, within what the NodePool limits still allow.
func (s *solver) grow(b *bin, st admitState, c *class, n, k int) (int, int) {
	slots := s.cat.compile(st.reqID, s.table.sets[st.reqID]).slots
	free := s.scratch()
	best, bestK, bestPrice := st.target, k, s.cat.cheapest(st.target, slots)
	st.types.each(func(t int) {
		for _, r := range b.pool.limited {
			if s.cat.capv[t][r]-s.cat.capv[b.target][r] > b.pool.remaining[r] {
				return
			}
		}
		f := min(s.claimFit(b, t, c, free), n)
		p := s.cat.cheapest(t, slots)
		if f > bestK || (f == bestK && f > k && p < bestPrice) {
			best, bestK, bestPrice = t, f, p
		}
	})
	return bestK, best
}

func (s *solver) claimFit(b *bin, t int, c *class, scratch []int64) int {
	a := b.pool.allocD[t]
	for i := range scratch {
		// A type that cannot hold what the claim already has (say, fewer
		// GPUs) is no option, whatever the new pods request.
		if scratch[i] = a[i] - b.used[i]; scratch[i] < 0 {
			return 0
		}
	}
	return fitCount(scratch, c.req)
}

// minValuesFit is the largest k' <= k for which the instance types that
// still fit keep enough distinct values for every minValues requirement.
func (s *solver) minValuesFit(b *bin, types bitset, c *class, k int) int {
	ok := func(k int) bool {
		need := make([]int64, len(b.used))
		for i := range need {
			need[i] = b.used[i] + int64(k)*c.req[i]
		}
		var fit []int
		types.each(func(t int) {
			if fitsIn(need, make([]int64, len(need)), b.pool.allocD[t]) {
				fit = append(fit, t)
			}
		})
		key, _, _ := s.minValuesShort(b.pool, fit)
		return key == ""
	}
	if ok(k) {
		return k
	}
	lo, hi := 0, k
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// hostnameCap applies hostname-keyed topology: spread allows maxSkew
// matching pods per node (new nodes make the global minimum 0), affinity
// requires a matching pod already on the node (or bootstraps the first),
// anti-affinity forbids nodes with matching pods and, for self-matching
// terms, allows one pod per node; inverse anti-affinity forbids nodes
// running a pod whose term selects c.
func (s *solver) hostnameCap(c *class, b *bin) int {
	limit := math.MaxInt
	if !c.hostTopo && !c.hostInverse {
		return limit
	}
	aff, anti, spread := c.active()
	for _, g := range spread {
		if !g.hostname {
			continue
		}
		n := g.counts[b.name]
		if g.self(c) {
			limit = min(limit, g.maxSkew-n)
		} else if n > g.maxSkew {
			return 0
		}
	}
	for _, g := range aff {
		if g.hostname && g.counts[b.name] == 0 && !g.seededBy(c) {
			return 0
		}
	}
	for _, g := range anti {
		if !g.hostname {
			continue
		}
		if g.counts[b.name] > 0 {
			return 0
		}
		if g.self(c) {
			limit = min(limit, 1)
		}
	}
	for _, g := range s.inverse[c] {
		if g.hostname && g.owners[b.name] > 0 {
			return 0
		}
	}
	return limit
}

// commit places k pods of c on b.
func (s *solver) commit(c *class, b *bin, k int, st admitState) {
	pods := c.pods[:k]
	c.pods = c.pods[k:]
	s.unpromise(c, min(c.promised, k))
	for i, q := range c.req {
		s.remaining[i] -= int64(k) * q
	}
	oldTarget, oldReq := b.target, b.reqID
	if b.kind == TargetNewClaim {
		if st.target != b.target {
			// The reservation only ever grows: options larger than the new
			// type may remain on the claim.
			for _, r := range b.pool.limited {
				if d := s.cat.capv[st.target][r] - s.cat.capv[b.target][r]; d > 0 {
					b.pool.remaining[r] -= d
				}
			}
			b.target = st.target
		}
		if st.reqID != b.reqID {
			old := b.reqID
			b.reqID, b.types = st.reqID, st.types
			s.narrowed(b, old)
		}
		for i, q := range c.req {
			b.used[i] += int64(k) * q
		}
	} else {
		for i, q := range c.req {
			b.free[i] -= int64(k) * q
		}
	}
	b.ports = append(b.ports, c.ports...)
	var relaxed []string
	if len(c.relaxed) > 0 {
		relaxed = append(relaxed, c.relaxed...)
	}
	for _, p := range pods {
		b.pods = append(b.pods, p)
		pl := Placement{Pod: p, Kind: b.kind, Relaxed: relaxed}
		if b.kind == TargetNewClaim {
			pl.Claim = b.claimIdx
		} else {
			pl.Node = b.name
		}
		s.plan.Placements = append(s.plan.Placements, pl)
	}
	for _, g := range c.selectedBy {
		s.countSelected(g, b, k)
	}
	for _, g := range c.requiredAntis {
		s.countOwner(g, b, k)
	}
	s.anchor(c, b, k)
	if b.kind == TargetNewClaim && (st.target != oldTarget || st.reqID != oldReq) {
		s.claimCeiling(b)
	}
	s.indexRoom(b)
	if n := len(b.placed); n > 0 && b.placed[n-1].c == c {
		b.placed[n-1].n += k
	} else {
		b.placed = append(b.placed, classCount{c, k})
	}
}

// domainOf is the value of key for pods on b: decided when exactly one
// value is possible; otherwise the possible values (all=true when
// unknown).
func (s *solver) domainOf(b *bin, key string) (val string, decided bool, possible []string, all bool) {
	if key == labelHostname {
		return b.name, true, nil, false
	}
	if b.kind != TargetNewClaim {
		v, ok := b.node.Labels[key]
		return v, ok, nil, false
	}
	r := s.table.sets[b.reqID].Get(key)
	if r.Operator() == corev1.NodeSelectorOpIn {
		vals := r.Values()
		if len(vals) == 1 {
			return vals[0], true, nil, false
		}
		return "", false, vals, false
	}
	var universe []string
	switch key {
	case labelZone:
		universe = s.cat.zones
	case labelCapacityType:
		universe = s.cat.cts
	default:
		return "", false, nil, true
	}
	for _, v := range universe {
		if r.Has(v) {
			possible = append(possible, v)
		}
	}
	return "", false, possible, false
}

// countSelected records k pods matched by g on b. Spread and affinity only
// count pods whose domain is decided (a claim narrowed later is counted
// then); anti-affinity counts them in every possible domain.
func (s *solver) countSelected(g *topoGroup, b *bin, k int) {
	v, decided, possible, all := s.domainOf(b, g.key)
	switch {
	case decided:
		s.addCount(g, v, k)
		g.total += k
	case g.kind == kindAnti:
		for _, d := range possible {
			s.addCount(g, d, k)
		}
		if all {
			g.everywhere += k
		}
	}
}

func (s *solver) countOwner(g *topoGroup, b *bin, k int) {
	v, decided, possible, _ := s.domainOf(b, g.key)
	if decided {
		g.owners[v] += k
		return
	}
	for _, d := range possible {
		g.owners[d] += k
	}
}

// narrowed counts earlier pods of b into spread/affinity groups whose key
// just became decided on b.
func (s *solver) narrowed(b *bin, oldReq int) {
	for _, key := range s.topoKeys {
		before := s.table.sets[oldReq].Get(key)
		if before.Operator() == corev1.NodeSelectorOpIn && before.Len() == 1 {
			continue
		}
		v, decided, _, _ := s.domainOf(b, key)
		if !decided {
			continue
		}
		for _, pc := range b.placed {
			for _, g := range pc.c.selectedBy {
				if g.key == key && g.kind != kindAnti {
					s.addCount(g, v, pc.n)
					g.total += pc.n
				}
			}
		}
	}
}

func resourceSummary(s *solver, v []int64) string {
	var parts []string
	l := s.res.list(v)
	for _, name := range s.res.names {
		if q, ok := l[name]; ok && name != corev1.ResourcePods {
			parts = append(parts, fmt.Sprintf("%s=%s", name, q.String()))
		}
	}
	return strings.Join(parts, ", ")
}
