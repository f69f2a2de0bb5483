package provisioning

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

// waitResult runs Wait in the background.
func waitResult(b *Batcher) chan bool {
	out := make(chan bool, 1)
	go func() { out <- b.Wait(context.Background()) }()
	return out
}

// armed waits until the batcher has armed its n-th timer (and so is
// blocked on it).
func armed(t *testing.T, b *Batcher, clk *clocktesting.FakeClock, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for b.armed.Load() < n || !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatalf("batcher did not arm timer %d (armed %d)", n, b.armed.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

func closed(done chan bool) bool {
	select {
	case v := <-done:
		if !v {
			panic("Wait returned without a batch")
		}
		return true
	default:
		return false
	}
}

func TestBatcherIdleWindowClosesBatch(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	b := NewBatcher(clk, time.Second, 10*time.Second)
	done := waitResult(b)
	armed(t, b, clk, 1)
	b.Trigger("a")
	armed(t, b, clk, 2)
	clk.Step(999 * time.Millisecond)
	time.Sleep(10 * time.Millisecond)
	if closed(done) {
		t.Fatal("batch closed before the idle window passed")
	}
	clk.Step(time.Millisecond)
	if !<-done {
		t.Fatal("batch did not close after the idle window")
	}
}

func TestBatcherTriggersExtendUpToMax(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	b := NewBatcher(clk, time.Second, 3*time.Second)
	done := waitResult(b)
	armed(t, b, clk, 1)
	b.Trigger("p0")
	armed(t, b, clk, 2)
	n := int64(2)
	// A pod every 900ms keeps the idle window open; the max closes it at 3s.
	for i := 1; i <= 3; i++ {
		clk.Step(900 * time.Millisecond)
		if i > 1 {
			// The idle timer armed for the previous pod fired and re-armed.
			n++
			armed(t, b, clk, n)
		}
		if closed(done) {
			t.Fatalf("batch closed at %s although pods kept arriving", time.Duration(i)*900*time.Millisecond)
		}
		b.Trigger(types.UID(rune('a' + i)))
	}
	clk.Step(299 * time.Millisecond) // 2.999s: idle timer fires, re-arms for the max
	n++
	armed(t, b, clk, n)
	if closed(done) {
		t.Fatal("batch closed before the max duration")
	}
	clk.Step(time.Millisecond)
	if !<-done {
		t.Fatal("batch did not close at the max duration")
	}
}

func TestBatcherIgnoresDuplicatePods(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	b := NewBatcher(clk, time.Second, 10*time.Second)
	done := waitResult(b)
	armed(t, b, clk, 1)
	b.Trigger("same")
	armed(t, b, clk, 2)
	clk.Step(900 * time.Millisecond)
	b.Trigger("same") // must not extend the window
	clk.Step(100 * time.Millisecond)
	if !<-done {
		t.Fatal("batch did not close")
	}
	// The next batch accepts the same pod again.
	done = waitResult(b)
	armed(t, b, clk, 3)
	b.Trigger("same")
	armed(t, b, clk, 4)
	clk.Step(time.Second)
	if !<-done {
		t.Fatal("second batch did not open for the same pod")
	}
}

func TestBatcherWakesWithoutTriggers(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	b := NewBatcher(clk, time.Second, 10*time.Second)
	done := make(chan bool, 1)
	go func() { done <- b.Wait(context.Background()) }()
	armed(t, b, clk, 1)
	clk.Step(idleWake)
	if <-done {
		t.Fatal("Wait reported a batch without triggers")
	}
}
