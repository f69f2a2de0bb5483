package provisioning

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// idleWake is how often Wait gives up when nothing triggers, so the caller
// can re-check its context.
const idleWake = time.Second

// Batcher collects triggers into batches: a batch opens with the first
// trigger and closes once no trigger came for the idle duration, or at the
// latest after the max duration. Repeated triggers for the same pod within
// a batch count once.
type Batcher struct {
	idle, max time.Duration
	clock     clock.Clock
	triggers  chan struct{}

	mu   sync.Mutex
	seen map[types.UID]struct{}
}

// NewBatcher returns a batcher with BATCH_IDLE_DURATION and BATCH_MAX_DURATION.
func NewBatcher(clk clock.Clock, idle, max time.Duration) *Batcher {
	return &Batcher{idle: idle, max: max, clock: clk, triggers: make(chan struct{}, 1), seen: map[types.UID]struct{}{}}
}

// Trigger adds uid to the current batch (or opens one).
func (b *Batcher) Trigger(uid types.UID) {
	b.mu.Lock()
	if _, dup := b.seen[uid]; dup {
		b.mu.Unlock()
		return
	}
	b.seen[uid] = struct{}{}
	b.mu.Unlock()
	select {
	case b.triggers <- struct{}{}:
	default:
	}
}

// Wait blocks until a batch closes and returns true, or returns false if
// nothing triggered for idleWake or ctx ended.
func (b *Batcher) Wait(ctx context.Context) bool {
	wake := b.clock.NewTimer(idleWake)
	defer wake.Stop()
	select {
	case <-b.triggers:
	case <-wake.C():
		return false
	case <-ctx.Done():
		return false
	}
	defer b.reset()
	timeout := b.clock.NewTimer(b.max)
	defer timeout.Stop()
	idle := b.clock.NewTimer(b.idle)
	defer idle.Stop()
	for {
		select {
		case <-b.triggers:
			if !idle.Stop() {
				// Drain a fire that raced with the trigger.
				select {
				case <-idle.C():
				default:
				}
			}
			idle.Reset(b.idle)
		case <-idle.C():
			return true
		case <-timeout.C():
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// reset forgets the pods of the closed batch so later triggers count again.
func (b *Batcher) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seen = map[types.UID]struct{}{}
}
