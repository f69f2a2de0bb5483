package interruption

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	receivedMessages = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "interruption", Name: "received_messages_total",
		Help: "Messages received from the interruption queue, by message type.",
	}, []string{"message_type"})
	deletedMessages = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "interruption", Name: "deleted_messages_total",
		Help: "Messages deleted from the interruption queue.",
	})
	messageQueueDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "joist", Subsystem: "interruption", Name: "message_queue_duration_seconds",
		Help:    "Time from an event's emission to its deletion from the queue.",
		Buckets: prometheus.ExponentialBuckets(0.1, 2, 14),
	})
	disruptedNodeClaims = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "interruption", Name: "nodeclaims_disrupted_total",
		Help: "NodeClaims deleted because of an interruption message, by message type and NodePool.",
	}, []string{"message_type", "nodepool"})
)

func init() {
	crmetrics.Registry.MustRegister(receivedMessages, deletedMessages, messageQueueDuration, disruptedNodeClaims)
}
