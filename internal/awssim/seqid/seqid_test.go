package seqid

import (
	"regexp"
	"testing"
)

func TestDeterministicAndDistinct(t *testing.T) {
	a, b, other := New("x"), New("x"), New("y")
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		u := a.UUID()
		if u != b.UUID() {
			t.Fatal("same seed, same position, different IDs")
		}
		if u == other.UUID() {
			t.Fatal("different seeds gave the same ID")
		}
		if seen[u] {
			t.Fatalf("repeated ID %s", u)
		}
		seen[u] = true
	}
	if u := New("z").UUID(); !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(u) {
		t.Fatalf("UUID %s is not 8-4-4-4-12 hex", u)
	}
	if id := New("z").Upper("AROA", 21); len(id) != 21 || !regexp.MustCompile(`^AROA[A-Z2-7]{17}$`).MatchString(id) {
		t.Fatalf("Upper = %s", id)
	}
	if h := New("z").Hex(17); len(h) != 17 {
		t.Fatalf("Hex(17) = %s", h)
	}
}
