// Package events names the Kubernetes events the runtime emits for users and
// records them through one Recorder, so reasons stay Karpenter-compatible.
package events

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
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
)

// Actions, the verb the events API asks for.
const (
	ActionScheduling = "Scheduling"
	ActionLaunching  = "Launching"
	ActionRegister   = "Registering"
	ActionInitialize = "Initializing"
	ActionDelete     = "Deleting"
)

// Recorder emits the runtime's events. A nil Recorder drops them, so pure
// code paths can be exercised without an event sink.
type Recorder struct{ r events.EventRecorder }

// NewRecorder wraps an events API recorder (manager.GetEventRecorder).
func NewRecorder(r events.EventRecorder) *Recorder { return &Recorder{r: r} }

func (rec *Recorder) emit(obj runtime.Object, kind, reason, action, format string, args ...any) {
	if rec == nil || rec.r == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	// The events API limits notes to 1 KiB.
	if len(msg) > 1000 {
		msg = msg[:997] + "..."
	}
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

// PodNominated tells a pod where it will run.
func (rec *Recorder) PodNominated(pod *corev1.Pod, kind, target string) {
	rec.Normal(pod, Nominated, ActionScheduling, "Pod should schedule on: %s/%s", kind, target)
}

// PodFailedScheduling tells a pod why no NodePool can serve it.
func (rec *Recorder) PodFailedScheduling(pod *corev1.Pod, err error) {
	rec.Warning(pod, FailedScheduling, ActionScheduling, "Failed to schedule pod, %s", err)
}
