package interruption

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
)

var (
	receivedMessages = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace, Subsystem: "interruption", Name: "received_messages_total",
		Help: "Messages received from the interruption queue, by message type.",
	}, []string{"message_type"})
	deletedMessages = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: metrics.Namespace, Subsystem: "interruption", Name: "deleted_messages_total",
		Help: "Messages deleted from the interruption queue.",
	})
	instanceStatusUnhealthy = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.Namespace, Subsystem: "interruption", Name: "instance_status_unhealthy_total",
		Help: "Unhealthy instance statuses found through EC2 DescribeInstanceStatus, each counted once, by status check category.",
	}, []string{"category"})
	messageQueueDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: metrics.Namespace, Subsystem: "interruption", Name: "message_queue_duration_seconds",
		Help:    "Time from an event's emission to its deletion from the queue.",
		Buckets: metrics.DurationBuckets(),
	})
	receiveErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metrics.JoistNamespace, Subsystem: "interruption", Name: "receive_errors_total",
		Help: "Failed receives from the interruption queue (finding the queue included), by AWS error code (client: no code).",
	}, []string{"code"})
	receiveFailing = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metrics.JoistNamespace, Subsystem: "interruption", Name: "receive_failing",
		Help: "1 while the last receive from the interruption queue failed, 0 once one succeeds.",
	})
)

func init() {
	crmetrics.Registry.MustRegister(receivedMessages, deletedMessages, messageQueueDuration, instanceStatusUnhealthy, receiveErrors, receiveFailing)
	// Every message type's series exists from the start, at zero.
	for _, k := range []Kind{SpotInterrupted, ScheduledChange, InstanceStopped, InstanceTerminated, CapacityReservationInterrupted, RebalanceRecommendation} {
		receivedMessages.WithLabelValues(string(k))
	}
}
