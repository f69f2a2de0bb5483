package scheduling

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
)

// openClaim opens new claims for up to n pods of c in the first NodePool
// (weight order) that can host them, and places pods on it; the claim is
// sized for sizeFor pods of c (at least n). It returns how many were placed
// and, when none, why each NodePool refused.
func (s *solver) openClaim(c *class, reqID, n, sizeFor int) (int, []string) {
	var reasons []string
	for _, ps := range s.pools {
		nr, types, relaxedMV, err := s.canOpen(c, ps, reqID)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("nodepool %q: %v", ps.pool.Name, err))
			continue
		}
		slots := s.cat.compile(nr, s.table.sets[nr]).slots
		perClaim := min(max(n, sizeFor), s.hostnameCap(c, &bin{name: "\x00new"}))
		if len(c.ports) > 0 {
			perClaim = 1
		}
		target := s.chooseTarget(c, ps, s.cohortTypes(c, ps, types), slots, perClaim)
		b := s.newClaimBin(ps, nr, types, target, relaxedMV)
		k, st := s.admit(c, b, reqID, n)
		if k == 0 {
			reasons = append(reasons, fmt.Sprintf("nodepool %q: a new node cannot hold the pod under its topology constraints", ps.pool.Name))
			continue
		}
		s.addClaim(b)
		s.commit(c, b, k, st)
		s.reserve(b)
		s.promiseFill(c, b, perClaim)
		return k, nil
	}
	return 0, reasons
}

// newClaimBin is a new claim of ps sized for target; addClaim commits to it.
func (s *solver) newClaimBin(ps *poolState, reqID int, types bitset, target int, relaxedMV bool) *bin {
	if len(ps.limited) > 0 {
		// Reserve the sized type's capacity against the limits and keep
		// only options no larger on any limited resource, so the
		// reservation stays an upper bound whichever option launches.
		kept := newBitset(len(s.cat.types))
		types.each(func(t int) {
			for _, r := range ps.limited {
				if s.cat.capv[t][r] > s.cat.capv[target][r] {
					return
				}
			}
			kept.set(t)
		})
		types = kept
	}
	return &bin{
		kind: TargetNewClaim, name: fmt.Sprintf("%s-claim-%d", ps.pool.Name, len(s.claims)), index: len(s.bins),
		claimIdx: len(s.claims), pool: ps, reqID: reqID, types: types, target: target,
		used: make([]int64, len(s.res.names)), relaxedMV: relaxedMV,
	}
}

// addClaim reserves b's sized type against its NodePool's limits and adds
// it to the plan's bins.
func (s *solver) addClaim(b *bin) {
	ps := b.pool
	for _, r := range ps.limited {
		ps.remaining[r] -= s.cat.capv[b.target][r]
	}
	ps.nodesLeft--
	s.bins = append(s.bins, b)
	s.claims = append(s.claims, b)
	s.claimCeiling(b)
	s.indexRoom(b)
}

// canOpen checks whether ps can launch a node for c and returns the
// claim's requirements and the instance types that can hold one pod.
func (s *solver) canOpen(c *class, ps *poolState, reqID int) (int, bitset, bool, error) {
	if ps.reqErr != nil {
		return 0, nil, false, fmt.Errorf("invalid requirements: %v", ps.reqErr)
	}
	if ps.nodesLeft <= 0 {
		return 0, nil, false, fmt.Errorf("limits.nodes reached")
	}
	if err := c.tolerates(ps.pool.Taints); err != nil {
		return 0, nil, false, err
	}
	nr := s.table.combine(ps.reqID, reqID)
	if nr < 0 {
		return 0, nil, false, fmt.Errorf("incompatible requirements: %v", ps.reqs.Compatible(s.table.sets[reqID], s.opts.WellKnownLabels))
	}
	if s.hostnameCap(c, &bin{name: "\x00new"}) <= 0 {
		return 0, nil, false, fmt.Errorf("pod affinity on %s needs a node that already runs a matching pod", labelHostname)
	}
	compat := s.cat.compile(nr, s.table.sets[nr]).types.and(ps.types)
	if compat.empty() {
		return 0, nil, false, fmt.Errorf("no instance type satisfies requirements %s with an available offering", s.table.sets[nr])
	}
	if len(c.ports) > 0 {
		// Only types a DaemonSet with a clashing port does not run on.
		if blocked := ps.daemonPortTypes(c.ports); blocked != nil {
			if compat.andInPlace(blocked.not(len(s.cat.types))); compat.empty() {
				return 0, nil, false, fmt.Errorf("host port conflicts with a daemonset on every compatible instance type")
			}
		}
	}
	types := newBitset(len(s.cat.types))
	anyFits, withinLimits := false, false
	compat.each(func(t int) {
		if !fitsOne(ps.allocD[t], c.req) {
			return
		}
		anyFits = true
		if !ps.withinLimits(s.cat.capv[t]) {
			return
		}
		withinLimits = true
		types.set(t)
	})
	switch {
	case !anyFits:
		return 0, nil, false, fmt.Errorf("no instance type has room for requests %s plus daemonset overhead", resourceSummary(s, c.req))
	case !withinLimits:
		return 0, nil, false, fmt.Errorf("limits exceeded: every fitting instance type would exceed the remaining limits")
	}
	relaxed := false
	if len(ps.minValues) > 0 {
		var list []int
		types.each(func(t int) { list = append(list, t) })
		if key, have, want := s.minValuesShort(ps, list); key != "" {
			if s.opts.MinValuesPolicy != MinValuesBestEffort {
				return 0, nil, false, minValuesError(key, have, want)
			}
			relaxed = true
		}
	}
	return nr, types, relaxed, nil
}

func minValuesError(key string, have, want int) error {
	return fmt.Errorf("minValues: requirement %s needs %d distinct values, the fitting instance types offer %d", key, want, have)
}

// minValuesShort returns the first minValues requirement of ps that types
// do not meet, with how many distinct values they have and need.
func (s *solver) minValuesShort(ps *poolState, types []int) (string, int, int) {
	for _, r := range ps.minValues {
		seen := map[string]bool{}
		for _, t := range types {
			for _, v := range s.typeValues(t, r.Key) {
				if r.Has(v) {
					seen[v] = true
				}
			}
		}
		if len(seen) < *r.MinValues {
			return r.Key, len(seen), *r.MinValues
		}
	}
	return "", 0, 0
}

// typeValues are the values an instance type contributes to key: its label,
// or for zone and capacity type the values of its available offerings.
func (s *solver) typeValues(t int, key string) []string {
	it := s.cat.types[t]
	return offeredValues(it, it.Offerings, key)
}

// offeredValues are the values of key a node of it launched into one of
// offs may carry: its label, or for zone and capacity type those of the
// available offerings.
func offeredValues(it *InstanceType, offs []Offering, key string) []string {
	switch key {
	case labelZone, labelCapacityType:
		var out []string
		for _, o := range offs {
			if !o.Available {
				continue
			}
			if key == labelZone {
				out = append(out, o.Zone)
			} else {
				out = append(out, o.CapacityType)
			}
		}
		return out
	}
	return it.Values(key)
}

// relaxMinValues lowers each minValues requirement of a claim the BestEffort
// policy relaxed to the number of distinct values its options offer, as
// Karpenter does (filterInstanceTypesByRequirements returns the unmet keys
// with the count reached, and NodeClaim.CanAdd writes it as the key's
// minValues). A NodeClaim whose In requirement lists fewer values than its
// minValues is rejected by the CRD.
func relaxMinValues(claim *NewClaim) {
	var reqs requirements.Requirements
	for _, key := range claim.Requirements.Keys() {
		r := claim.Requirements[key]
		if r.MinValues == nil {
			continue
		}
		seen := map[string]bool{}
		for _, o := range claim.InstanceTypes {
			for _, v := range offeredValues(o.Type, o.Offerings, key) {
				if r.Has(v) {
					seen[v] = true
				}
			}
		}
		if len(seen) >= *r.MinValues {
			continue
		}
		if reqs == nil {
			// Requirements are shared with the solver's interned sets.
			reqs = claim.Requirements.Clone()
		}
		// The CRD's minimum is 1.
		reqs[key] = r.WithMinValues(max(len(seen), 1))
	}
	if reqs != nil {
		claim.Requirements = reqs
	}
}

// finalizeClaim lists the claim's options cheapest first, truncated to
// MaxInstanceTypes while keeping minValues.
func (s *solver) finalizeClaim(b *bin) *NewClaim {
	if b.reservation != "" {
		if claim, ok := s.finalizeReserved(b); ok {
			return claim
		}
	}
	reqs := s.table.sets[b.reqID]
	slots := s.cat.compile(b.reqID, reqs).slots
	if s.countsReservations(slots) {
		// Only claims that took an instance of a reservation may launch
		// into one: the rest would overrun what the pass counted.
		if r, sl := s.withoutReserved(reqs, slots); !math.IsInf(s.cat.cheapest(b.target, sl), 1) {
			reqs, slots = r, sl
		}
	}
	zero := make([]int64, len(b.used))
	// Without minValues the cheapest MaxInstanceTypes fitting types are the
	// answer, so the scan can stop there.
	limit := math.MaxInt
	if len(b.pool.minValues) == 0 {
		limit = s.opts.MaxInstanceTypes
	}
	var order []int
	for _, t := range s.priceOrder(b.types, slots) {
		if fitsIn(b.used, zero, b.pool.allocD[t]) {
			if order = append(order, t); len(order) == limit {
				break
			}
		}
	}
	chosen := s.truncate(b.pool, order)
	relaxed := b.relaxedMV
	if key, _, _ := s.minValuesShort(b.pool, chosen); key != "" {
		relaxed = true
	}
	claim := &NewClaim{NodePool: b.pool.pool.Name, Hostname: b.name, Pods: b.pods, MinValuesRelaxed: relaxed}
	claim.InstanceTypes = make([]ClaimOption, 0, len(chosen))
	names := make([]string, 0, len(chosen))
	rr := reservationReqs(reqs)
	for _, t := range chosen {
		it := s.cat.types[t]
		offs := s.offeringsIn(t, slots)
		if rr != nil {
			// A slot may hold reservations the claim does not allow.
			offs = slices.DeleteFunc(slices.Clone(offs), func(o Offering) bool { return !rr.MatchesLabels(o.ReservationLabels()) })
		}
		claim.InstanceTypes = append(claim.InstanceTypes, ClaimOption{Type: it, Price: s.cat.cheapest(t, slots), Offerings: offs})
		names = append(names, it.Name)
	}
	claim.Requirements = reqs.Intersect(requirements.NewRequirements(requirements.New(labelInstanceType, corev1.NodeSelectorOpIn, names...)))
	req := append([]int64(nil), b.used...)
	if len(chosen) > 0 {
		for i, q := range b.pool.daemon[chosen[0]] {
			req[i] += q
		}
	}
	claim.Requests = s.res.list(req)
	return claim
}

// priceOrder lists the types of set purchasable within slots, cheapest
// first (then by name); claims with the same options share the result.
func (s *solver) priceOrder(set bitset, slots uint64) []int {
	key := make([]byte, 0, 8*(len(set)+1))
	for _, w := range append(set, bitset{slots}...) {
		key = binary.LittleEndian.AppendUint64(key, w)
	}
	if out, ok := s.byPrice[string(key)]; ok {
		return out
	}
	var out []int
	for _, t := range s.cat.order(slots) {
		if set.has(t) {
			out = append(out, t)
		}
	}
	s.byPrice[string(key)] = out
	return out
}

// offeringsIn are type t's available offerings within slots. The slice is
// shared between claims and must not be modified.
func (s *solver) offeringsIn(t int, slots uint64) []Offering {
	key := offerKey{t, slots}
	if out, ok := s.offerings[key]; ok {
		return out
	}
	var out []Offering
	for _, o := range s.cat.types[t].Offerings {
		if s.usable(o) && slots&(1<<s.cat.slot(o.Zone, o.CapacityType)) != 0 {
			out = append(out, o)
		}
	}
	s.offerings[key] = out
	return out
}

type offerKey struct {
	t     int
	slots uint64
}

// truncate keeps at most MaxInstanceTypes of the price-ordered types; if the
// cheapest prefix misses a minValues requirement, the cheapest type of each
// missing value is pulled in first.
func (s *solver) truncate(ps *poolState, order []int) []int {
	max := s.opts.MaxInstanceTypes
	if len(order) <= max {
		return order
	}
	head := order[:max]
	if key, _, _ := s.minValuesShort(ps, head); key == "" {
		return head
	}
	picked := map[int]bool{}
	var out []int
	for _, r := range ps.minValues {
		seen := map[string]bool{}
		for _, t := range out {
			for _, v := range s.typeValues(t, r.Key) {
				seen[v] = true
			}
		}
		for _, t := range order {
			if len(seen) >= *r.MinValues || len(out) >= max {
				break
			}
			fresh := false
			for _, v := range s.typeValues(t, r.Key) {
				if r.Has(v) && !seen[v] {
					fresh = true
					seen[v] = true
				}
			}
			if fresh && !picked[t] {
				picked[t] = true
				out = append(out, t)
			}
		}
	}
	for _, t := range order {
		if len(out) >= max {
			break
		}
		if !picked[t] {
			picked[t] = true
			out = append(out, t)
		}
	}
	pos := map[int]int{}
	for i, t := range order {
		pos[t] = i
	}
	sort.Slice(out, func(i, j int) bool { return pos[out[i]] < pos[out[j]] })
	return out
}
