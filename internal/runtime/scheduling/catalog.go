package scheduling

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
)

// Catalog is the instance types of a set of NodePools indexed for the
// solver, so that requirement checks become bitset operations. Building it
// is most of the fixed cost of a Solve; a caller that solves many times over
// the same NodePools (a disruption pass simulates every candidate) builds it
// once with NewCatalog and passes it in Input.Catalog. Its indexes never
// change after NewCatalog returns and its memo is locked, so Solves may
// share it concurrently.
type Catalog struct {
	types []*InstanceType
	index map[*InstanceType]int
	all   bitset
	// labels: key -> which types carry it and, per value, which types have it.
	labels map[string]*labelIndex
	// Offerings are flattened into slots (zone × capacity type) so the set
	// of purchasable slots of a type is one word.
	zones, cts []string
	zoneIdx    map[string]int
	ctIdx      map[string]int
	offer      []uint64
	price      [][]float64
	// reserved are the offerings of capacity reservations, which every
	// Solve counts down afresh.
	reserved []reservedOffering
	// res indexes the resources the types' allocatable names; alloc and
	// capv are the types' vectors over them.
	res         *resources
	alloc, capv [][]int64

	// orders memoizes sortByPrice per slot set for the Solves that use the
	// catalog's own offerings (every one that retires no reservation).
	orderMu sync.Mutex
	orders  map[uint64][]int
}

type reservedOffering struct {
	t, slot int
	o       Offering
}

type labelIndex struct {
	has    bitset
	values map[string]bitset
}

type compiledReqs struct {
	types bitset
	slots uint64
}

// catalog is one Solve's view of a Catalog: the offerings a reservation
// used up this pass are withdrawn from its own copy of the offer bits and
// prices, and requirement sets are compiled against its requirement table.
type catalog struct {
	*Catalog
	offer       []uint64
	price       [][]float64
	offersOwned bool
	alloc, capv [][]int64
	// compiled caches requirement-set id -> types and slots it allows.
	compiled map[int]compiledReqs
}

// NewCatalog indexes the instance types of pools.
func NewCatalog(pools []*NodePool) (*Catalog, error) {
	c := &Catalog{index: map[*InstanceType]int{}, labels: map[string]*labelIndex{}, zoneIdx: map[string]int{}, ctIdx: map[string]int{}, res: newResources()}
	zones, cts := map[string]bool{}, map[string]bool{}
	for _, p := range pools {
		for _, it := range p.InstanceTypes {
			if _, ok := c.index[it]; ok {
				continue
			}
			c.index[it] = len(c.types)
			c.types = append(c.types, it)
			c.res.addAllSorted(it.Allocatable)
			for _, o := range it.Offerings {
				zones[o.Zone], cts[o.CapacityType] = true, true
			}
		}
	}
	c.zones, c.cts = sortedKeys(zones), sortedKeys(cts)
	if len(c.zones)*len(c.cts) > 64 {
		return nil, fmt.Errorf("instance offerings span %d zones × %d capacity types; at most 64 combinations are supported", len(c.zones), len(c.cts))
	}
	for i, z := range c.zones {
		c.zoneIdx[z] = i
	}
	for i, ct := range c.cts {
		c.ctIdx[ct] = i
	}
	n := len(c.types)
	c.all = newBitset(n)
	c.offer = make([]uint64, n)
	c.price = make([][]float64, n)
	c.alloc = make([][]int64, n)
	c.capv = make([][]int64, n)
	for i, it := range c.types {
		c.all.set(i)
		c.price[i] = make([]float64, len(c.zones)*len(c.cts))
		for s := range c.price[i] {
			c.price[i][s] = math.Inf(1)
		}
		for _, o := range it.Offerings {
			if !o.Available {
				continue
			}
			s := c.slot(o.Zone, o.CapacityType)
			if o.Reserved() && o.ReservationID != "" {
				c.reserved = append(c.reserved, reservedOffering{i, s, o})
				if o.ReservationCapacity <= 0 {
					continue // full: nothing to buy this pass
				}
			}
			c.offer[i] |= 1 << s
			c.price[i][s] = min(c.price[i][s], o.Price)
		}
		for k, v := range it.Labels {
			c.addLabel(i, k, v)
		}
		for k, vs := range it.LabelChoices {
			for _, v := range vs {
				c.addLabel(i, k, v)
			}
		}
		c.alloc[i] = c.res.allocatable(it.Allocatable)
		capacity := it.Capacity
		if capacity == nil {
			capacity = it.Allocatable
		}
		c.capv[i] = c.res.vec(capacity)
	}
	return c, nil
}

// covers reports whether the catalog holds exactly the instance types of
// pools, so a Solve over pools may use it.
func (c *Catalog) covers(pools []*NodePool) bool {
	seen := make([]bool, len(c.types))
	n := 0
	for _, p := range pools {
		for _, it := range p.InstanceTypes {
			i, ok := c.index[it]
			if !ok {
				return false
			}
			if !seen[i] {
				seen[i] = true
				n++
			}
		}
	}
	return n == len(c.types)
}

// view starts a Solve's view of the catalog: res gets the catalog's
// resources (before any other, so the types' vectors are a prefix of the
// Solve's) and rsv its reservations.
func (c *Catalog) view(res *resources, rsv *reservations) *catalog {
	for _, name := range c.res.names {
		res.add(name)
	}
	for _, r := range c.reserved {
		rsv.add(r.t, r.slot, r.o)
	}
	return &catalog{Catalog: c, offer: c.offer, price: c.price, compiled: map[int]compiledReqs{}}
}

// addLabel records that type i has label k with value v. A type with several
// values of k (LabelChoices) is in each value's set, so a requirement
// admits it when any of its values meets it.
func (c *Catalog) addLabel(i int, k, v string) {
	k = requirements.NormalizeKey(k)
	li := c.labels[k]
	if li == nil {
		li = &labelIndex{has: newBitset(len(c.types)), values: map[string]bitset{}}
		c.labels[k] = li
	}
	li.has.set(i)
	vb := li.values[v]
	if vb == nil {
		vb = newBitset(len(c.types))
		li.values[v] = vb
	}
	vb.set(i)
}

// finishVectors gives the view the types' vectors over every resource the
// Solve knows: the catalog's own, padded with zeros for the resources only
// pods, nodes or limits name (no type has any of them).
func (c *catalog) finishVectors(res *resources) {
	if len(res.names) == len(c.Catalog.res.names) {
		c.alloc, c.capv = c.Catalog.alloc, c.Catalog.capv
		return
	}
	pad := func(vs [][]int64) [][]int64 {
		out := make([][]int64, len(vs))
		for i, v := range vs {
			out[i] = make([]int64, len(res.names))
			copy(out[i], v)
		}
		return out
	}
	c.alloc, c.capv = pad(c.Catalog.alloc), pad(c.Catalog.capv)
}

// order lists every type purchasable within slots, cheapest first (then by
// name). The slice is shared and must not be modified.
func (c *catalog) order(slots uint64) []int {
	if c.offersOwned {
		return c.sortByPrice(slots)
	}
	c.orderMu.Lock()
	defer c.orderMu.Unlock()
	if out, ok := c.orders[slots]; ok {
		return out
	}
	if c.orders == nil {
		c.orders = map[uint64][]int{}
	}
	out := c.sortByPrice(slots)
	c.orders[slots] = out
	return out
}

func (c *catalog) sortByPrice(slots uint64) []int {
	type priced struct {
		t     int
		price float64
	}
	var ps []priced
	for t := range c.types {
		if p := c.cheapest(t, slots); !math.IsInf(p, 1) {
			ps = append(ps, priced{t, p})
		}
	}
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].price != ps[j].price {
			return ps[i].price < ps[j].price
		}
		return c.types[ps[i].t].Name < c.types[ps[j].t].Name
	})
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.t
	}
	return out
}

// withdraw takes the offering of type t in slot out of this Solve's
// catalog, copying the shared offer bits and prices first.
func (c *catalog) withdraw(t, slot int) {
	if !c.offersOwned {
		c.offer = append([]uint64(nil), c.offer...)
		price := make([][]float64, len(c.price))
		for i, p := range c.price {
			price[i] = append([]float64(nil), p...)
		}
		c.price, c.offersOwned = price, true
	}
	c.offer[t] &^= 1 << slot
	c.price[t][slot] = math.Inf(1)
}

func (c *Catalog) slot(zone, ct string) int { return c.zoneIdx[zone]*len(c.cts) + c.ctIdx[ct] }

// slotsFor is the set of offering slots whose zone and capacity type reqs
// allow.
func (c *Catalog) slotsFor(reqs requirements.Requirements) uint64 {
	zr, cr := reqs.Get(labelZone), reqs.Get(labelCapacityType)
	var mask uint64
	for zi, z := range c.zones {
		if !zr.Has(z) {
			continue
		}
		for ci, ct := range c.cts {
			if cr.Has(ct) {
				mask |= 1 << (zi*len(c.cts) + ci)
			}
		}
	}
	return mask
}

// compile returns the instance types whose labels satisfy reqs and which
// have an available offering in an allowed zone and capacity type. Keys no
// instance type carries (NodePool labels, custom labels) are not about
// instance types and are left to requirement compatibility.
func (c *catalog) compile(id int, reqs requirements.Requirements) compiledReqs {
	if cr, ok := c.compiled[id]; ok {
		return cr
	}
	types := c.all.clone()
	for key, req := range reqs {
		li := c.labels[key]
		if li == nil || key == labelZone || key == labelCapacityType {
			continue
		}
		allowed := newBitset(len(c.types))
		for v, vb := range li.values {
			if req.Has(v) {
				allowed.orInPlace(vb)
			}
		}
		if op := req.Operator(); op == corev1.NodeSelectorOpNotIn || op == corev1.NodeSelectorOpDoesNotExist {
			allowed.orInPlace(li.has.not(len(c.types)))
		}
		types.andInPlace(allowed)
	}
	slots := c.slotsFor(reqs)
	if rr := reservationReqs(reqs); rr != nil {
		// Reservation labels vary per offering: keep the types with an
		// offering that meets them, and the slots of those offerings.
		var union uint64
		types.each(func(i int) {
			m := c.matchingSlots(i, rr) & slots
			if m == 0 {
				types[i>>6] &^= 1 << (uint(i) & 63)
			}
			union |= m
		})
		slots = union
	}
	types.each(func(i int) {
		if c.offer[i]&slots == 0 {
			types[i>>6] &^= 1 << (uint(i) & 63)
		}
	})
	cr := compiledReqs{types: types, slots: slots}
	c.compiled[id] = cr
	return cr
}

// matchingSlots are the purchasable slots of type i holding an available
// offering whose reservation labels meet rr.
func (c *catalog) matchingSlots(i int, rr requirements.Requirements) uint64 {
	var m uint64
	for _, o := range c.types[i].Offerings {
		if o.Available && rr.MatchesLabels(o.ReservationLabels()) {
			m |= 1 << c.slot(o.Zone, o.CapacityType)
		}
	}
	return m & c.offer[i]
}

// reservationReqs are reqs' requirements on reservation labels; nil when
// it has none.
func reservationReqs(reqs requirements.Requirements) requirements.Requirements {
	var out requirements.Requirements
	for _, key := range ReservationKeys {
		if r, ok := reqs[key]; ok {
			if out == nil {
				out = requirements.Requirements{}
			}
			out[key] = r
		}
	}
	return out
}

// cheapest is the lowest available price of type i within slots.
func (c *catalog) cheapest(i int, slots uint64) float64 {
	p := math.Inf(1)
	for s, v := range c.price[i] {
		if slots&(1<<s) != 0 && v < p {
			p = v
		}
	}
	return p
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CatalogCache keeps the last Catalog built for a caller that solves pass
// after pass over the same NodePools (provisioning), and hands it out again
// while the pools list the very same instance types in the same order: the
// cloud provider lists new types whenever prices, availability or a node
// class change, so the same types mean the same catalog. Safe for
// concurrent use.
type CatalogCache struct {
	mu    sync.Mutex
	types []*InstanceType
	cat   *Catalog
}

// For returns the catalog of pools' instance types, built only when they
// differ from the last call's; nil when it cannot be built (Solve then
// builds its own and reports why).
func (cc *CatalogCache) For(pools []*NodePool) *Catalog {
	var types []*InstanceType
	for _, p := range pools {
		types = append(types, p.InstanceTypes...)
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.cat == nil || !slices.Equal(types, cc.types) {
		cat, err := NewCatalog(pools)
		if err != nil {
			cc.types, cc.cat = nil, nil
			return nil
		}
		cc.types, cc.cat = types, cat
	}
	return cc.cat
}
