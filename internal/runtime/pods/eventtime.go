package pods

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// EventTime is when the pod last changed what its node holds, as the pod
// itself records it: bound (its PodScheduled condition), finished (its
// containers' finish times) or started terminating (its deletion request).
// Reading the time from the pod rather than from the clock means that
// seeing a pod again (the informer's initial list after a restart, a
// resync) never moves the consolidation clock. ok is false for pods whose
// events do not count, as in Karpenter: unbound pods and DaemonSet pods,
// which every node runs and which a rollout replaces everywhere at once.
func EventTime(pod *corev1.Pod) (at time.Time, ok bool) {
	if pod.Spec.NodeName == "" || IsOwnedByDaemonSet(pod) {
		return time.Time{}, false
	}
	at = boundTime(pod)
	if IsTerminal(pod) {
		at = later(at, finishedTime(pod))
	}
	if pod.DeletionTimestamp != nil {
		requested := pod.DeletionTimestamp.Time
		if g := pod.DeletionGracePeriodSeconds; g != nil {
			// The deletion timestamp is the request plus the grace period.
			requested = requested.Add(-time.Duration(*g) * time.Second)
		}
		at = later(at, requested)
	}
	return at, !at.IsZero()
}

// boundTime is when the scheduler bound the pod; pods bound without the
// scheduler (nodeName set at creation) count from their start or creation.
func boundTime(pod *corev1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	if pod.Status.StartTime != nil {
		return pod.Status.StartTime.Time
	}
	return pod.CreationTimestamp.Time
}

// finishedTime is when the last container of a terminal pod stopped.
func finishedTime(pod *corev1.Pod) time.Time {
	var at time.Time
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, s := range statuses {
			if t := s.State.Terminated; t != nil {
				at = later(at, t.FinishedAt.Time)
			}
		}
	}
	return at
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
