package provisioning

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/simulation"
)

// ExceededBy names the first resource (sorted) whose usage is over its
// limit, or "" when every limit holds.
func ExceededBy(limits v1.Limits, usage corev1.ResourceList) corev1.ResourceName {
	names := make([]string, 0, len(limits))
	for n := range limits {
		names = append(names, string(n))
	}
	sort.Strings(names)
	for _, n := range names {
		lim := limits[corev1.ResourceName(n)]
		if u, ok := usage[corev1.ResourceName(n)]; ok && u.Cmp(lim) > 0 {
			return corev1.ResourceName(n)
		}
	}
	return ""
}

// claimMaxCapacity is what a new claim may add to its pool's usage.
func claimMaxCapacity(nc *scheduling.NewClaim) corev1.ResourceList {
	out := corev1.ResourceList{simulation.ResourceNodes: resource.MustParse("1")}
	for _, o := range nc.InstanceTypes {
		for name, q := range o.Type.Capacity {
			if cur, ok := out[name]; !ok || q.Cmp(cur) > 0 {
				out[name] = q.DeepCopy()
			}
		}
	}
	return out
}

// limitError explains a claim that would break its pool's limits.
func limitError(pool string, name corev1.ResourceName, limits v1.Limits) error {
	lim := limits[name]
	return fmt.Errorf("nodepool %q would exceed its limit %s=%s; raise spec.limits or let other NodePools take the pods", pool, name, lim.String())
}
