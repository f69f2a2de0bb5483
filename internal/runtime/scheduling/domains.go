package scheduling

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
)

// buildTopology counts already-running pods into every group and registers
// their required anti-affinity terms.
func (s *solver) buildTopology(classes []*class) {
	// Running pods are grouped by namespace and labels, which is all a
	// selector looks at, so each group tests each distinct label set once.
	type labelSet struct {
		ns     string
		labels map[string]string
		bins   []*bin // one entry per pod
	}
	for _, bn := range s.bins {
		for _, p := range bn.node.Pods {
			for _, g := range s.topo.existingAnti(p) {
				s.countOwner(g, bn, 1)
			}
		}
	}
	if len(s.topo.list) == 0 {
		// No spread or affinity anywhere: nothing counts running pods (a
		// disruption pass's simulations, as a rule).
		s.topoKeys = nil
		return
	}
	sets := map[string]*labelSet{}
	var order []*labelSet
	var b strings.Builder
	for _, bn := range s.bins {
		for _, p := range bn.node.Pods {
			b.Reset()
			b.WriteString(p.Namespace)
			b.WriteByte('|')
			writeMap(&b, p.Labels)
			ls := sets[b.String()]
			if ls == nil {
				ls = &labelSet{ns: p.Namespace, labels: p.Labels}
				sets[b.String()] = ls
				order = append(order, ls)
			}
			ls.bins = append(ls.bins, bn)
		}
	}
	keys := map[string]bool{}
	for _, g := range s.topo.list {
		if g.kind == kindSpread && !g.hostname {
			g.eligible, g.minKnown = s.eligibleDomains(g), false
		}
		if !g.hostname && g.kind != kindAnti {
			keys[g.key] = true
		}
		for _, ls := range order {
			if !g.selects(ls.ns, ls.labels) {
				continue
			}
			for _, bn := range ls.bins {
				if s.passesFilter(g, bn) {
					s.countSelected(g, bn, 1)
				}
			}
		}
	}
	s.topoKeys = sortedKeys(keys)
	for _, c := range classes {
		for _, g := range s.topo.list {
			if !g.selects(c.ns, c.labels) {
				continue
			}
			c.selectedBy = append(c.selectedBy, g)
			if g.kind == kindSpread && g.hard {
				c.heldBy = append(c.heldBy, g)
			}
			if g.kind == kindAnti {
				s.inverse[c] = append(s.inverse[c], g)
				c.hostInverse = c.hostInverse || g.hostname
			}
		}
	}
}

// passesFilter applies a spread group's nodeAffinityPolicy and
// nodeTaintsPolicy to an existing node.
func (s *solver) passesFilter(g *topoGroup, b *bin) bool {
	if g.kind != kindSpread || b.node == nil {
		return true
	}
	if g.filterReqs != nil && !g.filterReqs.MatchesLabels(b.node.Labels) {
		return false
	}
	if g.filterTaint != nil && g.filterTaint.tolerates(onlyHard(b.taints)) != nil {
		return false
	}
	return true
}

func onlyHard(taints []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Effect != corev1.TaintEffectPreferNoSchedule {
			out = append(out, t)
		}
	}
	return out
}

// eligibleDomains are the values of a spread group's key that a pod could
// land in: what NodePools (and their instance offerings) can provide plus
// what existing nodes carry, filtered by the group's node policies.
func (s *solver) eligibleDomains(g *topoGroup) []string {
	set := map[string]bool{}
	for _, ps := range s.pools {
		if g.filterTaint != nil && g.filterTaint.tolerates(onlyHard(ps.pool.Taints)) != nil {
			continue
		}
		reqs := ps.reqs
		if g.filterReqs != nil {
			if !reqs.IsCompatible(g.filterReqs, s.opts.WellKnownLabels) {
				continue
			}
			reqs = reqs.Intersect(g.filterReqs)
		}
		for _, v := range s.poolDomains(ps, reqs, g.key) {
			set[v] = true
		}
	}
	for _, b := range s.bins {
		if b.node == nil {
			continue
		}
		if v, ok := b.node.Labels[g.key]; ok && s.passesFilter(g, b) {
			set[v] = true
		}
	}
	return sortedKeys(set)
}

func (s *solver) poolDomains(ps *poolState, reqs requirements.Requirements, key string) []string {
	r := reqs.Get(key)
	var out []string
	switch key {
	case labelZone, labelCapacityType:
		id := s.table.intern(reqs)
		cr := s.cat.compile(id, reqs)
		types := cr.types.and(ps.types)
		var slots uint64
		types.each(func(i int) { slots |= s.cat.offer[i] & cr.slots })
		for zi, z := range s.cat.zones {
			for ci, ct := range s.cat.cts {
				if slots&(1<<(zi*len(s.cat.cts)+ci)) == 0 {
					continue
				}
				if key == labelZone {
					out = append(out, z)
				} else {
					out = append(out, ct)
				}
			}
		}
	default:
		if r.Operator() == corev1.NodeSelectorOpIn {
			out = r.Values()
		} else if li := s.cat.labels[key]; li != nil {
			for v := range li.values {
				if r.Has(v) {
					out = append(out, v)
				}
			}
		}
	}
	return out
}
