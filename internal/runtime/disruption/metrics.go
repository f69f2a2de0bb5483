package disruption

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "voluntary_disruption", Name: "decisions_total",
		Help: "Disruption decisions carried out, by decision (delete, replace), reason and consolidation type.",
	}, []string{"decision", "reason", "consolidation_type"})
	eligibleNodes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "joist", Subsystem: "voluntary_disruption", Name: "eligible_nodes",
		Help: "Nodes eligible for disruption in the last pass, by reason.",
	}, []string{"reason"})
	evaluationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "joist", Subsystem: "voluntary_disruption", Name: "decision_evaluation_duration_seconds",
		Help: "Time to evaluate a disruption method, by method.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"method"})
	queueFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "voluntary_disruption", Name: "queue_failures_total",
		Help: "Disruption commands abandoned after they started, by method.",
	}, []string{"method"})
	failedValidations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "voluntary_disruption", Name: "failed_validations_total",
		Help: "Consolidation and emptiness commands dropped by their delayed validation, by method.",
	}, []string{"method"})
	allowedDisruptions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "joist", Subsystem: "nodepools", Name: "allowed_disruptions",
		Help: "Nodes each NodePool may still start disrupting, by reason.",
	}, []string{"nodepool", "reason"})
	nodeClaimsDisrupted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "nodeclaims", Name: "disrupted_total",
		Help: "NodeClaims deleted by disruption, by reason, NodePool and capacity type.",
	}, []string{"reason", "nodepool", "capacity_type"})
	podsDisruptionInitiated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "pods", Name: "disruption_initiated_total",
		Help: "Pods whose node disruption started, by reason.",
	}, []string{"reason"})
)

func init() {
	crmetrics.Registry.MustRegister(decisions, eligibleNodes, evaluationDuration, queueFailures, failedValidations,
		allowedDisruptions, nodeClaimsDisrupted, podsDisruptionInitiated)
}

// NodeClaimsDisrupted counts NodeClaims deleted by a disruption method; the
// expiration controller reports through it too.
func NodeClaimsDisrupted(reason, nodepool, capacityType string) {
	nodeClaimsDisrupted.WithLabelValues(reason, nodepool, capacityType).Inc()
}
