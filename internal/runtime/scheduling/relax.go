package scheduling

// relax drops one preference of c, in Karpenter's order, and names it; ""
// when nothing is left to relax. Volume topology alternatives and later
// required node-affinity terms are tried the same way.
func (s *solver) relax(c *class) string {
	switch {
	case len(c.volumeAlts) > 1:
		c.volumeAlts = c.volumeAlts[1:]
		return "volume topology alternative"
	case len(c.nodeTerms) > 1:
		c.nodeTerms = c.nodeTerms[1:]
		return "required node affinity term"
	case len(c.prefAffinity) > 0:
		c.prefAffinity = c.prefAffinity[1:]
		return "preferred pod affinity term"
	case len(c.prefAnti) > 0:
		c.prefAnti = c.prefAnti[1:]
		return "preferred pod anti-affinity term"
	case len(c.prefNode) > 0:
		c.prefNode = c.prefNode[1:]
		return "preferred node affinity term"
	case len(c.softSpreads) > 0:
		c.softSpreads = c.softSpreads[1:]
		return "ScheduleAnyway topology spread constraint"
	case s.hasPNS && !c.toleratePNS:
		c.toleratePNS = true
		return "PreferNoSchedule taints"
	}
	return ""
}

// loosenHeld is the relaxation of last resort, once a whole queue cycle made
// no progress: classes that other pods' spreads hold out of every domain
// they could use are placed regardless (see inversespread.go).
func (s *solver) loosenHeld(queue []*class) bool {
	loosened := false
	for _, c := range queue {
		if len(c.heldBy) > 0 && !c.looseHeld {
			c.looseHeld = true
			c.relaxed = append(c.relaxed, "binding-order independence of other pods' topology spread")
			loosened = true
		}
	}
	return loosened
}
