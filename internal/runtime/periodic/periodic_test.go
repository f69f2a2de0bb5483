package periodic

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	clocktesting "k8s.io/utils/clock/testing"
)

// A failing pass is logged and the loop goes on at the interval; it ends
// with its context.
func TestRunKeepsGoingAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	clk := clocktesting.NewFakeClock(time.Now())
	passes := make(chan int, 10)
	var logged []string
	logger := funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{})
	n := 0
	done := make(chan error)
	go func() {
		done <- Run(ctx, clk, time.Minute, logger, "the pass", func(context.Context) error {
			n++
			passes <- n
			if n == 1 {
				return errors.New("boom")
			}
			return nil
		})
	}()
	<-passes
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	clk.Step(time.Minute)
	if got := <-passes; got != 2 {
		t.Fatalf("pass %d after one interval, want 2", got)
	}
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run returned %v when its context ended", err)
	}
	if len(logged) != 1 {
		t.Errorf("logged %q, want the one failed pass", logged)
	}
}
