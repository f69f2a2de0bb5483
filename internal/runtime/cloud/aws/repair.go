package aws

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
)

// GPU fault families in the reason the EKS node monitoring agent writes on
// AcceleratedHardwareReady (an XID code somewhere in it). The transient
// family would be rebooted under AWS's RebootForRepair gate; Joist refuses
// that gate, so both families are replaced on the same timing.
const (
	transientXIDs = `.*XID(46|48|54|62|63|95|109|110|136|140|143|155|156|158).*`
	fatalXIDs     = `.*XID(64|74|79|119|120).*`
)

// RepairPolicies are Karpenter AWS v1.15's: the kubelet's Ready condition
// and the node monitoring agent's conditions, each tolerated for 30
// minutes (GPU faults with a known XID for 10), with a bounded drain so a
// wedged node cannot hold its repair forever.
func (p *Provider) RepairPolicies() []cloud.RepairPolicy {
	const long, short = 30 * time.Minute, 10 * time.Minute
	drain, gpuDrain := 10*time.Minute, 5*time.Minute
	policy := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string, toleration time.Duration, tgp *time.Duration) cloud.RepairPolicy {
		return cloud.RepairPolicy{ConditionType: t, ConditionStatus: s, ReasonRegex: reason,
			TolerationDuration: toleration, TerminationGracePeriod: tgp, Action: cloud.ReplaceNode}
	}
	return []cloud.RepairPolicy{
		policy(corev1.NodeReady, corev1.ConditionFalse, ".*", long, &drain),
		policy(corev1.NodeReady, corev1.ConditionUnknown, ".*", long, &drain),
		policy("AcceleratedHardwareReady", corev1.ConditionFalse, transientXIDs, short, &gpuDrain),
		policy("AcceleratedHardwareReady", corev1.ConditionFalse, fatalXIDs, short, &gpuDrain),
		// The set's fallback (no reason pattern): a GPU fault of no known
		// family waits as long as the other conditions.
		policy("AcceleratedHardwareReady", corev1.ConditionFalse, "", long, &drain),
		policy("StorageReady", corev1.ConditionFalse, ".*", long, &drain),
		policy("NetworkingReady", corev1.ConditionFalse, ".*", long, &drain),
		policy("KernelReady", corev1.ConditionFalse, ".*", long, &drain),
		policy("ContainerRuntimeReady", corev1.ConditionFalse, ".*", long, &drain),
	}
}
