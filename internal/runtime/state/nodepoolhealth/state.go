// Package nodepoolhealth remembers, per NodePool, whether its last node
// launches registered: the evidence behind the NodePool's
// NodeRegistrationHealthy condition. It is in memory: after a restart the
// condition stored on the NodePool seeds it again (Seed).
package nodepoolhealth

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Window is how many of a pool's last launch outcomes are kept; the pool is
// Unhealthy once failures make up unhealthyShare of the window (2 of 4), as
// in Karpenter v1.15.
const (
	Window         = 4
	unhealthyShare = 0.5
)

// Status of a pool's registrations.
type Status int

const (
	// Unknown: no outcome since the pool or its node class last changed.
	Unknown Status = iota
	// Healthy: fewer than half the window's launches failed.
	Healthy
	// Unhealthy: at least half the window's launches failed.
	Unhealthy
)

// State holds every pool's last outcomes; safe for concurrent use.
type State struct {
	mu       sync.Mutex
	outcomes map[types.UID][]bool // oldest first, at most Window
}

// New returns an empty State.
func New() *State {
	return &State{outcomes: map[types.UID][]bool{}}
}

// Status is the pool's status from its recorded outcomes.
func (s *State) Status(pool types.UID) Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return statusOf(s.outcomes[pool])
}

// Next is the status the pool would have once outcome is recorded, without
// recording it: the condition is written first, so a failed write leaves
// the outcome to be recorded by the next attempt.
func (s *State) Next(pool types.UID, registered bool) Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return statusOf(appendOutcome(append([]bool(nil), s.outcomes[pool]...), registered))
}

// Record adds one launch's outcome: registered, or given up on (a launch
// or registration timeout).
func (s *State) Record(pool types.UID, registered bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcomes[pool] = appendOutcome(s.outcomes[pool], registered)
}

// Reset forgets the pool's outcomes: its spec or its node class changed.
func (s *State) Reset(pool types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.outcomes, pool)
}

// Seed sets an empty pool's outcomes to the least history that gives
// status (one success; failures enough for Unhealthy): how the condition
// stored on the NodePool survives a restart. A pool with outcomes, or an
// Unknown status, is left alone.
func (s *State) Seed(pool types.UID, status Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.outcomes[pool]) > 0 {
		return
	}
	switch status {
	case Healthy:
		s.outcomes[pool] = []bool{true}
	case Unhealthy:
		s.outcomes[pool] = make([]bool, int(Window*unhealthyShare))
	}
}

func appendOutcome(outcomes []bool, registered bool) []bool {
	outcomes = append(outcomes, registered)
	if len(outcomes) > Window {
		outcomes = outcomes[len(outcomes)-Window:]
	}
	return outcomes
}

// statusOf counts failures against the whole window, not against the
// outcomes seen: one failure among the first two launches is not yet
// Unhealthy, two are.
func statusOf(outcomes []bool) Status {
	if len(outcomes) == 0 {
		return Unknown
	}
	failed := 0
	for _, ok := range outcomes {
		if !ok {
			failed++
		}
	}
	if float64(failed)/Window >= unhealthyShare {
		return Unhealthy
	}
	return Healthy
}
