// Package events names the Kubernetes events the runtime emits for users and
// records them through one Recorder, so reasons stay Karpenter-compatible.
package events

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/ttlcache"
)

// Reasons (Karpenter's names).
const (
	Nominated                 = "Nominated"
	FailedScheduling          = "FailedScheduling"
	NoCompatibleInstanceTypes = "NoCompatibleInstanceTypes"
	InsufficientCapacityError = "InsufficientCapacityError"
	NodeClassNotReady         = "NodeClassNotReady"
	UnregisteredTaintMissing  = "UnregisteredTaintMissing"
	Launched                  = "Launched"
	Registered                = "Registered"
	Initialized               = "Initialized"
	FailedLaunch              = "FailedLaunch"
	GarbageCollected          = "GarbageCollected"
	InstanceTerminating       = "InstanceTerminating"
	// DisruptionTerminating is the disruption loop's and expiration's
	// reason for deleting a NodeClaim.
	DisruptionTerminating = "DisruptionTerminating"
	// RegistrationFailed is the reason Karpenter gives a NodePool's
	// NodeRegistrationHealthy condition when a node never registers.
	RegistrationFailed = "RegistrationFailed"
)

// Actions, the verb the events API asks for.
const (
	ActionScheduling = "Scheduling"
	ActionLaunching  = "Launching"
	ActionRegister   = "Registering"
	ActionInitialize = "Initializing"
	ActionDelete     = "Deleting"
	ActionLifecycle  = "Transitioning"
	ActionDisrupt    = "Disrupting"
)

const (
	// DedupeTimeout is how long an identical event (same object, reason
	// and message) is not emitted again, as in Karpenter: every scheduling
	// pass would otherwise repeat each pending pod's event.
	DedupeTimeout = 2 * time.Minute
	// Events beyond this rate are dropped. The events API client starts a
	// goroutine per event and retries; a burst it cannot send (10,000 pods
	// each told something every pass) piles up in memory and loads the API
	// server that the controller needs for its real work.
	eventQPS   = 100
	eventBurst = 500
	// Nominated events have a bucket of their own, Karpenter's (5/s, burst
	// 10): a scale-out nominates every pending pod, and a thousand event
	// writes at once compete with the NodeClaim and Node writes that bring
	// those pods up.
	nominationQPS   = 5
	nominationBurst = 10
)

// Recorder emits the runtime's events. A nil Recorder drops them, so pure
// code paths can be exercised without an event sink.
type Recorder struct {
	r           events.EventRecorder
	seen        *ttlcache.TTL[string, struct{}]
	limit       flowcontrol.RateLimiter
	nominations flowcontrol.RateLimiter
}

// NewRecorder wraps an events API recorder (manager.GetEventRecorder).
func NewRecorder(r events.EventRecorder) *Recorder {
	rec := newRecorder(r, time.Now, flowcontrol.NewTokenBucketRateLimiter(eventQPS, eventBurst))
	rec.nominations = flowcontrol.NewTokenBucketRateLimiter(nominationQPS, nominationBurst)
	return rec
}

func newRecorder(r events.EventRecorder, now func() time.Time, limit flowcontrol.RateLimiter) *Recorder {
	return &Recorder{r: r, seen: ttlcache.NewWithClock[string, struct{}](DedupeTimeout, now), limit: limit,
		nominations: flowcontrol.NewFakeAlwaysRateLimiter()}
}

func (rec *Recorder) emit(obj runtime.Object, kind, reason, action, format string, args ...any) {
	if rec == nil || rec.r == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	rec.send(obj, kind, reason, action, msg, reason+"\x00"+msg, nil)
}

// send emits msg unless an event with the same object and dedupe key went
// out within DedupeTimeout, or a rate limiter (the event's own, then the
// recorder's) drops it; a dropped event is not remembered as sent.
func (rec *Recorder) send(obj runtime.Object, kind, reason, action, msg, dedupe string, own flowcontrol.RateLimiter) {
	// The events API limits notes to 1 KiB.
	if len(msg) > 1000 {
		msg = msg[:997] + "..."
	}
	key := dedupe
	if m, err := meta.Accessor(obj); err == nil {
		key = string(m.GetUID()) + "\x00" + m.GetNamespace() + "/" + m.GetName() + "\x00" + key
	}
	if _, dup := rec.seen.Get(key); dup {
		return
	}
	if own != nil && !own.TryAccept() {
		return
	}
	if !rec.limit.TryAccept() {
		return
	}
	rec.seen.Set(key, struct{}{})
	rec.r.Eventf(obj, nil, kind, reason, action, "%s", msg)
}

// Normal records an informational event.
func (rec *Recorder) Normal(obj runtime.Object, reason, action, format string, args ...any) {
	rec.emit(obj, corev1.EventTypeNormal, reason, action, format, args...)
}

// Warning records a warning event.
func (rec *Recorder) Warning(obj runtime.Object, reason, action, format string, args ...any) {
	rec.emit(obj, corev1.EventTypeWarning, reason, action, format, args...)
}

// PodNominated tells a pod where it will run. As in Karpenter, a pod is
// told once per DedupeTimeout whatever its target, and nominations share
// their own rate limit.
func (rec *Recorder) PodNominated(pod *corev1.Pod, kind, target string) {
	if rec == nil || rec.r == nil {
		return
	}
	rec.send(pod, corev1.EventTypeNormal, Nominated, ActionScheduling, fmt.Sprintf("Pod should schedule on: %s/%s", kind, target), Nominated, rec.nominations)
}

// NoCompatibleInstanceTypes tells a NodePool that its requirements leave
// no instance type to launch, or (minValues) too few distinct values for a
// minValues requirement. Karpenter's messages.
func (rec *Recorder) NoCompatibleInstanceTypes(pool runtime.Object, minValues bool) {
	msg := "NodePool requirements filtered out all compatible available instance types"
	if minValues {
		msg += " due to minValues incompatibility"
	}
	rec.Warning(pool, NoCompatibleInstanceTypes, ActionScheduling, "%s", msg)
}

// PodFailedScheduling tells a pod why no NodePool can serve it.
func (rec *Recorder) PodFailedScheduling(pod *corev1.Pod, err error) {
	rec.Warning(pod, FailedScheduling, ActionScheduling, "Failed to schedule pod, %s", err)
}
