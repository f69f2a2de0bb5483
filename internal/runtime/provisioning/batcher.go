package provisioning

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// idleWake is how often Wait gives up when nothing triggers, so the caller
// can re-check its context.
const idleWake = time.Second

// Batcher collects triggers into batches: a batch opens with the first
// trigger and closes once no trigger came for the idle duration, or at the
// latest the max duration after it opened. Repeated triggers for the same
// pod within a batch count once.
type Batcher struct {
	idle, max time.Duration
	clock     clock.Clock
	triggers  chan struct{}

	mu    sync.Mutex
	seen  map[types.UID]struct{}
	first time.Time // first trigger of the open batch
	last  time.Time // latest trigger of the open batch
	armed atomic.Int64
}

// NewBatcher returns a batcher with BATCH_IDLE_DURATION and BATCH_MAX_DURATION.
func NewBatcher(clk clock.Clock, idle, max time.Duration) *Batcher {
	return &Batcher{idle: idle, max: max, clock: clk, triggers: make(chan struct{}, 1), seen: map[types.UID]struct{}{}}
}

// Trigger adds uid to the current batch (or opens one). The trigger time is
// taken here, so the window does not depend on when Wait notices it.
func (b *Batcher) Trigger(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, dup := b.seen[uid]; dup {
		return
	}
	b.seen[uid] = struct{}{}
	b.last = b.clock.Now()
	if b.first.IsZero() {
		b.first = b.last
	}
	select {
	case b.triggers <- struct{}{}:
	default:
	}
}

// Wait blocks until a batch closes and returns true, or returns false if
// nothing triggered for idleWake or ctx ended.
func (b *Batcher) Wait(ctx context.Context) bool {
	wake := b.clock.NewTimer(idleWake)
	b.armed.Add(1)
	select {
	case <-b.triggers:
		wake.Stop()
	case <-wake.C():
		return false
	case <-ctx.Done():
		wake.Stop()
		return false
	}
	defer b.reset()
	for {
		b.mu.Lock()
		deadline := b.last.Add(b.idle)
		if end := b.first.Add(b.max); end.Before(deadline) {
			deadline = end
		}
		b.mu.Unlock()
		left := deadline.Sub(b.clock.Now())
		if left <= 0 {
			return true
		}
		// Only timers wake the loop; triggers just move b.last.
		t := b.clock.NewTimer(left)
		b.armed.Add(1)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
}

// reset closes the batch: its pods may trigger the next one, and a signal
// left from triggers inside this batch must not open an empty one.
func (b *Batcher) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seen = map[types.UID]struct{}{}
	b.first, b.last = time.Time{}, time.Time{}
	select {
	case <-b.triggers:
	default:
	}
}
