// Package ratelimit holds the retry rate limiter of the runtime's
// per-object controllers and their concurrency, which CPU_REQUESTS scales.
package ratelimit

import (
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// PerObject backs off each object on its own, from 5 ms up to a minute.
// controller-runtime's default adds a shared 10/s bucket, which at a few
// hundred NodeClaims turns routine write conflicts into tens of seconds of
// queueing for every claim behind them.
func PerObject() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, time.Minute)
}
