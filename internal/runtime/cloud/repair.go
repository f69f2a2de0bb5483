package cloud

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// RepairAction is what node repair does to a node once a policy applies.
type RepairAction string

// ReplaceNode launches a replacement (when pods need one) and deletes the
// node. It is the only action Joist performs; Karpenter's RebootNode sits
// behind the AWS RebootForRepair gate, which Joist refuses.
const ReplaceNode RepairAction = "Replace"

// RepairPolicy says when a node condition makes a node unhealthy enough to
// repair (Karpenter's cloudprovider.RepairPolicy).
type RepairPolicy struct {
	ConditionType   corev1.NodeConditionType
	ConditionStatus corev1.ConditionStatus
	// ReasonRegex is matched against the condition's reason. Empty marks
	// the set's one fallback, which applies to every listed condition type
	// and status whose reason no specific policy matches.
	ReasonRegex string
	// TolerationDuration is how long after the condition's last transition
	// the policy applies.
	TolerationDuration time.Duration
	// TerminationGracePeriod bounds the drain of a repaired node: nil keeps
	// the NodeClaim's own, otherwise min(this, the NodeClaim's); 0 skips
	// the drain.
	TerminationGracePeriod *time.Duration
	// Priority (0-100) orders repairs; higher first.
	Priority int
	Action   RepairAction
}
