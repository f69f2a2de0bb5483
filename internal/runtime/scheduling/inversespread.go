package scheduling

import (
	"math"

	corev1 "k8s.io/api/core/v1"
)

// Inverse spread. kube-scheduler checks a pod's topology spread only when it
// binds that pod, and it binds a plan's pods in whatever order they reach
// it. A spread placed early holds only if the pods its selector matches that
// come later into its domain keep the skew: so a plan that must hold in any
// order bounds, for every DoNotSchedule spread already placed in a domain,
// how many more matching pods that domain takes (its count stays within
// maxSkew of the global minimum, which only grows as pods are placed).
// Spreads can lock each other out (a pod whose own spread needs the zones
// that another spread selecting it must avoid); such a class drops the
// bound as its last relaxation, so that it is placed as kube-scheduler
// would place it when bound last, rather than not at all.

// spreadCap is how many pods of c b can take without breaking a
// DoNotSchedule spread placed in b's domain, once b's requirements become
// newReq (claims; -1 for nodes). Pods on a claim whose domain newReq
// decides start counting there too.
func (s *solver) spreadCap(c *class, b *bin, newReq int) int {
	narrows := b.kind == TargetNewClaim && newReq >= 0 && newReq != b.reqID
	held := c.heldBy
	if c.looseHeld {
		held = nil
	}
	if len(held) == 0 && !narrows {
		return math.MaxInt
	}
	limit := math.MaxInt
	// check bounds c's pods by g in b's domain d, where pending pods of b
	// join g's count now.
	check := func(g *topoGroup, d string, pending int) {
		if g.anchored[d] == 0 && !carries(c, g) {
			return
		}
		have := g.counts[d] + pending
		lo := 0
		if g.self(c) {
			if !g.hostname {
				lo = g.spreadMin()
			}
			limit = min(limit, g.maxSkew+lo-have)
			return
		}
		if have <= g.maxSkew {
			return // within maxSkew of any minimum
		}
		if !g.hostname {
			lo = g.spreadMin()
		}
		if have-lo > g.maxSkew {
			limit = 0
		}
	}
	for _, g := range held {
		if d, decided, newly := s.domainUnder(b, newReq, g); decided && !newly {
			check(g, d, 0)
		}
	}
	if narrows {
		// The groups whose key newReq decides count b's pods from now on:
		// the pods already there (each group once) and c's own.
		pend := s.pendBuf[:0]
		note := func(g *topoGroup, n int) {
			for i := range pend {
				if pend[i].g == g {
					pend[i].n += n
					return
				}
			}
			pend = append(pend, groupCount{g, n})
		}
		for _, g := range held {
			note(g, 0)
		}
		for _, g := range c.spreads {
			note(g, 0)
		}
		for _, pc := range b.placed {
			for _, g := range pc.c.heldBy {
				// A relaxed class only answers for its own spreads.
				if !c.looseHeld || carries(c, g) {
					note(g, pc.n)
				}
			}
		}
		for _, p := range pend {
			d, _, newly := s.domainUnder(b, newReq, p.g)
			if !newly {
				continue
			}
			check(p.g, d, p.n)
			// b's own pods alone put the zone out of skew: no class can
			// narrow b to it until the group's minimum rises.
			if p.n > 0 && !c.looseHeld && p.g.key == labelZone && p.g.anchored[d] > 0 {
				if need := p.g.counts[d] + p.n - p.g.maxSkew; p.g.spreadMin() < need {
					s.blockZone(b, d, p.g, need)
				}
			}
		}
		s.pendBuf = pend
	}
	return max(limit, 0)
}

type groupCount struct {
	g *topoGroup
	n int
}

// heldOpen reports whether domain d of key can take one more pod of c as far
// as the spreads placed there that select c are concerned: a domain where
// one of them is at its skew is closed to c whatever bin it picks.
func (s *solver) heldOpen(c *class, key, d string) bool {
	if c.looseHeld {
		return true
	}
	for _, g := range c.heldBy {
		if g.key != key || g.anchored[d] == 0 {
			continue
		}
		lo := 0
		if !g.hostname {
			lo = g.spreadMin()
		}
		if g.counts[d]+1-lo > g.maxSkew {
			return false
		}
	}
	return true
}

func carries(c *class, g *topoGroup) bool {
	for _, h := range c.spreads {
		if h == g {
			return true
		}
	}
	return false
}

// domainUnder is b's value of key once its requirements are reqID (claims;
// -1 keeps them), and whether reqID is what decides it.
func (s *solver) domainUnder(b *bin, reqID int, g *topoGroup) (val string, decided, newly bool) {
	if g.hostname {
		return b.name, true, false
	}
	if b.kind != TargetNewClaim {
		v, ok := b.node.Labels[g.key]
		return v, ok, false
	}
	if v, ok := s.single(b.reqID, g); ok {
		return v, true, false
	}
	if reqID < 0 || reqID == b.reqID {
		return "", false, false
	}
	v, ok := s.single(reqID, g)
	return v, ok, ok
}

type singleKey struct{ id, keyID int }

type singleVal struct {
	v  string
	ok bool
}

// single is the one value requirement set id allows for g's key, if it
// allows exactly one; cached, since sets are immutable once interned.
func (s *solver) single(id int, g *topoGroup) (string, bool) {
	k := singleKey{id, g.keyID}
	if sv, ok := s.singles[k]; ok {
		return sv.v, sv.ok
	}
	var sv singleVal
	if r, ok := s.table.sets[id][g.key]; ok && r.Operator() == corev1.NodeSelectorOpIn && r.Len() == 1 {
		sv = singleVal{r.Values()[0], true}
	}
	s.singles[k] = sv
	return sv.v, sv.ok
}

// anchor records the DoNotSchedule spreads c's pods carry into b's domain.
func (s *solver) anchor(c *class, b *bin, k int) {
	for _, g := range c.spreads {
		if d, decided, _ := s.domainUnder(b, -1, g); decided {
			g.anchored[d] += k
		}
	}
}
