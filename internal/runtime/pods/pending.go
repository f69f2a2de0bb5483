package pods

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// IsProvisionable reports whether pod is pending for lack of capacity, so
// that new nodes could help: kube-scheduler marked it Unschedulable (pods of
// other schedulers never get that reason), it is not bound, not preempting
// (no nominatedNodeName), not terminating, and neither a DaemonSet pod (those
// follow nodes) nor a static mirror pod.
func IsProvisionable(pod *corev1.Pod) bool {
	return pod.Spec.NodeName == "" &&
		pod.Status.NominatedNodeName == "" &&
		pod.DeletionTimestamp == nil &&
		!IsTerminal(pod) &&
		unschedulable(pod) &&
		!IsOwnedByDaemonSet(pod) &&
		!IsMirror(pod)
}

func unschedulable(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		}
	}
	return false
}

// IsReschedulable reports whether a pod on a node that is going away needs
// a new home: active, not a DaemonSet or mirror pod. Terminating pods are
// included only for StatefulSets, whose replacement keeps the same name.
func IsReschedulable(pod *corev1.Pod) bool {
	if IsTerminal(pod) || IsOwnedByDaemonSet(pod) || IsMirror(pod) {
		return false
	}
	if pod.DeletionTimestamp != nil {
		return ownedBy(pod, "StatefulSet")
	}
	return true
}

func ownedBy(pod *corev1.Pod, kind string) bool {
	c := metav1.GetControllerOf(pod)
	return c != nil && c.Kind == kind
}

// ExcludesManagedNodes reports pods that asked never to run on NodePool
// nodes (karpenter.sh/nodepool DoesNotExist in every required term); they
// are ignored without events.
func ExcludesManagedNodes(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return false
	}
	for _, t := range terms {
		found := false
		for _, e := range t.MatchExpressions {
			if e.Key == v1.NodePoolLabelKey && e.Operator == corev1.NodeSelectorOpDoesNotExist {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
