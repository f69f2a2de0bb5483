package rollout

import (
	"testing"
	"time"
)

// restart stands for a controller restart: the state goes through its
// persisted form.
func restart(s State) State { return ParseState(s.Encode()) }

// TestRolloutCanaryBakeWaves walks a 10-node pool through a canary of 1,
// a 15 minute bake and waves of the budget (3): no node beyond the canary
// starts before the canary's replacement is ready and baked, and each
// wave waits for the one before.
func TestRolloutCanaryBakeWaves(t *testing.T) {
	p := Plan{Count: 1, Bake: 15 * time.Minute}
	s, n := Step(State{}, p, "v2", 10, 3, 0, t0)
	if n != 1 || s.Wave != 0 {
		t.Fatalf("canary allows %d at wave %d, want 1 at wave 0", n, s.Wave)
	}
	s = s.Start("a")
	if s, n = Step(s, p, "v2", 10, 3, 0, t0.Add(time.Minute)); n != 0 {
		t.Fatalf("%d more start while the canary's replacement is not ready", n)
	}
	// Ready at 5m: the bake starts then, not at the canary's start.
	if s, n = Step(s, p, "v2", 10, 3, 1, t0.Add(5*time.Minute)); n != 0 || s.BakeStart == nil || !s.BakeStart.Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("after ready: %d allowed, bake from %v; want 0 and the bake from 5m", n, s.BakeStart)
	}
	if s, n = Step(s, p, "v2", 10, 3, 1, t0.Add(19*time.Minute)); n != 0 {
		t.Fatalf("%d start 14m into a 15m bake", n)
	}
	if s, n = Step(s, p, "v2", 10, 3, 1, t0.Add(20*time.Minute)); n != 3 || s.Wave != 1 {
		t.Fatalf("after the bake: %d allowed at wave %d, want the budget's 3 at wave 1", n, s.Wave)
	}
	s = s.Start("b").Start("c")
	if s, n = Step(s, p, "v2", 10, 1, 0, t0.Add(21*time.Minute)); n != 1 {
		t.Fatalf("wave 1 allows %d more, want 1: its size was fixed at 3 when it began", n)
	}
	s = s.Start("d")
	if s, n = Step(s, p, "v2", 10, 3, 2, t0.Add(22*time.Minute)); n != 0 || s.BakeStart != nil {
		t.Fatalf("wave 1 with 2 of 3 ready: %d allowed, baking %v", n, s.BakeStart)
	}
	s, _ = Step(s, p, "v2", 10, 3, 3, t0.Add(23*time.Minute))
	if s, n = Step(s, p, "v2", 10, 2, 3, t0.Add(38*time.Minute)); n != 2 || s.Wave != 2 {
		t.Fatalf("after wave 1's bake: %d at wave %d, want 2 at wave 2", n, s.Wave)
	}
}

func TestRolloutCanaryPercent(t *testing.T) {
	for _, tc := range []struct {
		pct, total, want int
	}{{10, 10, 1}, {10, 25, 3}, {10, 3, 1}, {50, 5, 3}} {
		if got := CanarySize(Plan{Percent: tc.pct}, tc.total); got != tc.want {
			t.Errorf("%d%% of %d = %d, want %d", tc.pct, tc.total, got, tc.want)
		}
	}
}

// TestRolloutFailureStopsUntilTheSpecChanges: a failed replacement stops
// the pool's rollout whatever comes ready after; a new spec (the next
// release) starts a new rollout at its canary.
func TestRolloutFailureStopsUntilTheSpecChanges(t *testing.T) {
	p := Plan{Count: 1, Bake: time.Minute}
	s, _ := Step(State{}, p, "v2", 10, 3, 0, t0)
	s = s.Start("a").Fail("replacement nodeclaim x was deleted before it initialized")
	if s, n := Step(s, p, "v2", 10, 3, 1, t0.Add(time.Hour)); n != 0 || s.Failed == "" {
		t.Fatalf("a failed rollout allows %d (failed %q)", n, s.Failed)
	}
	s, n := Step(restart(s), p, "v3", 10, 3, 0, t0.Add(time.Hour))
	if n != 1 || s.Wave != 0 || s.Failed != "" || len(s.Members) != 0 {
		t.Fatalf("the next spec: %d allowed, %+v; want a new canary of 1", n, s)
	}
}

// TestRolloutResumesAfterRestart: a controller that restarts mid-rollout
// reads the state back and resumes where it was: no second canary while
// the first bakes, and the bake counts from when it began, not from the
// restart.
func TestRolloutResumesAfterRestart(t *testing.T) {
	p := Plan{Count: 1, Bake: 15 * time.Minute}
	s, _ := Step(State{}, p, "v2", 10, 3, 0, t0)
	s = s.Start("a")
	s, _ = Step(s, p, "v2", 10, 3, 1, t0.Add(time.Minute)) // baking from 1m
	s = restart(s)
	if s, n := Step(s, p, "v2", 10, 3, 1, t0.Add(10*time.Minute)); n != 0 || s.Wave != 0 || len(s.Members) != 1 {
		t.Fatalf("after a restart 9m into the bake: %d allowed at wave %d with %v", n, s.Wave, s.Members)
	}
	if s, n := Step(restart(s), p, "v2", 10, 3, 1, t0.Add(16*time.Minute)); n != 3 || s.Wave != 1 {
		t.Fatalf("after a restart past the bake: %d at wave %d, want 3 at wave 1", n, s.Wave)
	}
	// Restarting between the canary's start and its replacement's
	// readiness: still the one canary.
	s, _ = Step(State{}, p, "v2", 10, 3, 0, t0)
	s = restart(s.Start("a"))
	if _, n := Step(s, p, "v2", 10, 3, 0, t0.Add(time.Minute)); n != 0 {
		t.Fatalf("a second canary (%d) after a restart", n)
	}
}
