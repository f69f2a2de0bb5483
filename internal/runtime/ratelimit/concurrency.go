package ratelimit

import (
	"math"
	"sync/atomic"
)

// cpuMillis is the controller's CPU request (CPU_REQUESTS), set once at
// start before the controllers register.
var cpuMillis atomic.Int64

func init() { cpuMillis.Store(1000) }

// SetCPURequests records the controller's CPU request in millicores.
func SetCPURequests(millis int64) {
	if millis > 0 {
		cpuMillis.Store(millis)
	}
}

// Concurrency is a controller's worker count for the CPU request, scaled
// as Karpenter scales its reconcilers: base at one core (the default
// request) or less, growing linearly to 100 x base at 60 cores.
func Concurrency(base int) int { return ScaledConcurrency(cpuMillis.Load(), base) }

// ScaledConcurrency is Concurrency for a given request.
func ScaledConcurrency(millis int64, base int) int {
	cores := math.Ceil(float64(millis) / 1000)
	top := 100 * base
	n := base + int(float64(top-base)/59*(cores-1))
	return min(max(n, base), top)
}
