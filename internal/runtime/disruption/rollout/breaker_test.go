package rollout

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)

func TestInWindow(t *testing.T) {
	fs := []time.Time{t0, t0.Add(30 * time.Minute), t0.Add(59 * time.Minute), t0.Add(2 * time.Hour)}
	for _, tc := range []struct {
		now  time.Time
		want int
	}{
		{t0.Add(-time.Minute), 0},              // none yet
		{t0, 1},                                // the window includes now
		{t0.Add(59 * time.Minute), 3},          // all three within the hour
		{t0.Add(time.Hour), 2},                 // t0 is exactly a window old: out
		{t0.Add(90 * time.Minute), 1},          // only :59 left; 2h is in the future
		{t0.Add(2*time.Hour + time.Second), 1}, // the 2h failure alone
	} {
		if got := InWindow(fs, tc.now, time.Hour); got != tc.want {
			t.Errorf("InWindow at %s = %d, want %d", tc.now.Sub(t0), got, tc.want)
		}
	}
}

// TestBreakerOpensAtTheThreshold: the breaker opens on the third failure
// within the window, not on failures spread wider than it, and stays open
// until the spec or the reset token changes.
func TestBreakerOpensAtTheThreshold(t *testing.T) {
	p := Policy{Failures: 3, Window: time.Hour}
	r := Record{Spec: "a"}
	r = r.Fail(t0, p).Fail(t0.Add(50*time.Minute), p)
	r = r.Fail(t0.Add(70*time.Minute), p) // t0 has aged out: 2 in the window
	if r.Open() {
		t.Fatalf("open with failures %v: only 2 within an hour", r.Failures)
	}
	if len(r.Failures) != 2 {
		t.Errorf("kept %v, want the two within the window", r.Failures)
	}
	r = r.Fail(t0.Add(80*time.Minute), p)
	if !r.Open() || !r.Opened.Equal(t0.Add(80*time.Minute)) {
		t.Fatalf("not open at the third failure within an hour: %+v", r)
	}
	// Persisted and read back by a restarted controller: still open.
	back := Parse(r.Encode())
	if !back.For("a", "").Open() {
		t.Errorf("the reloaded record %+v is closed", back)
	}
	// Time alone does not close it.
	if !back.Fail(t0.Add(10*time.Hour), p).Open() {
		t.Error("closed by a later failure")
	}
	if back.For("b", "").Open() {
		t.Error("open after the spec changed")
	}
	if back.For("a", "reset-1").Open() {
		t.Error("open after a new reset token")
	}
	if Parse("not json").Open() {
		t.Error("an unreadable record is open")
	}
}

func TestClusterOpen(t *testing.T) {
	p := Policy{Failures: 4, Window: time.Hour}
	a := Record{Failures: []time.Time{t0, t0.Add(10 * time.Minute)}}
	b := Record{Failures: []time.Time{t0.Add(20 * time.Minute), t0.Add(30 * time.Minute)}}
	if open, n := ClusterOpen([]Record{a, b}, t0.Add(40*time.Minute), p); !open || n != 4 {
		t.Errorf("ClusterOpen = %v, %d; want open with 4", open, n)
	}
	if open, n := ClusterOpen([]Record{a, b}, t0.Add(65*time.Minute), p); open || n != 3 {
		t.Errorf("ClusterOpen after t0 aged out = %v, %d; want closed with 3", open, n)
	}
}
