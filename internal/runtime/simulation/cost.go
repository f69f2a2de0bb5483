package simulation

import (
	"math"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// podDeletionCostAnnotation is the ReplicaSet controller's hint of how
// expensive deleting a pod is.
const podDeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// EvictionCost is how costly it is to evict pod: 1, adjusted by its
// pod-deletion-cost and priority, clamped to [-10, 10].
func EvictionCost(pod *corev1.Pod) float64 {
	cost := 1.0
	if s, ok := pod.Annotations[podDeletionCostAnnotation]; ok {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			cost += v / math.Pow(2, 27)
		}
	}
	if pod.Spec.Priority != nil {
		cost += float64(*pod.Spec.Priority) / math.Pow(2, 25)
	}
	return max(-10, min(10, cost))
}

// ReschedulingCost is the summed eviction cost of the pods.
func ReschedulingCost(pods []*corev1.Pod) float64 {
	var sum float64
	for _, p := range pods {
		sum += EvictionCost(p)
	}
	return sum
}

// BaseRescheduleCost is the reschedule cost of a node whose pods cost
// nothing to move.
const BaseRescheduleCost = 1.0

// RescheduleCost is 1 plus the positive eviction costs of the pods: pods
// whose owners marked them cheap to lose (non-positive cost) add nothing.
func RescheduleCost(pods []*corev1.Pod) float64 {
	cost := BaseRescheduleCost
	for _, p := range pods {
		cost += max(0, EvictionCost(p))
	}
	return cost
}

// LifetimeRemaining is the share of the claim's expireAfter still ahead of
// it, in [0, 1]; 1 when it never expires. Nodes near expiry are cheaper to
// disrupt: they are going soon anyway.
func LifetimeRemaining(claim *v1.NodeClaim, now time.Time) float64 {
	if claim.Spec.ExpireAfter.Duration == nil || *claim.Spec.ExpireAfter.Duration <= 0 {
		return 1
	}
	total := *claim.Spec.ExpireAfter.Duration
	left := total - now.Sub(claim.CreationTimestamp.Time)
	return max(0, min(1, float64(left)/float64(total)))
}

// DisruptionCost is the cost of disrupting a node running pods: their
// rescheduling cost scaled by the claim's remaining lifetime.
func DisruptionCost(claim *v1.NodeClaim, pods []*corev1.Pod, now time.Time) float64 {
	return ReschedulingCost(pods) * LifetimeRemaining(claim, now)
}
