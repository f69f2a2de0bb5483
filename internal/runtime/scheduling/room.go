package scheduling

import (
	"math"
	"math/bits"
)

// roomIndex finds the next bin that may have room for a request without
// visiting every bin in between. It is a segment tree over bin indices
// holding, per resource, the largest room of any bin below a node. A leaf's
// room is an upper bound on what the bin can still take (exact for existing
// nodes; for claims see claimCeiling), so a subtree whose maxima cannot hold
// the request holds no bin that can. Without it every class scans every
// bin, and the solver's time grows with classes × bins.
type roomIndex struct {
	dims int
	size int     // leaves, a power of two
	max  []int64 // node i's maxima at [i*dims, (i+1)*dims); root is node 1
	n    int     // bins indexed
}

func newRoomIndex(dims int) *roomIndex {
	return &roomIndex{dims: dims}
}

// set records bin i's room, growing the tree when i is new.
func (x *roomIndex) set(i int, room []int64) {
	if i >= x.size {
		x.grow(i + 1)
	}
	x.n = max(x.n, i+1)
	node := x.size + i
	copy(x.max[node*x.dims:(node+1)*x.dims], room)
	for node > 1 {
		node /= 2
		l, r, m := x.max[2*node*x.dims:], x.max[(2*node+1)*x.dims:], x.max[node*x.dims:(node+1)*x.dims]
		for d := range m {
			m[d] = max(l[d], r[d])
		}
	}
}

func (x *roomIndex) grow(n int) {
	size := max(x.size, 64)
	for size < n {
		size *= 2
	}
	old, oldSize := x.max, x.size
	x.size = size
	x.max = make([]int64, 2*size*x.dims)
	for i := range x.max {
		x.max[i] = math.MinInt64
	}
	for i := 0; i < x.n; i++ {
		copy(x.max[(size+i)*x.dims:(size+i+1)*x.dims], old[(oldSize+i)*x.dims:(oldSize+i+1)*x.dims])
	}
	for node := size - 1; node >= 1; node-- {
		l, r, m := x.max[2*node*x.dims:], x.max[(2*node+1)*x.dims:], x.max[node*x.dims:(node+1)*x.dims]
		for d := range m {
			m[d] = max(l[d], r[d])
		}
	}
}

// next returns the smallest bin index >= from whose room may hold req, or
// the number of bins indexed when none may.
func (x *roomIndex) next(from int, req []int64) int {
	if from >= x.n {
		return x.n
	}
	if i := x.find(1, 0, x.size, from, req); i >= 0 {
		return i
	}
	return x.n
}

func (x *roomIndex) find(node, lo, hi, from int, req []int64) int {
	if hi <= from || !x.holds(node, req) {
		return -1
	}
	if hi-lo == 1 {
		return lo
	}
	mid := (lo + hi) / 2
	if i := x.find(2*node, lo, mid, from, req); i >= 0 {
		return i
	}
	return x.find(2*node+1, mid, hi, from, req)
}

func (x *roomIndex) holds(node int, req []int64) bool {
	m := x.max[node*x.dims : (node+1)*x.dims]
	for d, q := range req {
		if q > 0 && m[d] < q {
			return false
		}
	}
	return true
}

// indexRoom records b's room in the indexes after its contents changed.
func (s *solver) indexRoom(b *bin) {
	room := b.free
	if b.kind == TargetNewClaim {
		room = s.scratch()
		for i := range room {
			room[i] = b.ceil[i] - b.used[i]
		}
	}
	s.room.set(b.index, room)
	if len(s.zoneRooms) == 0 {
		return
	}
	zones := s.binZones(b)
	for z, zr := range s.zoneRooms {
		if zones&(1<<z) != 0 && (b.zoneBlocked == nil || !b.zoneBlocked[z]) {
			zr.set(b.index, room)
		} else {
			zr.set(b.index, s.noRoom)
		}
	}
}

// Zone room indexes. A class pinned to one zone looks only at bins that
// can be in that zone, through that zone's index: existing nodes there,
// claims decided there, and claims still open to it, less those whose own
// pods would break a spread there once they count in it (blockZone). Without
// them every zone-pinned class visits every undecided claim.

type zoneWait struct {
	b    *bin
	z    int
	need int // the group's minimum at which b may enter the zone again
}

func (s *solver) buildZoneRooms() {
	if len(s.cat.zones) < 2 || len(s.cat.zones) > 64 {
		return
	}
	s.noRoom = make([]int64, len(s.res.names))
	for i := range s.noRoom {
		s.noRoom[i] = math.MinInt64
	}
	s.zoneRooms = make([]*roomIndex, len(s.cat.zones))
	for z := range s.zoneRooms {
		s.zoneRooms[z] = newRoomIndex(len(s.res.names))
	}
	s.zoneMasks = map[int]uint64{}
}

// binZones is the set of zone indices b can be in.
func (s *solver) binZones(b *bin) uint64 {
	if b.kind != TargetNewClaim {
		if z, ok := s.cat.zoneIdx[b.node.Labels[labelZone]]; ok {
			return 1 << z
		}
		return 0
	}
	return s.zoneMask(b.reqID)
}

func (s *solver) zoneMask(id int) uint64 {
	if m, ok := s.zoneMasks[id]; ok {
		return m
	}
	var m uint64
	r := s.table.sets[id].Get(labelZone)
	for z, name := range s.cat.zones {
		if r.Has(name) {
			m |= 1 << z
		}
	}
	s.zoneMasks[id] = m
	return m
}

// roomsFor is the index a placer of c under requirements id scans.
func (s *solver) roomsFor(c *class, id int) *roomIndex {
	if len(s.zoneRooms) == 0 || c.looseHeld {
		return s.room
	}
	m := s.zoneMask(id)
	if m == 0 || m&(m-1) != 0 {
		return s.room
	}
	return s.zoneRooms[bits.TrailingZeros64(m)]
}

// blockZone keeps b out of zone d's index until g's minimum reaches need.
func (s *solver) blockZone(b *bin, d string, g *topoGroup, need int) {
	z, ok := s.cat.zoneIdx[d]
	if !ok || len(s.zoneRooms) == 0 {
		return
	}
	if b.zoneBlocked == nil {
		b.zoneBlocked = make([]bool, len(s.zoneRooms))
	}
	if b.zoneBlocked[z] {
		return
	}
	b.zoneBlocked[z] = true
	s.indexRoom(b)
	g.waiting = append(g.waiting, zoneWait{b, z, need})
}

// addCount counts k more pods selected by g in domain d and lets claims
// back into zones whose block the new minimum lifts.
func (s *solver) addCount(g *topoGroup, d string, k int) {
	g.add(d, k)
	if len(g.waiting) == 0 {
		return
	}
	m := g.spreadMin()
	keep := g.waiting[:0]
	for _, w := range g.waiting {
		if w.need > m {
			keep = append(keep, w)
			continue
		}
		w.b.zoneBlocked[w.z] = false
		s.indexRoom(w.b)
	}
	g.waiting = keep
}

// claimCeiling is, per resource, the most any type b may still launch as
// could allocate: the sized type and the types admit may switch to when a
// class's requirements exclude it (no pricier than it), or every option
// when the NodePool has limits (admit lets a claim outgrow its type once
// the pool cannot open another node). Classes that may always outgrow
// (hostname affinity) do not use the index.
func (s *solver) claimCeiling(b *bin) {
	if b.ceil == nil {
		b.ceil = make([]int64, len(s.res.names))
	}
	for i := range b.ceil {
		b.ceil[i] = math.MinInt64
	}
	growable := len(b.pool.limited) > 0 || b.pool.nodeLimited
	slots := s.cat.compile(b.reqID, s.table.sets[b.reqID]).slots
	limit := s.cat.cheapest(b.target, slots)
	raise := func(t int) {
		for i, q := range b.pool.allocD[t] {
			b.ceil[i] = max(b.ceil[i], q)
		}
	}
	raise(b.target)
	b.types.each(func(t int) {
		if growable || s.cat.cheapest(t, slots) <= limit {
			raise(t)
		}
	})
}
