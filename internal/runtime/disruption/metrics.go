package disruption

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
)

// Label names of the voluntary disruption series (Karpenter's).
const (
	labelDecision          = "decision"
	labelConsolidationType = "consolidation_type"
	labelPolicy            = "policy"
	labelCondition         = "condition"
	labelImageID           = "image_id"
)

var (
	decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace, Subsystem: "voluntary_disruption", Name: "decisions_total",
		Help: "Disruption decisions carried out, by decision (delete, replace), reason and consolidation type.",
	}, []string{labelDecision, metrics.LabelReason, labelConsolidationType})
	eligibleNodes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: metrics.Namespace, Subsystem: "voluntary_disruption", Name: "eligible_nodes",
		Help: "Nodes eligible for disruption in the last pass, by reason.",
	}, []string{metrics.LabelReason})
	evaluationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: metrics.Namespace, Subsystem: "voluntary_disruption", Name: "decision_evaluation_duration_seconds",
		Help:    "Time to evaluate a disruption method, by reason and consolidation type.",
		Buckets: metrics.DurationBuckets(),
	}, []string{metrics.LabelReason, labelConsolidationType})
	queueFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace, Subsystem: "voluntary_disruption", Name: "queue_failures_total",
		Help: "Disruption commands abandoned after they started, by decision, reason and consolidation type.",
	}, []string{labelDecision, metrics.LabelReason, labelConsolidationType})
	consolidationTimeouts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace, Subsystem: "voluntary_disruption", Name: "consolidation_timeouts_total",
		Help: "Consolidation evaluations cut short by their time limit, by consolidation type.",
	}, []string{labelConsolidationType})
	failedValidations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace, Subsystem: "voluntary_disruption", Name: "failed_validations_total",
		Help: "Consolidation and emptiness commands dropped by their delayed validation, by consolidation type.",
	}, []string{labelConsolidationType})
	consolidationMoves = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace, Name: "consolidation_moves_total",
		Help: "Consolidation moves considered, by decision (approved, rejected by the Balanced score), NodePool and consolidation policy.",
	}, []string{labelDecision, metrics.LabelNodePool, labelPolicy})
	consolidationScore = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: metrics.Namespace, Name: "consolidation_score",
		Help:    "Scores of moves in Balanced NodePools, by decision, NodePool and consolidation policy.",
		Buckets: []float64{0.1, 0.25, 0.33, 0.5, 1.0, 2.0, 5.0, 10.0},
	}, []string{labelDecision, metrics.LabelNodePool, labelPolicy})
	unhealthyDisrupted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace, Subsystem: "nodeclaims", Name: "unhealthy_disrupted_total",
		Help: "Unhealthy NodeClaims disrupted by node repair, by the condition repaired, nodepool, capacity type, image ID and termination mode.",
	}, []string{labelCondition, metrics.LabelNodePool, metrics.LabelCapacityType, labelImageID, metrics.LabelTerminationMode})
	allowedDisruptions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: metrics.Namespace, Subsystem: "nodepools", Name: "allowed_disruptions",
		Help: "Nodes each NodePool may still start disrupting, by reason.",
	}, []string{metrics.LabelNodePool, metrics.LabelReason})
)

func init() {
	crmetrics.Registry.MustRegister(decisions, eligibleNodes, evaluationDuration, queueFailures, consolidationTimeouts,
		failedValidations, allowedDisruptions, consolidationMoves, consolidationScore, unhealthyDisrupted)
	// The series of every method exist from the start, at zero.
	for _, m := range methods {
		reason := reasonLabel(m.reason)
		eligibleNodes.WithLabelValues(reason)
		ct := consolidationTypeOf(m.name)
		for _, d := range []string{"delete", "replace"} {
			decisions.WithLabelValues(d, reason, ct)
			queueFailures.WithLabelValues(d, reason, ct)
		}
		if ct != "" {
			failedValidations.WithLabelValues(ct)
		}
		if m.name == MethodMultiNode || m.name == MethodSingleNode {
			consolidationTimeouts.WithLabelValues(ct)
		}
	}
}

// reasonLabel is a disruption reason as the series label it: lower case.
func reasonLabel(r v1.DisruptionReason) string { return strings.ToLower(string(r)) }

// consolidationTypeOf is the consolidation_type label of a method: empty,
// multi or single; "" for drift.
func consolidationTypeOf(method string) string {
	switch method {
	case MethodEmptiness:
		return "empty"
	case MethodMultiNode, MethodSingleNode:
		return method
	}
	return ""
}

// repaired counts a node repair carried out. The termination mode is the
// drain repair applied: its bound when it set one (0 is forceful), else
// the NodeClaim's own.
func repaired(c *Candidate) {
	mode := metrics.TerminationMode(c.NodeClaim)
	if b := c.DrainBound; b != nil {
		mode = metrics.TerminationModeEventual
		if *b <= 0 {
			mode = metrics.TerminationModeForceful
		}
	}
	unhealthyDisrupted.WithLabelValues(metrics.SnakeCase(string(c.Repair.Condition)), c.NodeClaim.Labels[v1.NodePoolLabelKey],
		c.NodeClaim.Labels[v1.CapacityTypeLabelKey], c.NodeClaim.Status.ImageID, mode).Inc()
}

// failedQueue counts a command abandoned after it started.
func failedQueue(cmd *Command) {
	queueFailures.WithLabelValues(cmd.Decision(), reasonLabel(cmd.Reason), consolidationTypeOf(cmd.Method)).Inc()
}

// observeMoves counts consolidation moves and reports approved Balanced
// ones (ConsolidationApproved), as Karpenter does; rejections are counted
// only, being the common case under Balanced.
func (c *Controller) observeMoves(ms []Move) {
	for _, m := range ms {
		decision := "approved"
		if !m.Approved {
			decision = "rejected"
		}
		policy := string(m.Pool.Spec.Disruption.ConsolidationPolicy)
		consolidationMoves.WithLabelValues(decision, m.Pool.Name, policy).Inc()
		if !m.Scored {
			continue
		}
		consolidationScore.WithLabelValues(decision, m.Pool.Name, policy).Observe(m.Score.Value())
		if !m.Approved {
			continue
		}
		msg := fmt.Sprintf("score %.2f >= threshold %.2f (k: %d, savings %.1f%%, disruption %.1f%%)",
			m.Score.Value(), 1.0/BalancedK, BalancedK, m.Score.SavingsFraction*100, m.Score.DisruptionFraction*100)
		if len(m.Candidates) > 1 {
			c.recorder.Normal(m.Pool, reasonConsolidationApproved, actionDisrupt, "%s", msg)
			continue
		}
		c.recorder.Normal(m.Candidates[0].Node, reasonConsolidationApproved, actionDisrupt, "%s", msg)
		c.recorder.Normal(m.Candidates[0].NodeClaim, reasonConsolidationApproved, actionDisrupt, "%s", msg)
	}
}
