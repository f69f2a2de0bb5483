package termination

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/pods"
)

// DrainPlan is what one drain pass does to a node's pods.
type DrainPlan struct {
	// Delete are pods whose deletion deadline passed: they are deleted
	// with GracePeriod (seconds) so they still finish before the node's
	// deadline, regardless of PDBs and do-not-disrupt.
	Delete []PodDeletion
	// Evict are the pods of the current tier to evict.
	Evict []*corev1.Pod
	// Waiting are drainable pods not acted on in this pass: terminating,
	// protected by do-not-disrupt, or in a later tier.
	Waiting []*corev1.Pod
	// Tier is the tier being drained.
	Tier Tier
}

// PodDeletion is a forced pod deletion.
type PodDeletion struct {
	Pod         *corev1.Pod
	GracePeriod int64
}

// Done is true when no drainable pod is left.
func (p DrainPlan) Done() bool {
	return len(p.Delete) == 0 && len(p.Evict) == 0 && len(p.Waiting) == 0
}

// PlanDrain decides the pass for a node's pods. deadline is the node's
// termination deadline (nil: none). A pod whose own deletion deadline
// (deadline - its terminationGracePeriodSeconds) has passed is deleted at
// once in any tier; the rest are evicted tier by tier, a tier starting only
// once every earlier tier is empty.
func PlanDrain(onNode []*corev1.Pod, deadline *time.Time, now time.Time) DrainPlan {
	var plan DrainPlan
	var byTier [tiers][]*corev1.Pod
	for _, pod := range onNode {
		if !pods.IsDrainable(pod, now) {
			continue
		}
		if deadline != nil {
			if grace, due := deletionDue(pod, *deadline, now); due {
				if pod.DeletionGracePeriodSeconds == nil || *pod.DeletionGracePeriodSeconds > grace {
					plan.Delete = append(plan.Delete, PodDeletion{Pod: pod, GracePeriod: grace})
				} else {
					plan.Waiting = append(plan.Waiting, pod)
				}
				continue
			}
		}
		byTier[TierOf(pod)] = append(byTier[TierOf(pod)], pod)
	}
	current := -1
	for t := range byTier {
		if len(byTier[t]) == 0 {
			continue
		}
		if current < 0 {
			current = t
			plan.Tier = Tier(t)
			for _, pod := range byTier[t] {
				if pod.DeletionTimestamp != nil || pods.DoNotDisrupt(pod, now) {
					plan.Waiting = append(plan.Waiting, pod)
				} else {
					plan.Evict = append(plan.Evict, pod)
				}
			}
			continue
		}
		plan.Waiting = append(plan.Waiting, byTier[t]...)
	}
	return plan
}

// deletionDue reports whether the pod must be deleted now to finish before
// deadline, and the grace period left to it: the time to the deadline, at
// most its own terminationGracePeriodSeconds.
func deletionDue(pod *corev1.Pod, deadline, now time.Time) (int64, bool) {
	podGrace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		podGrace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if now.Before(deadline.Add(-time.Duration(podGrace) * time.Second)) {
		return 0, false
	}
	left := int64(deadline.Sub(now) / time.Second)
	return max(0, min(left, podGrace)), true
}

// Tier is the drain order of a pod, lowest first. It mirrors the kubelet's
// graceful node shutdown: workloads leave before the daemons that serve
// them, and critical pods leave last.
type Tier int

const (
	TierNonCritical Tier = iota
	TierNonCriticalDaemon
	TierCritical
	TierCriticalDaemon
	tiers
)

// TierOf is the drain tier of pod.
func TierOf(pod *corev1.Pod) Tier {
	t := TierNonCritical
	if pods.IsCritical(pod) {
		t = TierCritical
	}
	if pods.IsOwnedByDaemonSet(pod) {
		t++
	}
	return t
}
