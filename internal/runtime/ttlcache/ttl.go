package ttlcache

import (
	"sync"
	"time"
)

// TTL maps keys to values that expire a fixed time after they were set.
// Expired entries are dropped on access and, for keys never asked for
// again, by a sweep at most once per TTL when values are set. Safe for
// concurrent use.
type TTL[K comparable, V any] struct {
	ttl time.Duration
	now func() time.Time

	mu        sync.Mutex
	entries   map[K]ttlEntry[V]
	nextSweep time.Time
}

type ttlEntry[V any] struct {
	value   V
	expires time.Time
}

// New returns an empty cache whose entries live for ttl.
func New[K comparable, V any](ttl time.Duration) *TTL[K, V] {
	return NewWithClock[K, V](ttl, time.Now)
}

// NewWithClock is New reading the time from now.
func NewWithClock[K comparable, V any](ttl time.Duration, now func() time.Time) *TTL[K, V] {
	return &TTL[K, V]{ttl: ttl, now: now, entries: map[K]ttlEntry[V]{}}
}

// Get returns the live value for key.
func (c *TTL[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !c.now().Before(e.expires) {
		delete(c.entries, key)
		var zero V
		return zero, false
	}
	return e.value, true
}

// Set stores value under key for the cache's TTL.
func (c *TTL[K, V]) Set(key K, value V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if !now.Before(c.nextSweep) {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		c.nextSweep = now.Add(c.ttl)
	}
	c.entries[key] = ttlEntry[V]{value: value, expires: now.Add(c.ttl)}
}

// Delete drops key.
func (c *TTL[K, V]) Delete(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
}

// Flush drops every entry.
func (c *TTL[K, V]) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
}

// Keys returns the keys of the live entries.
func (c *TTL[K, V]) Keys() []K {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	out := make([]K, 0, len(c.entries))
	for k, e := range c.entries {
		if now.Before(e.expires) {
			out = append(out, k)
		}
	}
	return out
}
