// Package metrics holds the runtime's Prometheus series that several
// controllers share. A series Karpenter has is served under Karpenter's
// name (namespace karpenter), labels and buckets, so its dashboards and
// alerts work unchanged; series only Joist has use the joist namespace.
// Series a single controller owns are declared beside it. Everything is
// registered on controller-runtime's registry, which the manager serves on
// /metrics.
package metrics

import (
	"regexp"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// Namespaces: Karpenter's for the series it has, Joist's for the rest.
const (
	Namespace      = "karpenter"
	JoistNamespace = "joist"
)

// Label names (Karpenter's).
const (
	LabelNodePool            = "nodepool"
	LabelReason              = "reason"
	LabelResourceType        = "resource_type"
	LabelCapacityType        = "capacity_type"
	LabelZone                = "zone"
	LabelMinValuesRelaxed    = "min_values_relaxed"
	LabelConsolidationPolicy = "consolidation_policy"
	LabelTerminationMode     = "termination_mode"
	LabelController          = "controller"
	LabelMethod              = "method"
	LabelProvider            = "provider"
	LabelError               = "error"
)

// Reasons besides the disruption reasons: a NodeClaim created for pending
// pods, one deleted at its expireAfter.
const (
	ReasonProvisioned = "provisioned"
	ReasonExpired     = "expired"
)

// Termination modes of a disrupted NodeClaim: no terminationGracePeriod
// (graceful), a positive one (eventual) or zero (forceful).
const (
	TerminationModeGraceful = "graceful"
	TerminationModeEventual = "eventual"
	TerminationModeForceful = "forceful"
)

// DurationBuckets are Karpenter's buckets for durations in seconds:
// controller-runtime's, extended past a minute for singleton loops.
func DurationBuckets() []float64 {
	return []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
		1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60, 120, 150, 300, 450, 600}
}

// SummaryObjectives are Karpenter's summary quantiles: min, median, p90,
// p99 and max, each within 1%.
func SummaryObjectives() map[float64]float64 {
	return map[float64]float64{0: 0.01, 0.5: 0.01, 0.9: 0.01, 0.99: 0.01, 1: 0.01}
}

var (
	// NodeClaimsCreated counts NodeClaims created, by why (provisioned, or
	// the disruption reason of a replacement).
	NodeClaimsCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "nodeclaims", Name: "created_total",
		Help: "NodeClaims created, by reason (provisioned or the replaced node's disruption reason), NodePool and whether minValues was relaxed.",
	}, []string{LabelReason, LabelNodePool, LabelMinValuesRelaxed})
	// NodeClaimsTerminated counts NodeClaims whose finalizer was released.
	NodeClaimsTerminated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "nodeclaims", Name: "terminated_total",
		Help: "NodeClaims terminated, by NodePool, capacity type and zone.",
	}, []string{LabelNodePool, LabelCapacityType, LabelZone})
	// NodeClaimsDisrupted counts NodeClaims deleted by a disruption method,
	// expiration or an interruption.
	NodeClaimsDisrupted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "nodeclaims", Name: "disrupted_total",
		Help: "NodeClaims disrupted, by reason, NodePool, capacity type, consolidation policy and termination mode.",
	}, []string{LabelReason, LabelNodePool, LabelCapacityType, LabelConsolidationPolicy, LabelTerminationMode})
	// PodsDisruptionInitiated counts the reschedulable pods of disrupted
	// NodeClaims.
	PodsDisruptionInitiated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "pods", Name: "disruption_initiated_total",
		Help: "Pods whose node's disruption started (DaemonSet and mirror pods excluded), by the same labels as karpenter_nodeclaims_disrupted_total.",
	}, []string{LabelReason, LabelNodePool, LabelCapacityType, LabelConsolidationPolicy, LabelTerminationMode})
	// NodesCreated counts Nodes registered for a NodeClaim.
	NodesCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "nodes", Name: "created_total",
		Help: "Nodes registered, by NodePool and zone.",
	}, []string{LabelNodePool, LabelZone})
	// NodesTerminated counts Nodes whose termination finalizer was released.
	NodesTerminated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "nodes", Name: "terminated_total",
		Help: "Nodes terminated, by NodePool and zone.",
	}, []string{LabelNodePool, LabelZone})
	// SchedulingDuration times one scheduling simulation, by the
	// controller that ran it (provisioner, disruption).
	SchedulingDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "scheduler", Name: "scheduling_duration_seconds",
		Help:    "Duration of scheduling simulations (provisioning passes and disruption simulations), by controller.",
		Buckets: DurationBuckets(),
	}, []string{LabelController})
	// UnschedulablePods is the number of pods the last pass could not place.
	UnschedulablePods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "scheduler", Name: "unschedulable_pods_count",
		Help: "Pods the last scheduling simulation of the controller could not place.",
	}, []string{LabelController})

	// Joist-only series.

	// NodeClaimsLaunched counts NodeClaims whose instance was launched.
	NodeClaimsLaunched = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: JoistNamespace, Subsystem: "nodeclaims", Name: "launched_total",
		Help: "NodeClaims whose instance was launched, by NodePool.",
	}, []string{LabelNodePool})
	// NodeClaimsRegistered counts NodeClaims whose Node registered.
	NodeClaimsRegistered = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: JoistNamespace, Subsystem: "nodeclaims", Name: "registered_total",
		Help: "NodeClaims whose Node registered, by NodePool.",
	}, []string{LabelNodePool})
	// NodeClaimsInitialized counts NodeClaims whose Node became usable.
	NodeClaimsInitialized = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: JoistNamespace, Subsystem: "nodeclaims", Name: "initialized_total",
		Help: "NodeClaims whose Node initialized, by NodePool.",
	}, []string{LabelNodePool})
	// PendingPods is the number of provisionable pods in the last pass.
	PendingPods = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: JoistNamespace, Subsystem: "scheduler", Name: "pending_pods",
		Help: "Provisionable pending pods seen by the last provisioning pass.",
	})
)

func init() {
	crmetrics.Registry.MustRegister(
		NodeClaimsCreated, NodeClaimsTerminated, NodeClaimsDisrupted, PodsDisruptionInitiated, NodesCreated, NodesTerminated,
		SchedulingDuration, UnschedulablePods,
		NodeClaimsLaunched, NodeClaimsRegistered, NodeClaimsInitialized, PendingPods,
	)
}

// Disrupted counts a NodeClaim deleted for reason (a disruption reason,
// Expired, or an interruption kind) in karpenter_nodeclaims_disrupted_total
// and its reschedulable pods in karpenter_pods_disruption_initiated_total.
// pool is nil when the NodePool is unknown.
func Disrupted(reason string, claim *v1.NodeClaim, pool *v1.NodePool, reschedulable int) {
	labels := prometheus.Labels{
		LabelReason:              strings.ToLower(reason),
		LabelNodePool:            claim.Labels[v1.NodePoolLabelKey],
		LabelCapacityType:        claim.Labels[v1.CapacityTypeLabelKey],
		LabelConsolidationPolicy: "",
		LabelTerminationMode:     TerminationMode(claim),
	}
	if pool != nil {
		labels[LabelConsolidationPolicy] = SnakeCase(string(pool.Spec.Disruption.ConsolidationPolicy))
	}
	NodeClaimsDisrupted.With(labels).Inc()
	PodsDisruptionInitiated.With(labels).Add(float64(reschedulable))
}

// TerminationMode is how a deleted claim is drained: without a
// terminationGracePeriod gracefully, with a positive one eventually, with
// zero forcefully.
func TerminationMode(claim *v1.NodeClaim) string {
	switch tgp := claim.Spec.TerminationGracePeriod; {
	case tgp == nil:
		return TerminationModeGraceful
	case tgp.Duration <= 0:
		return TerminationModeForceful
	}
	return TerminationModeEventual
}

var (
	firstCap = regexp.MustCompile("(.)([A-Z][a-z]+)")
	allCap   = regexp.MustCompile("([a-z0-9])([A-Z])")
)

// SnakeCase writes a CamelCase value as Karpenter's label values are
// written: WhenEmptyOrUnderutilized is when_empty_or_underutilized.
func SnakeCase(s string) string {
	return strings.ToLower(allCap.ReplaceAllString(firstCap.ReplaceAllString(s, "${1}_${2}"), "${1}_${2}"))
}

// CreatedLabels are the karpenter_nodeclaims_created_total labels of a new
// claim created for reason.
func CreatedLabels(reason string, claim *v1.NodeClaim) prometheus.Labels {
	relaxed := claim.Annotations[v1.NodeClaimMinValuesRelaxedAnnotationKey]
	if relaxed == "" {
		relaxed = "false"
	}
	return prometheus.Labels{LabelReason: strings.ToLower(reason), LabelNodePool: claim.Labels[v1.NodePoolLabelKey], LabelMinValuesRelaxed: relaxed}
}
