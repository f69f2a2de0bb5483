package ttlcache

import (
	"testing"
	"time"
)

// Keys that are never asked for again still leave the cache: a later Set
// sweeps every expired entry, so a cache keyed by a changing generation
// does not grow without bound.
func TestTTLSweepsExpiredEntriesOnSet(t *testing.T) {
	now := time.Unix(0, 0)
	c := New[int, string](time.Minute)
	c.now = func() time.Time { return now }
	for i := range 100 {
		c.Set(i, "old")
		now = now.Add(time.Second)
	}
	now = now.Add(2 * time.Minute)
	c.Set(1000, "new")
	if len(c.entries) != 1 {
		t.Fatalf("%d entries after every other key expired, want 1", len(c.entries))
	}
	if v, ok := c.Get(1000); !ok || v != "new" {
		t.Fatalf("Get(1000) = %q, %v; want the live value", v, ok)
	}
	// Within a TTL of the last sweep, a Set does not scan again, but
	// entries still expire for Get.
	c.Set(1001, "x")
	now = now.Add(30 * time.Second)
	if _, ok := c.Get(1000); !ok {
		t.Fatal("entry expired before its TTL")
	}
}
