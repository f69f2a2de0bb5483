package termination

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
)

// ForcefulTermination is the drain reason of pods on a node no disruption
// method chose (deleted by hand, expired, interrupted, ...), Karpenter's.
const ForcefulTermination = "Forceful Termination"

const day = 24 * time.Hour

// Karpenter's node lifetime buckets: 15 minutes to 30 days.
var lifetimeBuckets = []float64{
	(15 * time.Minute).Seconds(), (30 * time.Minute).Seconds(), (45 * time.Minute).Seconds(),
	time.Hour.Seconds(), (2 * time.Hour).Seconds(), (4 * time.Hour).Seconds(), (6 * time.Hour).Seconds(),
	(8 * time.Hour).Seconds(), (10 * time.Hour).Seconds(), (12 * time.Hour).Seconds(), (16 * time.Hour).Seconds(),
	(20 * time.Hour).Seconds(), day.Seconds(), (2 * day).Seconds(), (3 * day).Seconds(), (5 * day).Seconds(),
	(10 * day).Seconds(), (15 * day).Seconds(), (20 * day).Seconds(), (25 * day).Seconds(), (30 * day).Seconds(),
}

var (
	nodesTerminationDuration = prometheus.NewSummaryVec(prometheus.SummaryOpts{
		Namespace: metrics.Namespace, Subsystem: "nodes", Name: "termination_duration_seconds",
		Help: "Time from a Node's deletion to the release of its finalizer, by NodePool.", Objectives: metrics.SummaryObjectives(),
	}, []string{metrics.LabelNodePool})
	nodesLifetime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: metrics.Namespace, Subsystem: "nodes", Name: "lifetime_duration_seconds",
		Help: "Time from a Node's creation to the release of its finalizer, by NodePool.", Buckets: lifetimeBuckets,
	}, []string{metrics.LabelNodePool})
	nodesDrained = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace, Subsystem: "nodes", Name: "drained_total",
		Help: "Nodes drained of all drainable pods, by NodePool.",
	}, []string{metrics.LabelNodePool})
	podsDrained = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace, Subsystem: "pods", Name: "drained_total",
		Help: "Pods evicted or deleted by a drain, by the node's disruption reason (Forceful Termination when no disruption method chose the node).",
	}, []string{metrics.LabelReason})
	evictionRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace, Subsystem: "pods", Name: "eviction_requests_total",
		Help: "Eviction API requests, by HTTP status code.",
	}, []string{"code"})
	instanceTerminationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: metrics.Namespace, Subsystem: "nodeclaims", Name: "instance_termination_duration_seconds",
		Help:    "Time from the first instance termination call to the instance being gone, by NodePool.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 11),
	}, []string{metrics.LabelNodePool})
	nodeClaimsTerminationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: metrics.Namespace, Subsystem: "nodeclaims", Name: "termination_duration_seconds",
		Help:    "Time from a NodeClaim's deletion to the release of its finalizer, by NodePool.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	}, []string{metrics.LabelNodePool})
	unmanagedInstances = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.JoistNamespace, Subsystem: "cloudprovider", Name: "unmanaged_instances_total",
		Help: "Releases of a NodeClaim or Node whose instance, tagged for the cluster and a NodePool but failing the ownership check, was left running, by NodePool.",
	}, []string{metrics.LabelNodePool})
)

func init() {
	crmetrics.Registry.MustRegister(nodesTerminationDuration, nodesLifetime, nodesDrained,
		podsDrained, evictionRequests, instanceTerminationDuration, nodeClaimsTerminationDuration, unmanagedInstances)
}

// DrainReason is the reason label of pods drained from the claim's node:
// the disruption reason a method set on it, else Forceful Termination.
func DrainReason(claim *v1.NodeClaim) string {
	if claim != nil {
		if c := nodeclaim.Get(claim, v1.ConditionTypeDisruptionReason); c != nil && c.Status == "True" {
			return c.Reason
		}
	}
	return ForcefulTermination
}
