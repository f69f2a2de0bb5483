package testenv

import (
	"context"
	"testing"
	"time"
)

// Eventually polls cond every 100 ms until it returns nil, and fails the
// test with what and cond's last error once ctx ends.
func Eventually(t testing.TB, ctx context.Context, what string, cond func() error) {
	t.Helper()
	var err error
	for {
		if err = cond(); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
