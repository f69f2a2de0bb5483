package scheduling

import (
	"math"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
)

// Reserved capacity. A reserved offering launches into a capacity
// reservation that holds a limited number of instances. The solver counts
// what the claims of one pass take, so it never plans more reserved nodes
// than the reservations hold: a new claim sized for a type with a reserved
// offering among its slots takes one instance of that type's reservation
// with the most room left. Once every reservation of a type in a zone is
// used up, the slot stops being purchasable for the type and the rest of
// the pass places pods on the capacity types that remain (spot,
// on-demand), as the NodePool allows. A reserved offering without a
// reservation ID is not counted.

// typeSlot is an instance type (catalog index) in an offering slot.
type typeSlot struct{ t, slot int }

// reservations tracks the reservations behind the catalog's reserved
// offerings during one pass.
type reservations struct {
	left    map[string]int               // reservation ID -> instances left this pass
	of      map[typeSlot][]string        // where an ID is offered -> the IDs offered there
	offered map[string][]typeSlot        // reservation ID -> where it is offered
	labels  map[string]map[string]string // reservation ID -> its labels
}

func newReservations() *reservations {
	return &reservations{left: map[string]int{}, of: map[typeSlot][]string{}, offered: map[string][]typeSlot{}, labels: map[string]map[string]string{}}
}

// add records a reserved offering of type t in slot. The same reservation
// may reach the catalog through several NodePools; the smallest capacity
// seen wins (they differ only when it changed between listings).
func (r *reservations) add(t, slot int, o Offering) {
	if o.ReservationID == "" {
		return
	}
	id := o.ReservationID
	if left, ok := r.left[id]; !ok || o.ReservationCapacity < left {
		r.left[id] = max(0, o.ReservationCapacity)
	}
	r.labels[id] = o.ReservationLabels()
	ts := typeSlot{t, slot}
	for _, have := range r.of[ts] {
		if have == id {
			return
		}
	}
	r.of[ts] = append(r.of[ts], id)
	r.offered[id] = append(r.offered[id], ts)
}

// room is how many instances of type t the reservations of slot still hold;
// math.MaxInt when the slot's reserved offerings are not counted.
func (r *reservations) room(t, slot int) int { return r.roomFor(t, slot, nil) }

// roomFor is room counting only the reservations whose labels meet rr (nil:
// all).
func (r *reservations) roomFor(t, slot int, rr requirements.Requirements) int {
	ids, ok := r.of[typeSlot{t, slot}]
	if !ok {
		return math.MaxInt
	}
	n := 0
	for _, id := range ids {
		if rr == nil || rr.MatchesLabels(r.labels[id]) {
			n += r.left[id]
		}
	}
	return n
}

// take takes one instance from the reservation of t in slot whose labels
// meet rr (nil: any) with the most room (ties by ID) and returns its ID, or
// "" when none has room.
func (r *reservations) take(t, slot int, rr requirements.Requirements) string {
	var ids []string
	for _, id := range r.of[typeSlot{t, slot}] {
		if rr == nil || rr.MatchesLabels(r.labels[id]) {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		if r.left[ids[i]] != r.left[ids[j]] {
			return r.left[ids[i]] > r.left[ids[j]]
		}
		return ids[i] < ids[j]
	})
	if len(ids) == 0 || r.left[ids[0]] <= 0 {
		return ""
	}
	r.left[ids[0]]--
	return ids[0]
}

// reservedSlot returns the slot whose counted reservations give claim b
// its target type most cheaply, or -1 when the target has none with room
// among b's slots.
func (s *solver) reservedSlot(b *bin, slots uint64) int {
	ci, ok := s.cat.ctIdx[CapacityTypeReserved]
	if !ok || len(s.reservations.left) == 0 {
		return -1
	}
	best, bestPrice := -1, math.Inf(1)
	for zi := range s.cat.zones {
		slot := zi*len(s.cat.cts) + ci
		if slots&(1<<slot) == 0 || s.cat.offer[b.target]&(1<<slot) == 0 {
			continue
		}
		room := s.reservations.roomFor(b.target, slot, reservationReqs(s.table.sets[b.reqID]))
		if room == math.MaxInt || room <= 0 {
			continue
		}
		if p := s.cat.price[b.target][slot]; p < bestPrice {
			best, bestPrice = slot, p
		}
	}
	return best
}

// reserve gives a claim just opened one instance of a reservation when its
// target type is cheapest on reserved capacity, and retires the slots the
// reservation then no longer serves.
func (s *solver) reserve(b *bin) {
	reqs := s.table.sets[b.reqID]
	slots := s.cat.compile(b.reqID, reqs).slots
	slot := s.reservedSlot(b, slots)
	if slot < 0 || s.cat.price[b.target][slot] > s.cat.cheapest(b.target, slots) {
		return
	}
	id := s.reservations.take(b.target, slot, reservationReqs(reqs))
	if id == "" {
		return
	}
	b.reservation, b.reservedSlot = id, slot
	if s.reservations.left[id] > 0 {
		return
	}
	retired := false
	for _, ts := range s.reservations.offered[id] {
		if s.reservations.room(ts.t, ts.slot) > 0 {
			continue
		}
		s.cat.withdraw(ts.t, ts.slot)
		retired = true
	}
	if retired {
		// Every cache derived from offer bits and prices is stale now.
		s.cat.compiled = map[int]compiledReqs{}
		s.byPrice = map[string][]int{}
		s.offerings = map[offerKey][]Offering{}
		for _, c := range s.order {
			c.poolTypes, c.poolKnown = nil, nil
		}
	}
}

// countsReservations reports whether slots include reserved capacity
// whose reservations this pass counts.
func (s *solver) countsReservations(slots uint64) bool {
	ci, ok := s.cat.ctIdx[CapacityTypeReserved]
	if !ok || len(s.reservations.left) == 0 {
		return false
	}
	for zi := range s.cat.zones {
		if slots&(1<<(zi*len(s.cat.cts)+ci)) != 0 {
			return true
		}
	}
	return false
}

// withoutReserved narrows a claim that holds no reservation to the other
// capacity types.
func (s *solver) withoutReserved(reqs requirements.Requirements, slots uint64) (requirements.Requirements, uint64) {
	ci := s.cat.ctIdx[CapacityTypeReserved]
	for zi := range s.cat.zones {
		slots &^= 1 << (zi*len(s.cat.cts) + ci)
	}
	return reqs.Intersect(requirements.NewRequirements(
		requirements.New(labelCapacityType, corev1.NodeSelectorOpNotIn, CapacityTypeReserved))), slots
}

// reservedOffering is the offering of a claim's reservation.
func (s *solver) reservedOffering(b *bin) (Offering, bool) {
	zone := s.cat.zones[b.reservedSlot/len(s.cat.cts)]
	for _, o := range s.cat.types[b.target].Offerings {
		if o.Reserved() && o.ReservationID == b.reservation && o.Zone == zone {
			return o, true
		}
	}
	return Offering{}, false
}

// usable reports whether an offering can still be bought in this pass: a
// counted reserved offering needs room left in its reservation.
func (s *solver) usable(o Offering) bool {
	if !o.Available {
		return false
	}
	if !o.Reserved() || o.ReservationID == "" {
		return true
	}
	left, ok := s.reservations.left[o.ReservationID]
	return !ok || left > 0
}

// finalizeReserved is a reserved claim: its sized type only, launched into
// its reservation (capacity type, zone and reservation ID narrowed), so two
// claims of a pass never count on the same reserved instance. It reports
// false when the claim no longer fits its type, which admit prevents.
func (s *solver) finalizeReserved(b *bin) (*NewClaim, bool) {
	off, ok := s.reservedOffering(b)
	if !ok || !fitsIn(b.used, make([]int64, len(b.used)), b.pool.allocD[b.target]) {
		return nil, false
	}
	it := s.cat.types[b.target]
	reqs := s.table.sets[b.reqID].Intersect(requirements.NewRequirements(
		requirements.New(labelInstanceType, corev1.NodeSelectorOpIn, it.Name),
		requirements.New(labelCapacityType, corev1.NodeSelectorOpIn, CapacityTypeReserved),
		requirements.New(labelZone, corev1.NodeSelectorOpIn, off.Zone),
		requirements.New(labelReservationID, corev1.NodeSelectorOpIn, off.ReservationID),
	))
	claim := &NewClaim{
		NodePool: b.pool.pool.Name, Hostname: b.name, Pods: b.pods, MinValuesRelaxed: b.relaxedMV, Requirements: reqs,
		InstanceTypes: []ClaimOption{{Type: it, Price: off.Price, Offerings: []Offering{off}}},
	}
	req := append([]int64(nil), b.used...)
	for i, q := range b.pool.daemon[b.target] {
		req[i] += q
	}
	claim.Requests = s.res.list(req)
	return claim, true
}
