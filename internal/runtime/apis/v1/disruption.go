package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Disruption configures how a NodePool's nodes are consolidated and how many
// may be disrupted at once.
type Disruption struct {
	// ConsolidateAfter is how long a node must go without pods being added or
	// removed before consolidation may take it; "Never" turns consolidation
	// (emptiness included) off for the pool. Ignored on a static pool.
	// +kubebuilder:default:="0s"
	// +kubebuilder:validation:Pattern=`^(([0-9]+(s|m|h))+|Never)$`
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:validation:Schemaless
	// +optional
	ConsolidateAfter NillableDuration `json:"consolidateAfter,omitempty"`
	// ConsolidationPolicy says which nodes consolidation may take: only empty
	// ones (WhenEmpty), empty and underutilized ones (WhenEmptyOrUnderutilized),
	// or those whose removal or replacement saves enough for the disruption it
	// causes (Balanced). Ignored on a static pool.
	// +kubebuilder:default:="WhenEmptyOrUnderutilized"
	// +kubebuilder:validation:Enum:={WhenEmpty,WhenEmptyOrUnderutilized,Balanced}
	// +optional
	ConsolidationPolicy ConsolidationPolicy `json:"consolidationPolicy,omitempty"`
	// Budgets cap how many nodes may be disrupting at once; with several
	// active budgets the smallest wins. Defaults to one budget of 10%.
	// +kubebuilder:validation:XValidation:message="'schedule' must be set with 'duration': give both to make a budget active in a window, or neither for always",rule="self.all(x, has(x.schedule) == has(x.duration))"
	// +kubebuilder:default:={{nodes: "10%"}}
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	// +optional
	Budgets []Budget `json:"budgets,omitempty" hash:"ignore"`
}

// ConsolidationPolicy names the nodes consolidation may take.
type ConsolidationPolicy string

const (
	ConsolidationPolicyWhenEmpty                ConsolidationPolicy = "WhenEmpty"
	ConsolidationPolicyWhenEmptyOrUnderutilized ConsolidationPolicy = "WhenEmptyOrUnderutilized"
	// ConsolidationPolicyBalanced consolidates a node only when the saving
	// outweighs the disruption, scored as Karpenter's Balanced policy.
	ConsolidationPolicyBalanced ConsolidationPolicy = "Balanced"
)

// DisruptionReason is a graceful disruption method a budget may be limited to.
// +kubebuilder:validation:Enum:={Underutilized,Empty,Drifted,Unhealthy}
type DisruptionReason string

const (
	DisruptionReasonUnderutilized DisruptionReason = "Underutilized"
	DisruptionReasonEmpty         DisruptionReason = "Empty"
	DisruptionReasonDrifted       DisruptionReason = "Drifted"
	// DisruptionReasonUnhealthy is node repair: a node whose condition
	// matched a repair policy for longer than its toleration.
	DisruptionReasonUnhealthy DisruptionReason = "Unhealthy"
)

// DisruptionReasons lists every DisruptionReason.
var DisruptionReasons = []DisruptionReason{DisruptionReasonUnderutilized, DisruptionReasonEmpty, DisruptionReasonDrifted, DisruptionReasonUnhealthy}

// Budget limits how many of a pool's nodes may be disrupting at once, for
// some or all reasons, always or during a recurring window.
type Budget struct {
	// Reasons the budget applies to; all reasons when unset.
	// +kubebuilder:validation:MaxItems=50
	// +listType=set
	// +optional
	Reasons []DisruptionReason `json:"reasons,omitempty"`
	// Nodes is a count ("5") or a percentage of the pool's nodes ("10%",
	// rounded up) that may be disrupting at once.
	// +kubebuilder:validation:Pattern:="^((100|[0-9]{1,2})%|[0-9]+)$"
	// +kubebuilder:default:="10%"
	Nodes string `json:"nodes"`
	// Schedule is a cron expression (5 fields, or @yearly, @monthly, @weekly,
	// @daily, @midnight, @hourly) in UTC at which the budget becomes active.
	// Requires Duration.
	// +kubebuilder:validation:Pattern:=`^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$`
	// +optional
	Schedule *string `json:"schedule,omitempty"`
	// Duration is how long the budget stays active after each Schedule hit,
	// in hours and minutes ("1h30m"). Requires Schedule.
	// +kubebuilder:validation:Pattern=`^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$`
	// +kubebuilder:validation:Type="string"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
}
