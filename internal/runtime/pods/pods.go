package pods

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// stuckTerminating is how long past its deletion a pod may linger before
// the drain stops waiting for it (its kubelet is probably gone).
const stuckTerminating = time.Minute

// IsCritical is true for pods of the system-cluster-critical and
// system-node-critical priority classes.
func IsCritical(pod *corev1.Pod) bool {
	return pod.Spec.PriorityClassName == "system-cluster-critical" || pod.Spec.PriorityClassName == "system-node-critical"
}

// IsOwnedByDaemonSet is true for pods an apps/v1 DaemonSet owns (as
// Karpenter checks it: any owner reference, not only the controller).
func IsOwnedByDaemonSet(pod *corev1.Pod) bool {
	for _, o := range pod.OwnerReferences {
		if o.Kind == "DaemonSet" && o.APIVersion == "apps/v1" {
			return true
		}
	}
	return false
}

// IsMirror is true for the apiserver's copies of static pods.
func IsMirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]
	return ok
}

// IsTerminal is true for pods that finished.
func IsTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// ToleratesDisruptedTaint is true for pods that would stay on a disrupted
// node anyway; the drain leaves them alone.
func ToleratesDisruptedTaint(pod *corev1.Pod) bool {
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].ToleratesTaint(klog.Background(), &v1.DisruptedNoScheduleTaint, false) {
			return true
		}
	}
	return false
}

// IsStuckTerminating is true for pods deleted more than a minute ago.
func IsStuckTerminating(pod *corev1.Pod, now time.Time) bool {
	return pod.DeletionTimestamp != nil && now.Sub(pod.DeletionTimestamp.Time) > stuckTerminating
}

// IsDrainable is true for the pods a drain must see gone: active, not
// mirror pods, not tolerating the disrupted taint, not stuck terminating.
func IsDrainable(pod *corev1.Pod, now time.Time) bool {
	return !IsTerminal(pod) && !IsMirror(pod) && !ToleratesDisruptedTaint(pod) && !IsStuckTerminating(pod, now)
}

// HasDoNotDisrupt reports whether the pod's karpenter.sh/do-not-disrupt
// annotation protects it at now: "true" always does; a positive Go duration
// does until that long after the pod started. ok is false for an invalid
// value, which protects nothing.
func HasDoNotDisrupt(pod *corev1.Pod, now time.Time) (protected, ok bool) {
	value, set := pod.Annotations[v1.DoNotDisruptAnnotationKey]
	if !set {
		return false, true
	}
	if value == "true" {
		return true, true
	}
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 {
		return false, false
	}
	start := pod.CreationTimestamp.Time
	if pod.Status.StartTime != nil {
		start = pod.Status.StartTime.Time
	}
	return now.Before(start.Add(d)), true
}

// DoNotDisrupt is HasDoNotDisrupt without the validity flag.
func DoNotDisrupt(pod *corev1.Pod, now time.Time) bool {
	p, _ := HasDoNotDisrupt(pod, now)
	return p
}

// IsCrashLooping says whether one of the pod's containers (init containers
// included) is waiting in CrashLoopBackOff, as the kubelet reports a
// container that keeps exiting.
func IsCrashLooping(pod *corev1.Pod) bool {
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, s := range statuses {
			if s.State.Waiting != nil && s.State.Waiting.Reason == "CrashLoopBackOff" {
				return true
			}
		}
	}
	return false
}
