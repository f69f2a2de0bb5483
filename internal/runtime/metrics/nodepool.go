package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

var (
	// NodePoolUsage is each NodePool's status.resources.
	NodePoolUsage = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "nodepools", Name: "usage",
		Help: "Resources the NodePool's nodes provide (status.resources), by resource type and NodePool; CPU in cores.",
	}, []string{LabelResourceType, LabelNodePool})
	// NodePoolLimit is each NodePool's spec.limits.
	NodePoolLimit = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "nodepools", Name: "limit",
		Help: "The NodePool's limits (spec.limits), by resource type and NodePool; CPU in cores.",
	}, []string{LabelResourceType, LabelNodePool})
)

func init() { crmetrics.Registry.MustRegister(NodePoolUsage, NodePoolLimit) }

// ResourceType is the resource_type label of a resource name: lower case,
// dashes as underscores (ephemeral-storage is ephemeral_storage).
func ResourceType(name corev1.ResourceName) string {
	return strings.ReplaceAll(strings.ToLower(string(name)), "-", "_")
}

// ResourceValue is a quantity as Karpenter's resource series report it:
// CPU in cores, everything else in its unit.
func ResourceValue(name corev1.ResourceName, q *resource.Quantity) float64 {
	if name == corev1.ResourceCPU {
		return float64(q.MilliValue()) / 1000
	}
	return float64(q.Value())
}

// ObserveNodePool sets the NodePool's usage and limit series (replacing
// those of resources it no longer has).
func ObserveNodePool(pool *v1.NodePool) {
	ForgetNodePool(pool.Name)
	for name, q := range pool.Status.Resources {
		NodePoolUsage.WithLabelValues(ResourceType(name), pool.Name).Set(ResourceValue(name, &q))
	}
	for name, q := range pool.Spec.Limits {
		NodePoolLimit.WithLabelValues(ResourceType(name), pool.Name).Set(ResourceValue(name, &q))
	}
}

// ForgetNodePool drops the series of a NodePool that is gone.
func ForgetNodePool(name string) {
	NodePoolUsage.DeletePartialMatch(prometheus.Labels{LabelNodePool: name})
	NodePoolLimit.DeletePartialMatch(prometheus.Labels{LabelNodePool: name})
}
