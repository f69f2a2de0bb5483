package v1

import corev1 "k8s.io/api/core/v1"

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
