package termination

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var durationBuckets = prometheus.ExponentialBuckets(1, 2, 14)

var (
	nodesTerminated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "nodes", Name: "terminated_total",
		Help: "Nodes whose termination finalizer was released, by NodePool.",
	}, []string{"nodepool"})
	nodesTerminationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "joist", Subsystem: "nodes", Name: "termination_duration_seconds",
		Help: "Time from a Node's deletion to the release of its finalizer, by NodePool.", Buckets: durationBuckets,
	}, []string{"nodepool"})
	nodesLifetime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "joist", Subsystem: "nodes", Name: "lifetime_duration_seconds",
		Help: "Time from a Node's creation to the release of its finalizer, by NodePool.", Buckets: durationBuckets,
	}, []string{"nodepool"})
	nodesDrained = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "nodes", Name: "drained_total",
		Help: "Nodes drained of all drainable pods, by NodePool.",
	}, []string{"nodepool"})
	podsDrained = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "pods", Name: "drained_total",
		Help: "Pods removed by a drain, by how: evicted, or deleted (grace period deadline, namespace being deleted).",
	}, []string{"reason"})
	evictionRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "pods", Name: "eviction_requests_total",
		Help: "Eviction API requests, by HTTP status code.",
	}, []string{"code"})
	instanceTerminationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "joist", Subsystem: "nodeclaims", Name: "instance_termination_duration_seconds",
		Help: "Time from the first instance termination call to the instance being gone, by NodePool.", Buckets: durationBuckets,
	}, []string{"nodepool"})
	nodeClaimsTerminationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "joist", Subsystem: "nodeclaims", Name: "termination_duration_seconds",
		Help: "Time from a NodeClaim's deletion to the release of its finalizer, by NodePool.", Buckets: durationBuckets,
	}, []string{"nodepool"})
)

func init() {
	crmetrics.Registry.MustRegister(nodesTerminated, nodesTerminationDuration, nodesLifetime, nodesDrained,
		podsDrained, evictionRequests, instanceTerminationDuration, nodeClaimsTerminationDuration)
}
