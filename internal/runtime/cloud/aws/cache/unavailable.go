package cache

import (
	"sync"
	"sync/atomic"
	"time"
)

// UnavailableOfferingsTTL is how long an offering that failed to launch (or
// whose spot capacity is being reclaimed) stays out of consideration.
const UnavailableOfferingsTTL = 3 * time.Minute

// Offering identifies a capacity pool: an instance type in a zone for a
// capacity type (spot, on-demand, reserved).
type Offering struct {
	InstanceType string
	Zone         string
	CapacityType string
	// PlacementGroup scopes the entry to launches into one placement
	// group: a pool that is full there (a spread group's seven instances
	// per zone, a cluster group's rack) may have room outside it.
	PlacementGroup string
}

// UnavailableOfferings remembers pools that recently reported insufficient
// capacity. Every change (mark or expiry) bumps a sequence number so callers
// that derive data from availability know when to recompute it.
type UnavailableOfferings struct {
	ttl time.Duration
	now func() time.Time
	seq atomic.Uint64

	mu      sync.Mutex
	entries map[Offering]time.Time // expiry
	// capacityTypes are whole capacity types switched off (e.g. spot when
	// the account cannot use it).
	capacityTypes map[string]time.Time
}

// NewUnavailableOfferings returns an empty cache with the standard TTL.
func NewUnavailableOfferings() *UnavailableOfferings {
	return &UnavailableOfferings{ttl: UnavailableOfferingsTTL, now: time.Now, entries: map[Offering]time.Time{}, capacityTypes: map[string]time.Time{}}
}

// MarkUnavailable takes the pool out of consideration for the TTL.
func (u *UnavailableOfferings) MarkUnavailable(instanceType, zone, capacityType string) {
	u.mu.Lock()
	u.entries[Offering{InstanceType: instanceType, Zone: zone, CapacityType: capacityType}] = u.now().Add(u.ttl)
	u.mu.Unlock()
	u.seq.Add(1)
}

// MarkUnavailableIn takes the pool out of consideration for launches into
// a placement group, for the TTL.
func (u *UnavailableOfferings) MarkUnavailableIn(placementGroup, instanceType, zone, capacityType string) {
	u.mu.Lock()
	u.entries[Offering{InstanceType: instanceType, Zone: zone, CapacityType: capacityType, PlacementGroup: placementGroup}] = u.now().Add(u.ttl)
	u.mu.Unlock()
	u.seq.Add(1)
}

// IsUnavailableIn reports whether the pool is marked for launches into a
// placement group: marked for all launches, or for that group's.
func (u *UnavailableOfferings) IsUnavailableIn(placementGroup, instanceType, zone, capacityType string) bool {
	if u.IsUnavailable(instanceType, zone, capacityType) {
		return true
	}
	if placementGroup == "" {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.entries[Offering{InstanceType: instanceType, Zone: zone, CapacityType: capacityType, PlacementGroup: placementGroup}]
	return ok
}

// MarkCapacityTypeUnavailable takes every pool of a capacity type out of
// consideration for the TTL.
func (u *UnavailableOfferings) MarkCapacityTypeUnavailable(capacityType string) {
	u.mu.Lock()
	u.capacityTypes[capacityType] = u.now().Add(u.ttl)
	u.mu.Unlock()
	u.seq.Add(1)
}

// IsUnavailable reports whether the pool is currently marked.
func (u *UnavailableOfferings) IsUnavailable(instanceType, zone, capacityType string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.expireLocked()
	if _, ok := u.capacityTypes[capacityType]; ok {
		return true
	}
	_, ok := u.entries[Offering{InstanceType: instanceType, Zone: zone, CapacityType: capacityType}]
	return ok
}

// SeqNum changes whenever the set of unavailable offerings changes.
func (u *UnavailableOfferings) SeqNum() uint64 {
	u.mu.Lock()
	u.expireLocked()
	u.mu.Unlock()
	return u.seq.Load()
}

// Delete makes the pool available again at once.
func (u *UnavailableOfferings) Delete(instanceType, zone, capacityType string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.entries[Offering{InstanceType: instanceType, Zone: zone, CapacityType: capacityType}]; ok {
		delete(u.entries, Offering{InstanceType: instanceType, Zone: zone, CapacityType: capacityType})
		u.seq.Add(1)
	}
}

// Flush makes every pool available again.
func (u *UnavailableOfferings) Flush() {
	u.mu.Lock()
	defer u.mu.Unlock()
	clear(u.entries)
	clear(u.capacityTypes)
	u.seq.Add(1)
}

// expireLocked drops expired entries; the caller holds u.mu.
func (u *UnavailableOfferings) expireLocked() {
	now := u.now()
	changed := false
	for k, exp := range u.entries {
		if !now.Before(exp) {
			delete(u.entries, k)
			changed = true
		}
	}
	for k, exp := range u.capacityTypes {
		if !now.Before(exp) {
			delete(u.capacityTypes, k)
			changed = true
		}
	}
	if changed {
		u.seq.Add(1)
	}
}
