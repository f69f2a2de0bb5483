package nodepoolhealth

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestStatusOverTheWindow(t *testing.T) {
	const pool = types.UID("pool")
	for _, tc := range []struct {
		name     string
		outcomes []bool
		want     Status
	}{
		{"nothing recorded", nil, Unknown},
		{"one success", []bool{true}, Healthy},
		{"one failure is a quarter of the window", []bool{false}, Healthy},
		{"two failures are half of it", []bool{false, false}, Unhealthy},
		{"two failures among four", []bool{true, false, true, false}, Unhealthy},
		{"the oldest failures leave the window", []bool{false, false, true, true, true}, Healthy},
		{"one failure left in the window", []bool{false, false, true, true, false, true}, Healthy},
		{"recent failures fill it", []bool{true, true, true, false, false}, Unhealthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			for _, ok := range tc.outcomes {
				s.Record(pool, ok)
			}
			if got := s.Status(pool); got != tc.want {
				t.Errorf("status after %v = %v, want %v", tc.outcomes, got, tc.want)
			}
		})
	}
}

func TestNextDoesNotRecord(t *testing.T) {
	const pool = types.UID("pool")
	s := New()
	s.Record(pool, false)
	if got := s.Next(pool, false); got != Unhealthy {
		t.Errorf("Next after one failure, with a second = %v, want Unhealthy", got)
	}
	if got := s.Status(pool); got != Healthy {
		t.Errorf("Status after Next = %v, want Healthy: Next must not record", got)
	}
}

func TestSeedAndReset(t *testing.T) {
	const pool = types.UID("pool")
	s := New()
	s.Seed(pool, Unhealthy)
	if got := s.Status(pool); got != Unhealthy {
		t.Fatalf("seeded Unhealthy, status %v", got)
	}
	// Two successes do not yet outweigh the seeded failures; a third does
	// (a failure leaves the window).
	s.Record(pool, true)
	s.Record(pool, true)
	if got := s.Status(pool); got != Unhealthy {
		t.Errorf("seeded Unhealthy then two successes: %v, want Unhealthy", got)
	}
	s.Record(pool, true)
	if got := s.Status(pool); got != Healthy {
		t.Errorf("seeded Unhealthy then three successes: %v, want Healthy", got)
	}
	s.Seed(pool, Unhealthy)
	if got := s.Status(pool); got != Healthy {
		t.Errorf("Seed on a pool with outcomes changed it to %v", got)
	}
	s.Reset(pool)
	if got := s.Status(pool); got != Unknown {
		t.Errorf("after Reset: %v, want Unknown", got)
	}
	s.Seed(pool, Healthy)
	if got := s.Status(pool); got != Healthy {
		t.Errorf("seeded Healthy: %v", got)
	}
}
