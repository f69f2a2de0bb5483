// Package metrics holds the runtime's Prometheus metrics. They mirror
// Karpenter's meanings under the joist_ namespace and are registered on
// controller-runtime's registry, so the manager's /metrics serves them.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

const namespace = "joist"

// Label names.
const (
	LabelNodePool = "nodepool"
	LabelReason   = "reason"
	LabelMethod   = "method"
	LabelError    = "error"
)

var (
	// NodeClaimsCreated counts NodeClaims the provisioner created.
	NodeClaimsCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: "nodeclaims", Name: "created_total",
		Help: "NodeClaims created, by reason and NodePool.",
	}, []string{LabelReason, LabelNodePool})
	// NodeClaimsLaunched counts NodeClaims whose instance was launched.
	NodeClaimsLaunched = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: "nodeclaims", Name: "launched_total",
		Help: "NodeClaims whose instance was launched, by NodePool.",
	}, []string{LabelNodePool})
	// NodeClaimsRegistered counts NodeClaims whose Node registered.
	NodeClaimsRegistered = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: "nodeclaims", Name: "registered_total",
		Help: "NodeClaims whose Node registered, by NodePool.",
	}, []string{LabelNodePool})
	// NodeClaimsInitialized counts NodeClaims whose Node became usable.
	NodeClaimsInitialized = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: "nodeclaims", Name: "initialized_total",
		Help: "NodeClaims whose Node initialized, by NodePool.",
	}, []string{LabelNodePool})
	// NodeClaimsTerminated counts NodeClaims removed, by why.
	NodeClaimsTerminated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: "nodeclaims", Name: "terminated_total",
		Help: "NodeClaims terminated, by reason and NodePool.",
	}, []string{LabelReason, LabelNodePool})
	// SchedulingDuration times one provisioning scheduling pass.
	SchedulingDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: "scheduler", Name: "scheduling_duration_seconds",
		Help:    "Duration of a provisioning scheduling pass (snapshot, solve and NodeClaim creation).",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	})
	// PendingPods is the number of provisionable pods in the last pass.
	PendingPods = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Subsystem: "scheduler", Name: "pending_pods",
		Help: "Provisionable pending pods seen by the last scheduling pass.",
	})
	// UnschedulablePods is the number of pods the last pass could not place.
	UnschedulablePods = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Subsystem: "scheduler", Name: "unschedulable_pods_count",
		Help: "Pods the last scheduling pass could not place.",
	})
	// CloudDuration times cloud provider calls.
	CloudDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: "cloudprovider", Name: "duration_seconds",
		Help:    "Duration of cloud provider calls, by method.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{LabelMethod})
	// CloudErrors counts failed cloud provider calls.
	CloudErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: "cloudprovider", Name: "errors_total",
		Help: "Failed cloud provider calls, by method and error kind.",
	}, []string{LabelMethod, LabelError})
)

func init() {
	crmetrics.Registry.MustRegister(
		NodeClaimsCreated, NodeClaimsLaunched, NodeClaimsRegistered, NodeClaimsInitialized, NodeClaimsTerminated,
		SchedulingDuration, PendingPods, UnschedulablePods, CloudDuration, CloudErrors,
	)
}
