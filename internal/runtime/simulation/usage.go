package simulation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// ResourceNodes is the pseudo-resource limits.nodes counts.
const ResourceNodes corev1.ResourceName = "nodes"

// Usage is what each NodePool's claims take out of its limits: one node
// each plus their capacity. A claim that has not launched yet counts with
// the largest capacity among the instance types it may launch, so limits
// can never be overshot while launches are in flight.
func Usage(nodes []*state.StateNode, types map[string][]*scheduling.InstanceType) map[string]corev1.ResourceList {
	out := map[string]corev1.ResourceList{}
	for _, n := range nodes {
		if n.NodeClaim == nil {
			continue
		}
		pool := n.NodePool()
		if pool == "" {
			continue
		}
		u, ok := out[pool]
		if !ok {
			u = corev1.ResourceList{}
			out[pool] = u
		}
		capacity := n.NodeClaim.Status.Capacity
		if len(capacity) == 0 {
			capacity = maxCapacity(n.NodeClaim, types[pool])
		}
		add(u, capacity)
		add(u, corev1.ResourceList{ResourceNodes: resource.MustParse("1")})
	}
	return out
}

// maxCapacity is the per-resource maximum over the instance types the
// claim's requirements allow.
func maxCapacity(claim *v1.NodeClaim, types []*scheduling.InstanceType) corev1.ResourceList {
	allowed := instanceTypeRequirement(claim)
	out := corev1.ResourceList{}
	for _, it := range types {
		if allowed != nil && !allowed.Has(it.Name) {
			continue
		}
		for name, q := range it.Capacity {
			if cur, ok := out[name]; !ok || q.Cmp(cur) > 0 {
				out[name] = q.DeepCopy()
			}
		}
	}
	return out
}

func instanceTypeRequirement(claim *v1.NodeClaim) *requirements.Requirement {
	reqs, _ := claim.Spec.Requirements.Parse()
	if !reqs.Has(corev1.LabelInstanceTypeStable) {
		return nil
	}
	return reqs.Get(corev1.LabelInstanceTypeStable)
}

func add(dst, src corev1.ResourceList) {
	for name, q := range src {
		cur := dst[name]
		cur.Add(q)
		dst[name] = cur
	}
}
