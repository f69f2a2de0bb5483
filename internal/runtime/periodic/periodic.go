// Package periodic runs a controller's pass at a fixed interval, the loop
// of the leader-only controllers that poll rather than watch.
package periodic

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// Run calls pass, then waits interval on clk, until ctx ends. A failed
// pass is logged as what failed and the next one runs on schedule: the
// pass is idempotent and a transient error must not stop the loop.
func Run(ctx context.Context, clk clock.Clock, interval time.Duration, logger logr.Logger, what string, pass func(context.Context) error) error {
	for ctx.Err() == nil {
		if err := pass(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, what)
		}
		select {
		case <-ctx.Done():
		case <-clk.After(interval):
		}
	}
	return nil
}
