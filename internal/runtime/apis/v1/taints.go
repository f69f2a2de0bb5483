package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Taint keys the runtime owns.
const (
	DisruptedTaintKey    = Group + "/disrupted"
	UnregisteredTaintKey = Group + "/unregistered"
)

var (
	// DisruptedNoScheduleTaint is put on a node chosen for disruption or
	// termination; pods tolerating it are not evicted.
	DisruptedNoScheduleTaint = corev1.Taint{Key: DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}

	// UnregisteredNoExecuteTaint must be present when the kubelet registers;
	// the runtime removes it once it has synced labels and taints.
	UnregisteredNoExecuteTaint = corev1.Taint{Key: UnregisteredTaintKey, Effect: corev1.TaintEffectNoExecute}

	// KnownEphemeralTaints are taints other components add and remove while a
	// node starts; a NodeClaim is not Initialized while any of them is present.
	KnownEphemeralTaints = []corev1.Taint{
		{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
		{Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule},
		UnregisteredNoExecuteTaint,
	}
)

// KnownEphemeralTaintKeyPrefix marks readiness-gate taints (any key with this
// prefix) that also keep a NodeClaim from becoming Initialized.
const KnownEphemeralTaintKeyPrefix = "readiness.k8s.io/"

// ApplyDisruptedTaint sets the disrupted taint and the load-balancer
// exclusion label on node; it reports whether anything changed.
func ApplyDisruptedTaint(node *corev1.Node) bool {
	before := node.DeepCopy()
	taints := []corev1.Taint{DisruptedNoScheduleTaint}
	for _, t := range node.Spec.Taints {
		if t.Key != DisruptedTaintKey {
			taints = append(taints, t)
		}
	}
	node.Spec.Taints = taints
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	node.Labels[NodeExcludeFromExternalLoadBalancersLabelKey] = NodeExcludeFromExternalLoadBalancersLabelValue
	return !equality.Semantic.DeepEqual(before.Spec.Taints, node.Spec.Taints) || !equality.Semantic.DeepEqual(before.Labels, node.Labels)
}

// HasDisruptedTaint reports whether the node carries the disrupted taint.
func HasDisruptedTaint(node *corev1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.MatchTaint(&DisruptedNoScheduleTaint) {
			return true
		}
	}
	return false
}
