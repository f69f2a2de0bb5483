package interruption

import (
	"testing"
	"time"
)

// Users are told when receiving starts failing, then at most once per
// reportEvery however often the poller retries, and once when it works
// again; a failure after a recovery is told at once.
func TestReceiveFailuresAreToldBoundedly(t *testing.T) {
	var h receiveHealth
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if h.succeeded() {
		t.Fatal("a success without a failure reported a recovery")
	}
	steps := []struct {
		after time.Duration
		want  bool
	}{
		{0, true},                           // first failure
		{errorBackoff, false},               // the next poll
		{reportEvery - time.Second, false},  // still within the bound
		{reportEvery, true},                 // one more reminder
		{reportEvery + errorBackoff, false}, // and quiet again
	}
	for _, s := range steps {
		if got := h.failed(t0.Add(s.after)); got != s.want {
			t.Errorf("failure at +%s: tell = %v, want %v", s.after, got, s.want)
		}
	}
	if !h.succeeded() {
		t.Error("the first success after failures did not report a recovery")
	}
	if h.succeeded() {
		t.Error("a second success reported a recovery again")
	}
	if !h.failed(t0.Add(reportEvery + 2*errorBackoff)) {
		t.Error("a failure after a recovery was not told at once")
	}
}
